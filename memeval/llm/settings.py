"""The model settings of a run, built once from the CLI flags or a notebook's parameters and never changed after:
which backend, the model per role (answer, judge, extract, embed), the sampling mode, the spending cap, the output
format of memeval's own JSON requests and the user's price file for `--llm local` models. They are the one way
settings reach a client (memeval/llm/client.py `make_client`, `checked_client`, and `LLMClient` itself, whose
other arguments are wiring: backends, base URLs, the profile table, retry knobs): typed, so nothing travels as
loose keyword arguments."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memeval.llm.profiles import PriceTable


@dataclass(frozen=True)
class ModelSettings:
    backend: str = "auto"
    models: Mapping[str, str] = field(default_factory=dict)  # role → model id the user named (defaults: profiles)
    sampling: str = "protocol"
    budget_usd: float | None = None
    max_concurrency: int = 8  # calls in flight at once (the providers' rate-limit headers are waited on anyway)
    # --prices FILE: a path is read when the client is made, so its SHA-256 is that of the table used; a table
    # already read (commands/llm_options.py) is used as it is
    prices: str | os.PathLike | PriceTable | None = None
    response_format: str = "json_schema"  # --response-format: memeval's own JSON requests on OpenAI-compatible servers
    context_tokens: int | None = None  # --context-tokens: a user's server's window when it does not report it

    @classmethod
    def of(cls, config) -> ModelSettings:
        """From a run configuration declaring the LLM options every run takes (commands/llm_options.py)."""
        return cls(config.llm_backend, config.models, config.sampling, config.budget_usd, config.max_concurrency,
                   config.prices, config.response_format, context_tokens=config.context_tokens)

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", MappingProxyType({r: m for r, m in dict(self.models).items() if m}))
