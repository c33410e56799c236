"""A real OpenAI-compatible model server on this machine, for users without a GPU and for the tests: llama.cpp's
server (`llama-cpp-python[server]`, the `memeval[local]` extra) started through memeval.llm.local_launch, serving
one of memeval.llm.local_models' shipped models (SmolLM2-135M-Instruct by default) or any GGUF file.

It owns its port: a port already answering is refused before anything starts, and the server counts as started
only when `GET /props` names this process's child and this model, so another server on the port is never taken
for ours. With a GPU, vLLM or Ollama behind `--llm local` are the documented route.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from memeval.errors import InputError
from memeval.llm.local_models import DEFAULT_MODEL, LOCAL_INSTALL, choose_context, resolve

MODEL_ID = DEFAULT_MODEL  # the id `memeval serve-local` answers to by default
EMBED_BATCH = 2048  # tokens an embedding input may hold on the local server
STOP_WAIT_S = 2.0  # after SIGTERM, how long the child may finish before it is killed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str, timeout: float = 2.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - 127.0.0.1 only
        return json.loads(response.read())


def who_answers(port: int) -> str | None:
    """None when nothing listens on 127.0.0.1:`port`; else who does, by the model ids of its /v1/models."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
    except OSError:
        return None
    try:
        listed = _get_json(f"http://127.0.0.1:{port}/v1/models")
        ids = [str(m.get("id")) for m in listed.get("data", []) if isinstance(m, dict)]
    except (OSError, ValueError, AttributeError):
        ids = []
    return f"a server serving {', '.join(ids)}" if ids else ("a program that listed no models at /v1/models within a few seconds (a busy single-slot server, memeval's "
                 "own included, answers nothing while it generates)")


class LocalServer:
    """`with LocalServer() as server:` — llama.cpp's OpenAI-compatible server on 127.0.0.1 at `server.base_url`,
    stopped on exit (SIGTERM, then SIGKILL after STOP_WAIT_S: a generation in progress does not hold it up).
    `n_ctx` bounds prompt plus reply; None picks the model's trained length within memory. 2 threads match this
    machine.

    One server answers chat completions and embeddings: `--embedding true` with mean pooling for a file that states
    none (`--kv_overrides <arch>.pooling_type=int:1`; else the server would return one vector per token) and
    n_batch = n_ubatch = min(n_ctx, 2,048) (llama-cpp-python's `embed` keeps only the first n_batch tokens of an
    input). `--logits_all false`: the server's default keeps every prompt token's logits, n_ctx x vocabulary x 4
    bytes — 12.9 GB for Gemma at n_ctx 12,288; memeval asks for no logprobs."""

    def __init__(self, model: str = DEFAULT_MODEL, port: int | None = None, n_ctx: int | None = None,
                 threads: int = 2, log: Path | None = None, startup_timeout_s: float = 180.0, embeddings: bool = True,
                 alias: str | None = None, chat_format: str | None = None):
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise InputError("llama-cpp-python", "package", f"not installed: {LOCAL_INSTALL}") from None
        self.model = resolve(model, alias, chat_format)
        self.n_ctx, self.n_ctx_reason = choose_context(self.model, n_ctx)
        self.port = port or free_port()
        self.threads, self.log, self.startup_timeout_s = threads, log, startup_timeout_s
        self.embeddings = embeddings
        self.process: subprocess.Popen | None = None
        self.props: dict | None = None
        self._out = None

    @property
    def model_id(self) -> str:
        return self.model.id

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def command(self) -> list[str]:
        model = self.model
        command = [sys.executable, "-m", "memeval.llm.local_launch", "--model", str(model.path), "--model_alias",
                   model.id, "--model_sha256", model.sha256, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch",
                   str(self.threads), "--logits_all", "false"]
        if model.chat_format:
            command += ["--chat_format", model.chat_format]
        if self.embeddings:
            batch = str(min(self.n_ctx, EMBED_BATCH))
            command += ["--embedding", "true", "--n_batch", batch, "--n_ubatch", batch]
            if model.pooling_override:
                command += ["--kv_overrides", model.pooling_override]
        return command

    def refuse_busy_port(self) -> None:
        taken = who_answers(self.port)
        if taken is not None:
            raise InputError("--port", str(self.port), f"already in use on 127.0.0.1 by {taken}; stop it or choose "
                             "another --port")

    def _ours(self) -> dict | None:
        """The child's /props, when the answer on the port is this child serving this model."""
        try:
            props = _get_json(self.root_url + "/props")
        except (OSError, ValueError):
            return None
        if isinstance(props, dict) and props.get("pid") == self.process.pid and \
                props.get("model_alias") == self.model.id:
            return props
        return None

    def _last_line(self) -> str:
        """The child's last words (a traceback's last line, uvicorn's bind error)."""
        try:
            self._out.flush()
            with open(self._out.fileno(), "rb", closefd=False) as log:
                log.seek(max(0, log.seek(0, 2) - 4096))
                lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        except OSError:
            return "no output"
        return lines[-1][:300] if lines else "no output"

    def __enter__(self) -> LocalServer:
        self.refuse_busy_port()
        self._out = open(self.log, "ab") if self.log else tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.process = subprocess.Popen(self.command(), stdout=self._out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + self.startup_timeout_s
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"llama.cpp server exited with {self.process.returncode} before answering: "
                                       f"{self._last_line()}" + (f" (log: {self.log})" if self.log else ""))
                self.props = self._ours()
                if self.props is not None:
                    return self
                time.sleep(0.25)
            raise RuntimeError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f} s")
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._out is not None:
            self._out.close()
            self._out = None
