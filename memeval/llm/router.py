"""The route stage: a request's role → the run's model, its profile (provider, API version, sampling actually
sent, structured output, thinking), the backend and base URL it goes to. Every request is resolved here before
anything else, a dry run's estimate too, so what is cached, estimated and sent is one resolved request. Each client
holds its own profile table (memeval/llm/profiles.py): the local models of `--llm local` belong to the client made
for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from memeval.errors import InputError
from memeval.llm import profiles
from memeval.llm.endpoints import OPENAI_BASE_URL
from memeval.llm.profiles import ProfileTable
from memeval.llm.types import ANTHROPIC_DEFAULT_BASE_URL, LLMRequest
from memeval.llm.wire import RESPONSE_FORMATS

# A request that sets no output cap (Mem0's judge sets none) still needs one on Anthropic: `max_tokens` is a
# required body parameter of the Messages API (platform.claude.com/docs/en/api/messages, "max_tokens ... required";
# anthropic SDK 2.x `messages.create(max_tokens: int, ...)` has no default). OpenAI's is optional.
ANTHROPIC_REQUIRED_MAX_TOKENS = 1024
# A user's own server (--llm local) may never stop a reply a protocol leaves uncapped (llama.cpp generates to the
# end of its context window without one), so it gets a cap too; such a run is never the published protocol anyway.
LOCAL_UNCAPPED_MAX_TOKENS = 256


class Router:
    def __init__(self, backend, backends: Mapping[str, object], models: Mapping[str, str], require_named_roles: bool,
                 endpoints: Mapping[str, str], anthropic_endpoint: str, profile_table: ProfileTable, sampling: str,
                 response_format: str):
        if sampling not in profiles.SAMPLING_MODES:
            raise ValueError(f"sampling must be one of {profiles.SAMPLING_MODES}")
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {RESPONSE_FORMATS}")
        # what memeval's own JSON-reading requests ask an OpenAI-compatible provider for (--response-format)
        self.response_format = response_format
        self.backend = backend  # the Anthropic one, and every provider's unless `backends` names its own
        self.backends = dict(backends)
        self.require_named_roles = require_named_roles  # --llm local: no default model exists for a role
        # the profiles every request of this client resolves against: the cloud models, plus the models of a local
        # server under --llm local (fixed here; another client in the process never sees them)
        self.profile_table = profile_table
        # base URL per OpenAI-compatible provider, read once: it is part of every such request's cache key
        self.endpoints = dict(endpoints)
        self.anthropic_endpoint = anthropic_endpoint  # read once, like the backend's; part of non-default keys
        self.sampling = sampling
        self.models = {role: model for role, model in models.items() if model}
        for role, model in self.models.items():
            self.profile(model, profiles.ROLE_FLAGS.get(role, role))

    def profile(self, model: str, source: str = "model") -> profiles.ModelProfile:
        """The profile `model` resolves to for this client (an unknown id is an input error naming `source`)."""
        return self.profile_table.profile(model, source)

    def sent_temperature(self, model: str, temperature: float | None) -> float | None:
        """What this client sends as `model`'s temperature, given the protocol's and its sampling mode."""
        return self.profile_table.sent_temperature(model, temperature, self.sampling)

    @property
    def backend_name(self) -> str:
        names = [getattr(b, "name", type(b).__name__) for b in (self.backend, *self.backends.values())]
        live = sorted({n for n in names if n != "replay"})
        return "+".join(live) if live else "replay"

    def backend_for(self, provider: str):
        return self.backends.get(provider, self.backend)

    def endpoint(self, provider: str) -> str | None:
        """The base URL `provider`'s requests go to (None: this client knows no endpoint for it)."""
        return self.anthropic_endpoint if provider == "anthropic" else self.endpoints.get(provider)

    def endpoint_is_default(self, provider: str) -> bool:
        """Whether `provider`'s requests go to its public default (Anthropic's or OpenAI's own API); a local
        server has none."""
        default = {"anthropic": ANTHROPIC_DEFAULT_BASE_URL, "openai": OPENAI_BASE_URL}.get(provider)
        return default is not None and (self.endpoint(provider) or default).rstrip("/") == default

    def model_for(self, role: str, protocol_model: str = "") -> str:
        """The run's model for `role`: the one the user named, else the model a request's protocol pins for the role
        (`protocol_model`), else the role's default; under --llm local only a named one."""
        model = self.models.get(role)
        if model:
            return model
        if role not in profiles.ROLE_DEFAULTS and (self.require_named_roles or not protocol_model):
            raise ValueError(f"no model for role {role!r}: none was named and it has no default (the roles: "
                             f"{', '.join(profiles.ROLE_DEFAULTS)})")
        if self.require_named_roles:
            raise InputError(profiles.ROLE_FLAGS.get(role, role), "(not given)",
                             "with --llm local every role used needs its model named (the server's model id)")
        return protocol_model or profiles.ROLE_DEFAULTS[role]

    def check_roles(self, temperatures: Mapping[str, float | None]) -> None:
        """Before any call: every role this command will use can honour its protocol temperature."""
        for role, temperature in temperatures.items():
            flag = profiles.ROLE_FLAGS.get(role, role)
            profiles.check_role_kind(role, self.profile(self.model_for(role), flag))
            self.profile_table.check_sampling(self.model_for(role), temperature, self.sampling, flag)

    def resolve(self, request: LLMRequest) -> LLMRequest:
        """The request as it will be sent: the run's model for its role, the profile's API version, the
        temperature actually sent, structured output only where the model supports it (on an OpenAI-compatible
        provider in the form --response-format names, none dropping the schema), and the profile's thinking
        settings: a thinking model keeps the protocol's answer cap and gets its thinking reserve on top (thinking
        counts toward max_tokens). A thinking type the model rejects, and a cap above the most tokens the model writes
        a reply, are refused here, before any call (a dry run's estimate resolves too)."""
        if not (request.model or request.role):
            raise ValueError("a request names its model or its role")
        model = self.model_for(request.role, request.model) if request.role else request.model
        source = profiles.ROLE_FLAGS.get(request.role, "model")
        p = self.profile(model, source)
        if p.embedding:
            raise InputError(source, model, "an embeddings model, not a chat model (embeddings: --embed-model)")
        other = p.provider != "anthropic"
        max_tokens = request.max_tokens
        if max_tokens is None and p.provider != "openai":
            max_tokens = ANTHROPIC_REQUIRED_MAX_TOKENS if not other else LOCAL_UNCAPPED_MAX_TOKENS
        thinking = request.thinking or p.thinking_sent
        refusal = p.thinking_refusal(thinking)
        if refusal:
            raise InputError(source, model, refusal)
        reserve = p.thinking_tokens if p.thinks(thinking) else 0
        too_many = p.output_refusal(None if max_tokens is None else max_tokens + reserve, request.max_tokens_from,
                                    reserve)
        if too_many:
            raise InputError(source, model, too_many)
        if not other and (request.top_p is not None or request.response_format):
            raise ValueError(f"{model}: top_p and response_format are OpenAI-compatible wire fields; an Anthropic "
                             "request carries neither")
        temperature = self.sent_temperature(model, request.temperature)
        output_schema, json_format = (request.output_schema if p.structured_outputs else ""), ""
        if output_schema and other:  # a published protocol's own format stays; memeval's own follow the flag
            json_format = request.json_format or self.response_format
            if json_format == "none":
                output_schema, json_format = "", ""
        return dataclasses.replace(
            request, model=model, api_version=p.api_version, provider=p.provider, max_tokens=max_tokens,
            top_p=request.top_p if temperature is not None else None,  # a model that takes no sampling takes neither
            endpoint=self.endpoints.get(p.provider, "") if other else self.anthropic_endpoint,
            cache_prefix_chars=0 if other else request.cache_prefix_chars,  # OpenAI caches prefixes by itself
            temperature=temperature,
            output_schema=output_schema, json_format=json_format,
            thinking=thinking, effort=p.effort, thinking_tokens=p.thinking_tokens if p.thinks(thinking) else 0)
