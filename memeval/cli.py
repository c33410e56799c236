"""The `memeval` command: everything a notebook does is reachable from here."""

from __future__ import annotations

import argparse
import sys

from memeval.commands import (
    data,
    doctor,
    graph80,
    inventory,
    locomo,
    longmemeval,
    memaudit,
    natural,
    publish,
    reproduce,
    results,
    score,
    serve,
    view,
)
from memeval.errors import DataNotFoundError, InputError, NotebookFailed
from memeval.llm.errors import APIRejected, BackendNotConfigured, LLMError, ModelRetired

COMMAND_MODULES = [doctor, data, score, locomo, longmemeval, memaudit, natural, graph80, results, view, publish,
                   reproduce, inventory, serve]

EXAMPLES = """example:
  memeval locomo run --conversations conv-26 --questions prototype --out runs/prototype
  memeval view runs/prototype --output prototype.html
  (`memeval COMMAND --help` shows each command's flags and an example)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memeval", description=__doc__, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"memeval {_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
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

    argv = sys.argv[1:] if argv is None else list(argv)
    set_cli_argv(argv)
    try:
        return _dispatch(build_parser().parse_args(argv))
    finally:
        set_cli_argv(None)


def _dispatch(args: argparse.Namespace) -> int:
    from memeval.errors import PluginFailed

    try:
        if getattr(args, "output", None) is not None:  # every --output FILE, checked before any work is done
            from memeval.output_paths import resolve

            resolve(args.output)
        return int(args.handler(args) or 0)
    except (InputError, DataNotFoundError) as exc:
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 2
    except PluginFailed as exc:  # --fail-fast: the first plug-in failure stops the run (rows so far are kept)
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 1
    except APIRejected as exc:
        print(f"memeval: error: {exc.one_line()}", file=sys.stderr)
        return 1
    except ModelRetired as exc:
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 2
    except BackendNotConfigured as exc:  # no key, endpoint or SDK: fixed by the user's setup, before any call
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 2
    except LLMError as exc:  # a failure no row could absorb (a batch that never finished, say); rerun resumes
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 1
    except NotebookFailed as exc:
        print(f"memeval: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memeval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `memeval ... | head`: the reader left; no traceback, the shell's usual code
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # the machine, not the code: a read-only or full disk, a file gone or locked
        line, code = _os_error(exc)
        print(f"memeval: error: {line}", file=sys.stderr)
        return code


def _os_error(exc: OSError) -> tuple[str, int]:
    """One line naming the path and what the system said, and the exit code: 2 when the place cannot be written
    (read-only, no permission: choose another --out), 1 otherwise (a full disk: free space, rerun to resume)."""
    import errno

    path = exc.filename if exc.filename is not None else "(no file named)"
    what = " ".join((exc.strerror or str(exc) or type(exc).__name__).split())
    code = errno.errorcode.get(exc.errno or 0)
    text = f"{path}: {what}" + (f" ({code})" if code else "")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return text + "; it cannot be written here: use another --out or fix its permissions", 2
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return text + "; free space and rerun (finished rows are kept and a rerun resumes)", 1
    return text, 1


if __name__ == "__main__":
    sys.exit(main())
