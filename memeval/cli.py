"""The `memeval` command: everything a notebook does is reachable from here."""

from __future__ import annotations

import argparse
import sys

from memeval.commands import (
    data,
    doctor,
    inventory,
    memaudit,
    natural,
    publish,
    reproduce,
    results,
    score,
    serve,
    view,
)
from memeval.errors import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    DataNotFoundError,
    InputError,
    NotebookFailed,
    Terminated,
)
from memeval.llm.errors import APIRejected, BackendNotConfigured, LLMError, ModelRetired

# The shared commands; each benchmark's command comes from its declaration (memeval/benchmarks/), after `score`,
# then the further commands the declarations name (`Benchmark.commands`: LoCoMo's `judge`).
BEFORE_BENCHMARKS = [doctor, data, score]
AFTER_BENCHMARKS = [memaudit, natural, results, view, publish, reproduce, inventory, serve]


def command_modules() -> list:
    from importlib import import_module

    from memeval.benchmarks import declarations

    benchmarks = declarations()
    return [*BEFORE_BENCHMARKS, *(import_module(b.command) for b in benchmarks),
            *(import_module(c) for b in benchmarks for c in b.commands), *AFTER_BENCHMARKS]

EXAMPLES = """example:
  memeval locomo run --conversations conv-26 --questions prototype --out runs/prototype
  memeval view runs/prototype --output prototype.html
  (`memeval COMMAND --help` shows each command's flags and an example)"""


class Parser(argparse.ArgumentParser):
    """Flags are spelled whole (argparse would take `--data` for `data stats --dataset` and `--rest` for
    `--restart`), and a bad flag is one line naming the command and what is wrong, not the usage block first
    (`--help` shows it). Every subcommand's parser is of this class (argparse makes them from the parent's)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        from memeval.safe_text import shown

        self.exit(2, f"{self.prog}: error: {shown(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="memeval", description=__doc__, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"memeval {_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in command_modules():
        module.register(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memeval")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    from memeval.invocation import set_cli_argv

    process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    set_cli_argv(argv)
    if process:
        import signal

        signal.signal(signal.SIGTERM, _terminate)
    try:
        code = _dispatch(build_parser().parse_args(argv))
    finally:
        set_cli_argv(None)
    if process and code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        _leave_now(code)
    return code


def _terminate(signum, frame) -> None:
    raise Terminated


def _leave_now(code: int) -> None:
    """After Ctrl-C or SIGTERM the run has released its lock and said so; calls still in flight on worker threads
    would hold the interpreter's exit until their read timeouts ran out (minutes), so the process ends here."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dispatch(args: argparse.Namespace) -> int:
    from memeval.errors import PluginFailed

    try:
        if getattr(args, "output", None) is not None:  # every --output FILE, checked before any work is done
            from memeval.output_paths import resolve

            resolve(args.output)
        if isinstance(getattr(args, "out", None), str):  # every --out DIR, likewise
            _check_out_dir(args.out, restart=bool(getattr(args, "restart", False)))
        return int(args.handler(args) or 0)
    except (InputError, DataNotFoundError) as exc:
        _error(exc)
        return 2
    except PluginFailed as exc:  # --fail-fast: the first plug-in failure stops the run (rows so far are kept)
        _error(exc)
        return 1
    except APIRejected as exc:
        _error(exc.one_line())
        return 1
    except ModelRetired as exc:
        _error(exc)
        return 2
    except BackendNotConfigured as exc:  # no key, endpoint or SDK: fixed by the user's setup, before any call
        _error(exc)
        return 2
    except LLMError as exc:  # a failure no row could absorb (a batch that never finished, say); rerun resumes
        _error(exc)
        return 1
    except NotebookFailed as exc:
        _error(exc)
        return 1
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        if isinstance(exc, Terminated):
            print("memeval: terminated (SIGTERM)", file=sys.stderr)
            return EXIT_TERMINATED
        print("memeval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `memeval ... | head`: the reader left; no traceback, the shell's usual code
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # the machine, not the code: a read-only or full disk, a file gone or locked
        line, code = _os_error(exc)
        _error(line)
        return code


def _error(message: object) -> None:
    """The one line of an error; what it quotes from data (a manifest, a file name) shows its control characters
    as escapes, never as commands to the terminal."""
    from memeval.safe_text import shown

    print(f"memeval: error: {shown(message)}", file=sys.stderr)


def _check_out_dir(out: str, restart: bool = False) -> None:
    """`--out DIR` names a directory or nothing yet: a file there, or on the way there, is bad input (exit 2)
    refused before any work, not mkdir's EEXIST or ENOTDIR after it. An empty name is refused (it would be the
    current directory, where a run's files would land among the user's), and `--restart` never moves the
    directory the command runs in, or one above it."""
    import os
    from pathlib import Path

    if not out.strip():
        raise InputError("(empty)", "--out", "names no directory; name the directory the command writes into")
    path = Path(out)
    if restart:
        here, target = os.path.realpath(os.getcwd()), os.path.realpath(out)
        if here == target or here.startswith(target.rstrip("/") + "/"):
            raise InputError(out, "--restart", "would move the directory this command runs in (or one above "
                             "it) aside; name a directory below it, or run from elsewhere")
    for place in (path, *path.parents):
        if place.is_dir():
            return
        if place.exists() or place.is_symlink():
            what = "a file" if place.is_file() else "not a directory"
            raise InputError(out, "--out", f"{place} is {what}; --out names the directory the command writes "
                             "into (one file is --output FILE where a command writes one)")


def _os_error(exc: OSError) -> tuple[str, int]:
    """One line naming the path and what the system said, and the exit code: 2 when the place cannot be written
    (read-only, no permission: choose another --out) or the path cannot be used (a file where a directory must be),
    1 otherwise (a full disk: free space, rerun to resume)."""
    import errno

    path = exc.filename if exc.filename is not None else "(no file named)"
    what = " ".join((exc.strerror or str(exc) or type(exc).__name__).split())
    code = errno.errorcode.get(exc.errno or 0)
    text = f"{path}: {what}" + (f" ({code})" if code else "")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return text + "; it cannot be written here: use another --out or fix its permissions", 2
    if exc.errno in (errno.EEXIST, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG, errno.ELOOP):
        return text + "; the path given cannot be used as it is: name another", 2
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return text + "; free space and rerun (finished rows are kept and a rerun resumes)", 1
    return text, 1


if __name__ == "__main__":
    sys.exit(main())
