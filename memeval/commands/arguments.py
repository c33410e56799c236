"""The arguments several commands share, defined once so a flag means the same thing everywhere:
`--out DIR` is always a directory a command writes into, `--output FILE` always one file, `--data` always an
input, `--no-progress` turns off the bars of every long command, `--seed N` is one seed and `--n-seeds N` a
count. Older spellings (`--out FILE`, `--seeds N`, `--quiet`) stay accepted.

Nothing heavy is imported here: `memeval --help` builds every parser.
"""

from __future__ import annotations

import argparse


def command(subparsers: argparse._SubParsersAction, name: str, help_text: str, example: str,
            **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with a worked example. The one-line help goes through argparse's
    %-formatting (a literal "95%" would crash `memeval --help`); the description and epilog do not."""
    return subparsers.add_parser(name, help=help_text.replace("%", "%%"), description=help_text,
                                 epilog=f"example:\n  {example}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


def floats(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("no budgets given")
    return values


def names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def split_systems(spec: str) -> list[str]:
    """`a,b` or, when parameters contain commas, `a:x=1,y=2;b`."""
    if ";" in spec:
        return [s.strip() for s in spec.split(";") if s.strip()]
    return [s.strip() for s in spec.split(",") if s.strip()]


def add_out_dir(parser: argparse.ArgumentParser, help_text: str, required: bool = True, **kwargs) -> None:
    parser.add_argument("--out", required=required, metavar="DIR", help=help_text, **kwargs)


def add_output_file(parser: argparse.ArgumentParser, help_text: str, required: bool = True) -> None:
    parser.add_argument("--output", "--out", dest="output", required=required, metavar="FILE",
                        help=help_text + " (--out: older spelling)")


def add_data(parser: argparse.ArgumentParser, help_text: str, required: bool = False) -> None:
    parser.add_argument("--data", required=required, help=help_text)


def add_progress(parser: argparse.ArgumentParser, old_quiet: bool = False) -> None:
    flags = ["--no-progress", "--quiet"] if old_quiet else ["--no-progress"]
    parser.add_argument(*flags, dest="no_progress", action="store_true",
                        help="no progress bars" + (" (--quiet: older spelling)" if old_quiet else ""))


def add_budgets(parser: argparse.ArgumentParser, required: bool = True, default: str | None = None) -> None:
    parser.add_argument("--budgets", type=floats, required=required,
                        default=floats(default) if default else None,
                        help="comma-separated budgets in the packages' cost unit" +
                             (f" (default {default})" if default else ""))


def add_systems(parser: argparse.ArgumentParser, default: str, example: str) -> None:
    parser.add_argument("--systems", default=default,
                        help=f"comma-separated memory systems; parameters as name:key=value (e.g. {example}); "
                             "separate systems with ';' when a parameter list has commas")


def add_n_seeds(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--n-seeds", "--seeds", dest="n_seeds", type=int, default=default,
                        help=f"how many seeds (default {default}; --seeds: older spelling)")
    parser.add_argument("--seed-start", type=int, default=0, help="the first seed (default 0)")


def add_restart(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--restart", action="store_true",
                        help="move what --out holds aside to DIR.replaced-<UTC time> (never deleted) and start "
                             "afresh; without it a directory holding another configuration is refused")


def finish(closing_line: str | None) -> int:
    """The exit code of a run: 0 when complete; otherwise the closing line, last on the terminal, and 4."""
    import sys

    from memeval.errors import EXIT_INCOMPLETE, EXIT_OK

    if not closing_line:
        return EXIT_OK
    print(f"memeval: {closing_line}", file=sys.stderr)
    return EXIT_INCOMPLETE
