"""`--prices FILE`: the user's own prices for models served behind `--llm local` (an OpenRouter id such as
`anthropic/claude-sonnet-4.6`, an Azure deployment name, a vLLM model), which memeval cannot know and otherwise
prices at $0 — so that `--budget-usd` stops a paid gateway run and `--dry-run` prices it.

The file is one JSON object, model id → USD per million tokens:

    {"anthropic/claude-sonnet-4.6": {"input_usd_mtok": 3, "output_usd_mtok": 15, "cached_input_usd_mtok": 0.3}}

`input_usd_mtok` and `output_usd_mtok` are required; `cached_input_usd_mtok` (prompt tokens the server reports as
cached) defaults to the input price, so a missing discount never makes an estimate low. Anything else is refused
with one line naming the file and the field: unknown fields, a model id given twice, a price that is not a finite
number ≥ 0, and a known cloud model (those are priced from the sourced table in memeval/llm/profiles.py, never from
a user file). The table is immutable; its path and SHA-256 go into every profile it prices, hence the manifest.
Its records (`PriceTable`, `ModelPrice`) are model facts and live with the profiles (memeval/llm/profiles.py);
this module reads and checks the file.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from memeval.errors import InputError
from memeval.llm.profiles import PROFILES, ModelPrice, PriceTable
from memeval.safe_json import decode_utf8, parse_json

__all__ = ["ModelPrice", "PriceTable", "load_prices", "require_local"]

MAX_BYTES = 1 << 20  # a price table is a few lines; this bounds what a wrong path (a log, a device) can cost
MAX_MODEL_ID = 256
REQUIRED = ("input_usd_mtok", "output_usd_mtok")
OPTIONAL = ("cached_input_usd_mtok",)


def load_prices(path: str | Path) -> PriceTable:
    """The price table in `path`, every row checked; an InputError naming the file and field otherwise."""
    source = f"--prices {path}"
    data = _read(Path(path), source)
    text = decode_utf8(data, source)
    parse_json(text, source, "file")  # encoding, nesting, huge integers, syntax: the checks every loader makes
    try:
        table = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise InputError(source, _field(exc.key), "given twice; each model id once") from None
    if not isinstance(table, dict) or not table:
        raise InputError(source, "file", "expected a JSON object of model id → {\"input_usd_mtok\": …, "
                         "\"output_usd_mtok\": …}, with at least one model")
    rows = tuple((_model_id(model, source), _row(model, row, source)) for model, row in table.items())
    return PriceTable(str(Path(path).resolve()), hashlib.sha256(data).hexdigest(), rows)


def require_local(prices: PriceTable | None, backend: str) -> None:
    """A price file prices the models of `--llm local` only: under any other backend it would price nothing."""
    if prices is not None and backend != "local":
        raise InputError(f"--prices {prices.path}", f"--llm {backend}", "prices the models of --llm local only "
                         "(cloud models are priced from memeval/llm/profiles.py)")


def _read(path: Path, source: str) -> bytes:
    try:
        if not path.is_file():
            raise InputError(source, "file", "not a regular file" if path.exists() else "no such file")
        if path.stat().st_size > MAX_BYTES:
            raise InputError(source, "file", f"{path.stat().st_size:,} bytes; a price table is at most "
                             f"{MAX_BYTES:,}")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(source, "file", f"cannot be read ({exc.strerror or type(exc).__name__})") from None


class _Duplicate(Exception):
    def __init__(self, key: str):
        self.key = key


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


def _field(model: str, name: str | None = None) -> str:
    shown = json.dumps(model[:80], ensure_ascii=True) + ("…" if len(model) > 80 else "")
    return shown if name is None else f"{shown}.{name}"


def _model_id(model: str, source: str) -> str:
    if not model.strip() or model != model.strip() or len(model) > MAX_MODEL_ID \
            or any(not c.isprintable() for c in model):
        raise InputError(source, _field(model), f"not a model id (printable, no surrounding spaces, at most "
                         f"{MAX_MODEL_ID} characters)")
    if model in PROFILES:
        raise InputError(source, _field(model), "a known cloud model: its price comes from the sourced table in "
                         "memeval/llm/profiles.py, not from --prices (which prices --llm local models)")
    return model


def _row(model: str, row: object, source: str) -> ModelPrice:
    if not isinstance(row, dict):
        raise InputError(source, _field(model), "expected an object {\"input_usd_mtok\": …, \"output_usd_mtok\": …}")
    unknown = sorted(set(row) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise InputError(source, _field(model, unknown[0]), "unknown field; the fields are "
                         + ", ".join(REQUIRED + OPTIONAL) + " (USD per million tokens)")
    for name in REQUIRED:
        if name not in row:
            raise InputError(source, _field(model, name), "missing (USD per million tokens)")
    values = {name: _usd(model, name, row[name], source) for name in (*REQUIRED, *OPTIONAL) if name in row}
    return ModelPrice(values["input_usd_mtok"], values["output_usd_mtok"],
                      values.get("cached_input_usd_mtok", values["input_usd_mtok"]))


def _usd(model: str, name: str, value: object, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, _field(model, name), f"{json.dumps(value)[:40]} is not a number (USD per million "
                         "tokens)")
    if not math.isfinite(value) or value < 0:
        raise InputError(source, _field(model, name), f"{value} is not a finite price ≥ 0")
    return float(value)
