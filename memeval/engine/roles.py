"""The model settings of a run, built once from the CLI flags or a notebook's parameters and never changed after:
which backend, the model per role (answer, judge, extract, embed), the sampling mode, the spending cap and the user's
price file for `--llm local` models. The run's client is made from them, checked against the roles the task calls
before any call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class ModelSettings:
    backend: str = "auto"
    models: Mapping[str, str] = field(default_factory=dict)  # role → model id the user named (defaults: profiles)
    sampling: str = "protocol"
    budget_usd: float | None = None
    max_concurrency: int = 8  # calls in flight at once (the providers' rate-limit headers are waited on anyway)
    prices: str | None = None  # --prices FILE: read when the client is made, so its SHA-256 is that of the table used
    response_format: str = "json_schema"  # --response-format: memeval's own JSON requests on OpenAI-compatible servers
    context_tokens: int | None = None  # --context-tokens: a user's server's window when it does not report it

    @classmethod
    def of(cls, config) -> ModelSettings:
        """From a run configuration declaring the LLM options every run takes (commands/llm_options.py)."""
        return cls(config.llm_backend, config.models, config.sampling, config.budget_usd, config.max_concurrency,
                   config.prices, config.response_format, context_tokens=config.context_tokens)

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", MappingProxyType({r: m for r, m in dict(self.models).items() if m}))

    def client(self, temperatures: Mapping[str, float | None], client=None):
        """The run's client (None when no role calls a model and none was given), checked before any call: each
        role's model can honour its protocol's temperature, or `--sampling model-default` was chosen."""
        from memeval.llm.client import checked_client

        return checked_client(self.backend, temperatures, client, budget_usd=self.budget_usd,
                              sampling=self.sampling, models=dict(self.models), max_concurrency=self.max_concurrency,
                              prices=self.prices, response_format=self.response_format,
                              context_tokens=self.context_tokens)
