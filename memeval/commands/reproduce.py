"""`memeval reproduce`: every notebook on offline defaults into reports/, rendered to HTML."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from memeval.commands.arguments import OUT, PROGRESS, command
from memeval.settings import add_config_arguments, config_from, flag


@dataclass
class ReproduceConfig:
    """`memeval reproduce`'s settings; the manifest's command line is built from them (every directory always)."""

    notebooks: str = flag("--notebooks", "notebooks", path=True, always=True,
                          help="the directory of notebooks to run (default notebooks)")
    out: str = flag(OUT, "reports", path=True, always=True,
                    help="where executed notebooks, HTML and artifacts/ go (default reports)")
    figures: str = flag("--figures", "figures", path=True, always=True,
                        help="where notebooks write figures (they read MEMEVAL_FIGURES)")
    only: list[str] | None = flag("--only", None, nargs="*", help="notebook name prefixes, e.g. 00 03")
    judged: bool = flag("--judged", False, switch=True,
                        help="Claude reader and LLM judges (needs ANTHROPIC_API_KEY or a cache holding the calls)")
    quick: bool = flag("--quick", False, switch=True,
                       help="small parameters in every notebook: a smoke run of the whole pipeline in about a "
                            "minute (its numbers are not the published ones)")
    progress: bool = flag(PROGRESS, True)

    def command_line(self) -> list[str]:
        """This configuration as a `memeval reproduce` command (an empty --only selects every notebook, as none)."""
        from memeval.invocation import command_from

        return command_from(self, ["memeval", "reproduce"])


def register(subparsers: argparse._SubParsersAction) -> None:
    rep = command(subparsers, "reproduce", "execute the notebooks with papermill and render HTML",
                  "memeval reproduce --only 03 05 --out reports")
    add_config_arguments(rep, ReproduceConfig)
    rep.set_defaults(handler=_reproduce)


def _check_only(notebooks: str, only: list[str] | None) -> None:
    """A `--only` prefix no notebook has is a typo, refused before the output directory is made (it would run
    nothing and say so as a success)."""
    from pathlib import Path

    from memeval.errors import InputError

    names = sorted(p.stem for p in Path(notebooks).glob("[0-9]*.ipynb"))
    unmatched = [o for o in only or [] if not any(name.startswith(o) for name in names)]
    if unmatched:
        raise InputError(" ".join(unmatched), "--only", f"no notebook in {notebooks} starts with it; the notebooks: "
                         + (", ".join(names) or "none"))


def _reproduce(args: argparse.Namespace) -> int:
    import os
    import shlex
    from pathlib import Path

    from memeval.atomic import write_json_atomic
    from memeval.engine.directory import OWN, run_directory
    from memeval.notebook_runner import kernel_environment, reproduce

    _check_only(args.notebooks, args.only)
    if args.judged:
        print("judged configuration: Claude reader and judges (key or shared cache); offline steps are unchanged")
    locations = {"MEMEVAL_FIGURES": os.path.abspath(args.figures),
                 "MEMEVAL_ARTIFACTS": os.path.abspath(os.path.join(args.out, "artifacts"))}
    own = (*OWN, "reproduce_manifest.json", "artifacts", "figures", "[0-9]*.ipynb")  # what it and the notebooks write
    with run_directory(args.out, shlex.join(_command_line(args)), own=own) as held:  # one writer per --out
        with kernel_environment(locations):
            results = reproduce(args.notebooks, args.out, args.only, judged=args.judged,
                                progress=not args.no_progress, quick=args.quick)
        total = sum(r["seconds"] for r in results)
        manifest = write_json_atomic(Path(args.out) / "reproduce_manifest.json",
                                     held.new_manifest(command="reproduce", command_line=_command_line(args),
                                                       judged=args.judged, quick=args.quick, only=args.only,
                                                       notebooks=results, notebook_seconds=total))
    print(f"{len(results)} notebook(s) executed in {total:.1f} s; reports in {args.out}/ ({manifest.name})")
    headline = Path(args.figures) / "tab_headline.md"
    if headline.exists():
        print(f"headline results (the README's Results table): {headline}")
    return 0


def _command_line(args: argparse.Namespace) -> list[str]:
    return config_from(args, ReproduceConfig).command_line()
