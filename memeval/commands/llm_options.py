"""The LLM options every model-calling command takes, from one helper, so `locomo run`, `graph80 run`,
`natural audit-llm` and `natural build --with-graph` read the same flags the same way."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace

from memeval.commands.arguments import bounded, non_negative_finite_float
from memeval.errors import InputError
from memeval.llm.prices import PriceTable, load_prices, require_local
from memeval.llm.profiles import (
    CLOUD,
    EMBED_ROLE,
    EMBEDDING_PROFILES,
    PROFILES,
    ROLE_DEFAULTS,
    ROLE_FLAGS,
    SAMPLING_MODES,
    ProfileTable,
    check_role_kind,
    role_defaults,
)
from memeval.llm.wire import RESPONSE_FORMATS
from memeval.settings import Setting, add_config_arguments, add_setting, setting_fields


@dataclass
class LLMOptions:
    backend: str = "auto"
    sampling: str = "protocol"
    models: dict = field(default_factory=dict)  # role → model id, only those the user set
    budget_usd: float | None = None
    dry_run: bool = False
    max_concurrency: int = 8
    prices: PriceTable | None = None  # --prices FILE: the user's prices for the models of --llm local
    response_format: str = "json_schema"  # what memeval's own JSON-reading requests ask OpenAI-compatible servers for
    context_tokens: int | None = None  # --context-tokens: the server's window when it does not report it

    def model(self, role: str) -> str:
        model = self.models.get(role) or role_defaults(self.backend).get(role)
        if not model:
            raise InputError(ROLE_FLAGS[role], "(not given)",
                             "with --llm local every role used needs its model named (the server's model id)")
        return model

    @property
    def profile_table(self) -> ProfileTable:
        """The profiles these options' models resolve against: under `--llm local` the named models are the local
        server's (the client `make_llm_client` builds holds the same table), priced from `--prices` when given;
        otherwise the cloud profiles."""
        return ProfileTable.with_local(self.models.values(), self.prices) if self.backend == "local" else CLOUD

    def validate(self) -> None:
        require_local(self.prices, self.backend)
        table = self.profile_table
        for role, model in self.models.items():
            check_role_kind(role, table.profile(model, ROLE_FLAGS.get(role, f"--{role}-model")))


_KNOWN = ", ".join(sorted(PROFILES))
MODELS = Setting("--ROLE-model", help={
    **{role: f"{role} model (default {ROLE_DEFAULTS[role]}; known: {_KNOWN})" for role in ROLE_DEFAULTS},
    EMBED_ROLE: f"embeddings model of the systems that embed (rag_dense), through the same cache, budget and rate "
                f"limits (default {ROLE_DEFAULTS[EMBED_ROLE]}; known: {', '.join(sorted(EMBEDDING_PROFILES))}; under "
                "--llm local your server's model id, sent to its /v1/embeddings)"})
SAMPLING = Setting("--sampling", "protocol", choices=SAMPLING_MODES,
                   help="protocol (the default): send each protocol's temperature, refusing models that cannot take "
                        "it; model-default: send no temperature (said in the manifest and captions)")


def _backend_help(priced: str = "") -> str:
    """`--llm`'s help; `priced` is said only where the command also takes --prices (`add_llm_arguments`)."""
    return ("auto (the default): each provider live when its key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY), else answers only "
            "from the cache; anthropic/openai: that provider's key is required, and openai makes unnamed roles "
            "default to gpt-4o-mini; local: the named models on your OpenAI-compatible server at OPENAI_BASE_URL "
            f"(vLLM, Ollama, llama.cpp, a gateway such as OpenRouter or Azure){priced}; replay: the cache only")


BACKEND = Setting("--llm", "auto", choices=("auto", "anthropic", "openai", "local", "replay"), help=_backend_help())
RESPONSE_FORMAT = Setting(
    "--response-format", "json_schema", choices=RESPONSE_FORMATS,
    help="--llm openai/local: how memeval's own judges and extractors that read JSON ask for it — "
         "json_schema (the default): the reply schema, enforced by the server (OpenAI Structured Outputs, "
         "llama.cpp's and vLLM's grammars); json_object: any JSON object (JSON mode); none: the "
         "prompt alone. Published protocols keep their own (Mem0's judge json_object, "
         "LongMemEval's none). Part of the run's identity and of each request's cache key")
CONTEXT_TOKENS = Setting(
    "--context-tokens", None, type=bounded("--context-tokens"), metavar="N",
    help="--llm local (or openai with your own OPENAI_BASE_URL): the server's context window in "
         "tokens, for a server that does not report it (llama.cpp's GET /props and vLLM's "
         "max_model_len are read first); a request whose prompt plus reply cap exceeds it is not "
         "sent and its row says so (docs/context-needs.md)")
BUDGET_USD = Setting("--budget-usd", None, type=non_negative_finite_float,
                     help="stop scheduling new calls past this spend (dollars, finite, ≥ 0; default: no cap)")
PRICES = Setting("--prices", None, metavar="FILE",
                 help="--llm local: a JSON file pricing your server's or gateway's model ids, "
                      '{"MODEL": {"input_usd_mtok": 3, "output_usd_mtok": 15, "cached_input_usd_mtok": 0.3}} '
                      "(USD per million tokens; cached defaults to input), so --budget-usd and --dry-run "
                      "count dollars; cloud models keep their own prices")
MAX_CONCURRENCY = Setting("--max-concurrency", 8, type=bounded("--max-concurrency"),
                          help="model calls in flight at once (default 8); the provider's rate-limit headers are "
                               "waited on either way")
DRY_RUN = Setting("--dry-run", switch=True, rerun=False,
                  help="estimate the LLM calls, tokens and dollars still to spend; make no model call (with a key, "
                       "the token-counting endpoint counts the prompts) and write no run file (only the LLM "
                       "cache: its database and those counts)")
# after the role models, in the order `--help` lists them
SETTINGS = (SAMPLING, BACKEND, RESPONSE_FORMAT, CONTEXT_TOKENS, BUDGET_USD, PRICES, MAX_CONCURRENCY, DRY_RUN)
WITH_PRICES = {BACKEND.spelling: {"help": _backend_help(", priced $0 unless --prices prices them")}}


def add_llm_arguments(parser: argparse.ArgumentParser, roles=("answer", "judge", "extract", EMBED_ROLE),
                      config_class=None) -> None:
    """The LLM options; with `config_class`, those it declares as its own fields (their roles and defaults) and
    the others as declared here. --prices is always among them, so `--llm`'s help says what it prices."""
    fields = {f.metadata["setting"].spelling: f for f in setting_fields(config_class)} if config_class else {}
    for setting in (MODELS, *SETTINGS):
        priced = WITH_PRICES.get(setting.spelling, {})
        if setting.spelling in fields:
            declared = fields[setting.spelling]
            kept = declared.metadata["setting"].help == setting.help  # a help of the config's own is left alone
            add_config_arguments(parser, config_class, declared.name, adjust={declared.name: priced} if kept else {})
        elif setting is MODELS:
            add_setting(parser, MODELS, roles=roles)
        else:
            add_setting(parser, replace(setting, **priced), setting.default)


def add_run_arguments(parser: argparse.ArgumentParser, config_class, *names: str) -> None:
    """A QA run's arguments in the order every benchmark's `run --help` reads: its own settings (`names`), the LLM
    options, then --out, --restart, --fail-fast and --no-progress."""
    add_config_arguments(parser, config_class, *names)
    add_llm_arguments(parser, config_class=config_class)
    add_config_arguments(parser, config_class, "out", "restart", "fail_fast", "progress")


def llm_options(args: argparse.Namespace) -> LLMOptions:
    models = {role: getattr(args, f"{role}_model", None) for role in ROLE_DEFAULTS}
    options = LLMOptions(backend=args.llm, sampling=args.sampling,
                         models={r: m for r, m in models.items() if m}, budget_usd=args.budget_usd,
                         dry_run=args.dry_run, max_concurrency=getattr(args, "max_concurrency", 8),
                         prices=None if getattr(args, "prices", None) is None else load_prices(args.prices),
                         response_format=getattr(args, "response_format", "json_schema"),
                         context_tokens=getattr(args, "context_tokens", None))
    options.validate()
    return options


def make_llm_client(options: LLMOptions):
    from memeval.llm.client import make_client
    from memeval.llm.settings import ModelSettings

    return make_client(options.backend, settings=ModelSettings(
        options.backend, options.models, options.sampling, options.budget_usd, options.max_concurrency,
        options.prices, options.response_format, options.context_tokens))
