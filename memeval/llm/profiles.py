"""Model facts, in one module: for each model id this project may call, the API version to send, whether sampling
parameters are accepted under it, the prompt-cache floor, prices, structured-output support, thinking rules,
output caps and retirements — one table, so every request, estimate and manifest reads the same facts — and beside
it the tokenizer ratios of keyless estimates, each role's default model and a user's `--prices` table (its file is
read by memeval/llm/prices.py).

Sources (read 2026-12-03; check them again when a model or an SDK major changes):
- API versions: platform.claude.com/docs/en/api/versioning and /docs/en/api/migration-2026-10-21 — version
  2026-10-21 removes `temperature`, `top_p` and `top_k` from Messages, token counting and Message Batches
  requests (HTTP 400 "temperature: Extra inputs are not permitted", even at default values); 2023-06-01 stays
  listed with no retirement date. SDK 2.x (anthropic/_constants.py: ANTHROPIC_API_VERSION = "2026-10-21")
  sends the new version unless `extra_headers` / `default_headers` override it.
- Models 4.7 and later reject sampling parameters on every version ("`temperature` is deprecated for this
  model", invalid_request_error; e.g. github.com/Comfy-Org/ComfyUI/issues/13923, sipeed/picoclaw#2939); the
  Sonnet 5 page says non-default sampling values return 400.
- Prices and status: platform.claude.com/docs/en/models/<model>/overview (Opus 4.6 legacy: $5/$25; Sonnet 5.5:
  $2/$10, 5m cache write $2.50, read $0.20; Opus 5.5: $4/$20), pricing page (batch 50%, 5-minute cache write
  1.25x input, cache read 0.1x input).
- Cache floors: prompt-caching docs as quoted in anthropics/anthropic-sdk-python#1194 (4,096 Opus 4.6 and
  Haiku 4.5); Sonnet 4.6 is documented at 1,024 but observed to cache only from 2,048 (same issue; the
  orq.ai table says 2,048), so 2,048 is used: the estimate never counts a cache that would not form. Opus 4.7
  2,048 (dev.to "Claude's prompt cache fails silently below 1,024 tokens").
- Structured outputs (`output_config.format`): GA on Opus 4.6, Sonnet 4.6, Sonnet 4.5, Opus 4.5, Haiku 4.5
  (platform.claude.com/docs/es/build-with-claude/structured-outputs); Opus 4.7 per Vertex AI's list. Not
  claimed for the 5.5 models (no source read), so their judges keep the prompt-and-parse path.
- Thinking (read 2026-12-04). Thinking tokens count toward `max_tokens` and are billed as output tokens (SDK
  2.17 types/message_create_params.py `thinking`; types/usage.py: `output_tokens` "remains the inclusive,
  authoritative total used for billing"), so a thinking model given a protocol's 5–256-token cap returns empty
  text cut at max_tokens. Sonnet 5.5 thinks when `thinking` is omitted and accepts only `adaptive` and
  `between_tools`; `disabled` is a 400 pointing to `between_tools`, "the lowest thinking setting": no up-front
  thinking, and a request without tools gets text only; it works at effort low–high, not xhigh/max
  (platform.claude.com/docs/en/models/sonnet-5-5/migration-guide and /whats-new-sonnet-5-5). Opus 5.5 always
  thinks, "Adaptive (always on)", default effort medium (the Sonnet 5.5 overview's comparison table; effort
  page: "Claude Opus 5.5 and Claude Haiku 5.5 default to medium"); `disabled` and budgets are a 400 "at every
  effort level" (openrouter.ai/docs/cookbook/evaluate-and-optimize/model-migrations/claude-5-5; the message
  as reproduced in dev.to "Claude Opus 5.5 / Sonnet 5.5: 5 settings that return 400"), and
  `output_config.effort` is the control (platform.claude.com/docs/en/build-with-claude/effort: "Set
  output_config.effort on the request"; low is "most efficient"; effort shapes all output, thinking included).
  Sonnet 4.6, Haiku 4.5 and earlier run without thinking when it is omitted (Sonnet 5.5 migration guide); Opus
  4.6 and Sonnet 4.6 take adaptive, budgets (deprecated) and disabled; Haiku 4.5 budgets only (its "Extended"
  row in the same comparison table); Opus 4.7 adaptive only, `enabled` and `disabled` a 400
  (docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html). A budget is ≥ 1,024
  and < max_tokens (SDK types/thinking_config_enabled_param.py). The 2,048 thinking tokens reserved above a
  thinking request's answer cap are this project's choice (twice that minimum budget), not a published figure.

OpenAI models (the anchors' judges: Mem0 used gpt-4o-mini, LongMemEval gpt-4o-2024-08-06), called through the
`openai` SDK's chat completions (read 2026-12-03):
- Prices per 1M tokens from openai.com/api/pricing as tabulated by the openai-models crate (docs.rs) and
  cross-checked in Sraleik/undetermini PRICING.md (2026-05): gpt-4o $2.50 in / $10 out / $1.25 cached input;
  gpt-4o-mini $0.15 / $0.60 / $0.075. OpenAI caches prompt prefixes automatically from 1,024 tokens, without a
  write surcharge (cached tokens are reported in usage.prompt_tokens_details.cached_tokens); batch 50%.
- `max_tokens` is deprecated in favour of `max_completion_tokens` (openai SDK 3.x,
  types/chat/completion_create_params.py) and refused by reasoning models, so the cloud profiles send
  `max_completion_tokens`; OpenAI-compatible local servers (Ollama, LM Studio) accept only `max_tokens`
  (ollama/ollama#7125, #14464 still open), so the local profile sends that.
- Status of the 2024 snapshots: the deprecations page's 2026-04-22 list of legacy snapshots (read in part, via
  spybara.com's history) does not name gpt-4o-2024-08-06 or gpt-4o-mini-2024-07-18 in the rows read; marked
  "legacy" here, check the page before a paid run.
- A model served by a user-given base URL (`--llm local`: vLLM, Ollama, llama.cpp) gets the explicit local
  profile: any model id, priced $0 or from the user's `--prices` file (memeval/llm/prices.py), said so in
  manifests. Only the client built for `--llm local` knows its local models (a `ProfileTable` fixed when the
  client is made); the module-level functions know the cloud models only, so two clients in one process never
  see each other's local models.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from memeval.errors import InputError

API_VERSION_2026 = "2026-10-21"
API_VERSION_2023 = "2023-06-01"
KNOWN_API_VERSIONS = (API_VERSION_2023, API_VERSION_2026)
BATCH_DISCOUNT = 0.5
SAMPLING_MODES = ("protocol", "model-default")


@dataclass(frozen=True)
class ModelProfile:
    model: str
    status: str  # current | legacy
    api_version: str  # the anthropic-version this project sends for the model
    sampling: bool  # temperature accepted under api_version
    min_cache_tokens: int
    input_usd_mtok: float
    output_usd_mtok: float
    cache_write_usd_mtok: float  # 5-minute TTL
    cache_read_usd_mtok: float
    structured_outputs: bool  # anthropic: output_config.format; openai, local: response_format (--response-format)
    note: str = ""
    provider: str = "anthropic"  # anthropic | openai | local (an OpenAI-compatible server the user runs)
    max_tokens_field: str = "max_tokens"  # the body field that caps the output
    retires: str | None = None  # YYYY-MM-DD the provider shuts the model down (None: no date announced)
    successor: str | None = None  # the provider's named replacement
    # off: thinks only when asked | default: thinks unless turned off | always: cannot be turned off
    thinking: str = "off"
    thinking_types: tuple[str, ...] = ()  # the `thinking.type` values the model accepts; any other is a 400
    thinking_sent: str = ""  # the `thinking.type` this project sends ("": none, the model's default)
    effort: str = ""  # the `output_config.effort` this project sends ("": none, the model's default)
    thinking_tokens: int = 0  # output tokens reserved for thinking above a request's answer cap, when it thinks
    embedding: bool = False  # an embeddings model (the `embed` role, POST /v1/embeddings), never a chat model
    dimensions: int | None = None  # an embeddings model's native vector length
    max_output_tokens: int | None = None  # the most tokens a reply may hold (thinking included); None: no source read

    def output_refusal(self, sent: int | None, asked_by: str = "", thinking: int = 0) -> str | None:
        """Why the API would refuse a request capped at `sent` output tokens (None: it would not, or the model's
        cap is not known here). `asked_by` names whoever set the cap; `thinking`, the reserve included in `sent`."""
        if sent is None or self.max_output_tokens is None or sent <= self.max_output_tokens:
            return None
        reserve = f" ({sent - thinking:,} + {thinking:,} thinking tokens)" if thinking else ""
        return (f"writes at most {self.max_output_tokens:,} tokens a reply, but {sent:,}{reserve} are asked for by "
                f"{asked_by or 'this request'}; nothing sent (the API would answer 400) and not lowered (a smaller cap "
                "is not the one asked for): name a model that writes that many, or ask for fewer")

    def thinks(self, sent: str) -> bool:
        """Whether a request sending `thinking.type` `sent` ("": none) may think, and so spend output on it."""
        return sent in ("adaptive", "enabled") if sent else self.thinking != "off"

    def thinking_refusal(self, sent: str) -> str | None:
        """Why the API would answer 400 to `thinking.type` `sent` on this model (None: it would not)."""
        if not sent or sent in self.thinking_types:
            return None
        if not self.thinking_types:
            return f"this model takes no `thinking` parameter (asked for thinking.type {sent!r})"
        if self.thinking == "always":
            return (f"thinking.type {sent!r} is an HTTP 400 on this model, which always thinks; output_config.effort "
                    "is what keeps its thinking short")
        off = [t for t in ("between_tools", "disabled") if t in self.thinking_types]
        return (f"thinking.type {sent!r} is an HTTP 400 on this model, which takes {', '.join(self.thinking_types)}"
                + (f" ({off[0]} turns thinking off)" if off else ""))

    def retired(self, today: str | None = None) -> bool:
        from datetime import date

        return self.retires is not None and (today or date.today().isoformat()) >= self.retires

    def as_dict(self) -> dict:
        return asdict(self)

    def cost_usd(self, input_tokens: int, output_tokens: int, cache_write_tokens: int = 0,
                 cache_read_tokens: int = 0, batch: bool = False) -> float:
        cost = (input_tokens * self.input_usd_mtok + output_tokens * self.output_usd_mtok
                + cache_write_tokens * self.cache_write_usd_mtok + cache_read_tokens * self.cache_read_usd_mtok) / 1e6
        return cost * (BATCH_DISCOUNT if batch else 1.0)


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens of a model the user prices (`--prices FILE`, read by memeval/llm/prices.py)."""

    input_usd_mtok: float
    output_usd_mtok: float
    cached_input_usd_mtok: float


@dataclass(frozen=True)
class PriceTable:
    """A user's price file as read: its path and SHA-256 (said in every profile it prices) and its rows."""

    path: str
    sha256: str
    rows: tuple[tuple[str, ModelPrice], ...]

    def price(self, model: str) -> ModelPrice | None:
        return dict(self.rows).get(model)

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(m for m, _ in self.rows)

    @property
    def note(self) -> str:
        return f"priced from --prices {self.path} (sha256 {self.sha256})"


THINKING_TOKENS = 2048  # reserved above the answer cap when a request thinks (see Thinking, above)
BUDGET_TYPES = ("adaptive", "enabled", "disabled")  # Opus 4.6, Sonnet 4.6


def _profile(model, status, sampling, min_cache, price_in, price_out, structured, note="", cache_read_ratio=None,
             thinking="off", thinking_types=BUDGET_TYPES, thinking_sent="", effort="", max_output=None):
    """A model that takes temperature is called under 2023-06-01 (the only version that still accepts it);
    the others under 2026-10-21. Cache prices at the published 1.25x (5-minute write) and 0.1x (read)."""
    version = API_VERSION_2023 if sampling else API_VERSION_2026
    return ModelProfile(model, status, version, sampling, min_cache, price_in, price_out, price_in * 1.25,
                        price_in * (cache_read_ratio or 0.1), structured, note, thinking=thinking,
                        thinking_types=thinking_types, thinking_sent=thinking_sent, effort=effort,
                        thinking_tokens=THINKING_TOKENS, max_output_tokens=max_output)


# Output caps (max_output; read 2026-12-06): "Max output" on each model's page, platform.claude.com/docs/<lang>/models/
# <model>/overview (read in its en, zh-CN and pt-BR copies) — Opus 4.6 and Sonnet 4.6 128K, Haiku 4.5 64K; Opus 5.5
# and Sonnet 5.5 128K in the lineup table of those pages (and of /docs/about-claude/models/whats-new-opus-5). Opus 4.7: 128K (docs.aws.amazon.com/bedrock/latest/
# userguide/model-card-anthropic-claude-opus-4-7.md; Vertex AI's Claude Opus 4.7 page, "Maximum output tokens:
# 128,000"). "K" is thousands: 128,000 and 64,000 (Vertex's figure; Effect-TS/effect @effect/ai-anthropic
# 4.0.0-beta.106: Opus 4.6, 4.7 and Sonnet 4.6 at "the 128000 the API actually allows", the 4.5 models 64000).
# The SDK holds no cap of these models (anthropic 2.17 `max_tokens`: "Different models have different maximum
# values for this parameter"; `ModelInfo.max_tokens` is read from GET /v1/models, not shipped).
PROFILES: dict[str, ModelProfile] = {p.model: p for p in (
    _profile("claude-opus-4-6", "legacy", True, 4096, 5.0, 25.0, True, max_output=128_000),
    _profile("claude-sonnet-4-6", "legacy", True, 2048, 3.0, 15.0, True, max_output=128_000),
    _profile("claude-haiku-4-5", "current", True, 4096, 1.0, 5.0, True, thinking_types=("enabled", "disabled"),
             max_output=64_000),
    _profile("claude-opus-4-7", "legacy", False, 2048, 5.0, 25.0, True, thinking_types=("adaptive",),
             max_output=128_000),
    # 5.5 cache reads cost 0.05x input since 2026-10-07 (Sonnet 5.5 $0.10, Opus 5.5 $0.20 per MTok): the pricing
    # page's "Prompt caching" rates as tabled by docs.rs synaps pricing (verified against platform.claude.com) and
    # the 2026-10-07 change noted by PromptFuel v1.0.23 and claude-usage v1.5.7; some localized model pages still
    # show the earlier $0.20 for Sonnet 5.5
    _profile("claude-sonnet-5-5", "current", False, 1024, 2.0, 10.0, False,
             "cache floor of Sonnet 5 (LiteLLM table); none published for 5.5 that we read; cache read $0.10; "
             "thinks unless sent thinking.type between_tools, which this project sends (disabled is a 400)",
             cache_read_ratio=0.05, thinking="default", thinking_types=("adaptive", "between_tools"),
             thinking_sent="between_tools", max_output=128_000),
    _profile("claude-opus-5-5", "current", False, 1024, 4.0, 20.0, False,
             "cache floor assumed 1,024 (Opus 5: 512); cache write 1.25x, cache read $0.20; always thinks: sent "
             "effort low, max_tokens = answer cap + 2,048 thinking tokens", cache_read_ratio=0.05,
             thinking="always", thinking_types=("adaptive",), effort="low", max_output=128_000),
)}

def _openai(model, price_in, price_out, price_cached, note="", max_tokens_field="max_completion_tokens", retires=None,
            successor=None, max_output=None):
    return ModelProfile(model, "legacy", "", True, 1024, price_in, price_out, price_in, price_cached, True, note,
                        provider="openai", max_tokens_field=max_tokens_field, retires=retires, successor=successor,
                        max_output_tokens=max_output)


# OpenAI's deprecations page (developers.openai.com/api/docs/deprecations; notice of 2026-10-14): the GPT-4o and
# GPT-4o mini snapshots shut down on 2027-01-14, replacement gpt-6-luna. Read here through summaries of that page
# (dev.to "OpenAI API deprecations 2026-2027", checked against GET /v1/models' shutdown_date; codersera.com), the
# page's own row not being in the excerpt reachable here — recheck it before relying on the day. The page's notice
# policy (added 2026-06-02, as spybara.com's history of deprecations.md shows: "Generally available models: At least
# 6 months") would put a GA snapshot's shutdown after a 2026-10-14 notice no earlier than 2027-04-14, so the day
# here may be early: MEMEVAL_SEND_RETIRED=1 sends past it and lets the provider answer.
GPT4O_SHUTDOWN, GPT4O_SUCCESSOR = "2027-01-14", "gpt-6-luna"


# Output caps (read 2026-12-06; the openai SDK 3.63 states none): gpt-4o and gpt-4o-mini 16,384 — the API's own 400
# "max_tokens is too large: 32000. This model supports at most 16384 completion tokens" for gpt-4o
# (enoch3712/ExtractThinker#346; 16,384 "since gpt-4o-2024-08-06" per platform.openai.com/docs/models#gpt-4o, cited in
# zyocum/pdf2md#5), and 16,384 on OpenAI's gpt-4o-mini page as tabled by vercel.com/ai-gateway/models/
# gpt-4o-mini-fast ("Maximum output tokens: 16,384", linking platform.openai.com/docs/models/gpt-4o-mini).
# gpt-4.1-mini 32,768: vercel.com/ai-gateway/models/gpt-4.1-mini-fast (linking platform.openai.com/docs/models/
# gpt-4.1-mini) and LiteLLM's table (`max_output_tokens: 32768`, gist ei-grad/9a7c000f). gpt-4.1-mini is the
# EverMemOS framework's reader (its config/systems/*.yaml: `model: "openai/gpt-4.1-mini"`, `max_tokens: 32768`);
# prices $0.40 in / $1.60 out / $0.10 cached input per 1M (vercel.com/ai-gateway/models/gpt-4.1-mini; models.dev's
# record as shown by whichllm.io); no shutdown date read (the deprecations page's 2026-04-22 list names it as a
# substitute, not a model to shut down).
GPT4O_OUTPUT, GPT41_MINI_OUTPUT = 16_384, 32_768

PROFILES.update({p.model: p for p in (
    _openai("gpt-4o-mini", 0.15, 0.60, 0.075, "alias of gpt-4o-mini-2024-07-18; Mem0's judge and reader",
            retires=GPT4O_SHUTDOWN, successor=GPT4O_SUCCESSOR, max_output=GPT4O_OUTPUT),
    _openai("gpt-4o-mini-2024-07-18", 0.15, 0.60, 0.075, retires=GPT4O_SHUTDOWN, successor=GPT4O_SUCCESSOR,
            max_output=GPT4O_OUTPUT),
    # LongMemEval's evaluate_qa.py sends `max_tokens`; deprecated for `max_completion_tokens` but taken by every
    # non-o-series model (openai SDK 3.60 docstring of `max_tokens`), so its judge goes on the wire as it did
    _openai("gpt-4o-2024-08-06", 2.50, 10.00, 1.25, "LongMemEval's judge", max_tokens_field="max_tokens",
            retires=GPT4O_SHUTDOWN, successor=GPT4O_SUCCESSOR, max_output=GPT4O_OUTPUT),
    _openai("gpt-4.1-mini", 0.40, 1.60, 0.10, "the EverMemOS framework's reader", max_output=GPT41_MINI_OUTPUT),
)})


# OpenAI's embeddings models (the `embed` role; Mem0's RAG baselines used text-embedding-3-small), priced per 1M input
# tokens, nothing for output (read 2026-12-05): text-embedding-3-large $0.13 and, in the same page's "Quick
# comparison", text-embedding-3-small $0.02 (developers.openai.com/api/docs/models/text-embedding-3-large);
# text-embedding-ada-002 $0.10 (docs.praison.ai/docs/embeddings/providers/openai, which tables all three at those
# prices). Native dimensions 1536 / 3072 / 1536 (the same praison table; llamaindex's ALL_OPENAI_EMBEDDING_MODELS).
# Only the text-embedding-3 models take `dimensions` (the openai SDK 3.63 docstring of `embeddings.create`).
def _embedding(model, price_in, dimensions, note=""):
    return ModelProfile(model, "current", "", True, 0, price_in, 0.0, price_in, price_in, False, note,
                        provider="openai", embedding=True, dimensions=dimensions)


EMBEDDING_PROFILES: dict[str, ModelProfile] = {p.model: p for p in (
    _embedding("text-embedding-3-small", 0.02, 1536, "Mem0's RAG baselines' embedder"),
    _embedding("text-embedding-3-large", 0.13, 3072),
    _embedding("text-embedding-ada-002", 0.10, 1536, "takes no `dimensions`"),
)}  # apart from PROFILES (the chat models): a table resolves both, a chat role refuses these (check_role_kind)


def local_profile(model: str, prices: PriceTable | None = None, source: str = "model") -> ModelProfile:
    """A model the user serves behind OPENAI_BASE_URL: any id, priced $0 (explicitly, never by accident: only a
    table made for `--llm local` holds one) unless the user's price file (`--prices`, memeval/llm/prices.py) prices
    it; sampling assumed accepted; structured output asked in the form --response-format names (llama.cpp's server
    and vLLM enforce `response_format` with a grammar; `none` for a server that takes no such field). Such servers
    charge no cache write."""
    if prices is None:
        return ModelProfile(model, "local", "", True, 0, 0.0, 0.0, 0.0, 0.0, True,
                            "local server at a user-given base URL; priced $0", provider="local")
    price = prices.price(model)
    if price is None:
        raise InputError(source, model, f"no price for this model in --prices {prices.path} (it prices "
                         + ", ".join(prices.models) + "); add a row, or leave --prices out to price it $0")
    return ModelProfile(model, "local", "", True, 0, price.input_usd_mtok, price.output_usd_mtok,
                        price.input_usd_mtok, price.cached_input_usd_mtok, True,
                        f"local server at a user-given base URL; {prices.note}", provider="local")


# Tokenizer ratios, for keyless token estimates (memeval/llm/tokenizers.py). Sources (read 2026-12-04, through the
# search index: Anthropic's own migration-guide page came back as its navigation only, so its words are quoted from
# pages that reproduce them):
# - Opus 4.7 and later Opus models: the new tokenizer "may use roughly 1x to 1.35x as many tokens when processing
#   text compared to previous models (up to ~35% more, varying by content)" (the Opus 4.7 migration guide,
#   "Updated token counting", and the release notes, as quoted by developersdigest.tech/blog/claude-tokenizer-
#   change-cost-impact and sol.ava.dev/writings/2026-04-17-opus-4-7-tokenizer.html); the pricing page: "Opus 4.7 and
#   later use a new tokenizer ... may use up to 35% more tokens for the same fixed text" (same developersdigest
#   page). The top of the range is taken: a budget estimate should not come in low, and counts through the
#   token-counting endpoint put real English and code at 1.3-1.47x (claudecodecamp.com, "I measured Claude 4.7's
#   new tokenizer"; sol.ava.dev above: English prose 1.45x).
# - Sonnet 5: "a new tokenizer that produces roughly 30% more tokens for the same text" (docs.oxen.ai's
#   claude-sonnet-5 model page); Anthropic's token-counting page lists Opus 4.7 and later Opus models and Sonnet 5
#   as using "a newer tokenizer", "approximately 30 percent more tokens than on earlier models"
#   (platform.claude.com/docs/en/build-with-claude/token-counting). Sonnet 5.5 is taken to keep Sonnet 5's
#   tokenizer: no page read names its ratio.
# Models absent here (Opus 4.6, Sonnet 4.6, Haiku 4.5, OpenAI's, a local server's) count 1.0.
TOKENIZER_RATIOS: dict[str, float] = {
    "claude-opus-4-7": 1.35,
    "claude-opus-5-5": 1.35,
    "claude-sonnet-5-5": 1.30,
}


# The one place the default model of each role lives; `--answer-model` etc. override it per run.
ROLE_DEFAULTS: dict[str, str] = {
    "answer": "claude-opus-4-6",
    "judge": "claude-sonnet-4-6",
    "extract": "claude-sonnet-4-6",
    "embed": "text-embedding-3-small",  # Anthropic serves no embeddings: OpenAI's, as Mem0's RAG baselines
}
# Under `--llm openai` the roles the user did not name default to Mem0's model for reader and judge.
OPENAI_ROLE_DEFAULTS: dict[str, str] = {"answer": "gpt-4o-mini", "judge": "gpt-4o-mini", "extract": "gpt-4o-mini",
                                        "embed": "text-embedding-3-small"}


def role_defaults(backend: str) -> dict[str, str]:
    """Each role's model when the user names none: OpenAI's under `--llm openai`, none under `--llm local`."""
    if backend == "openai":
        return dict(OPENAI_ROLE_DEFAULTS)
    if backend == "local":
        return {}
    return dict(ROLE_DEFAULTS)


ROLE_FLAGS = {"answer": "--answer-model", "judge": "--judge-model", "extract": "--extract-model",
              "embed": "--embed-model"}
CHAT_ROLES = ("answer", "judge", "extract")
EMBED_ROLE = "embed"


def check_role_kind(role: str, profile: ModelProfile) -> None:
    """A chat role names a chat model and the `embed` role an embeddings model (a local server's model may be
    either: only the server knows)."""
    if profile.provider == "local":
        return
    flag = ROLE_FLAGS.get(role, role)
    if role == EMBED_ROLE and not profile.embedding:
        raise InputError(flag, profile.model, "not an embeddings model; known: " + ", ".join(sorted(EMBEDDING_PROFILES))
                         + " (a model on your own server: --llm local)")
    if role != EMBED_ROLE and profile.embedding:
        raise InputError(flag, profile.model, "an embeddings model, not a chat model (embeddings: --embed-model)")


@dataclass(frozen=True)
class ProfileTable:
    """The profiles one client resolves its requests against: every cloud model of PROFILES, plus the models it
    serves from a local server (`--llm local`), which take precedence, priced from the user's `--prices` file when
    one is given. Immutable: a client's table is fixed when the client is made."""

    local_models: frozenset[str] = frozenset()
    prices: PriceTable | None = None

    @classmethod
    def with_local(cls, models: Iterable[str], prices: PriceTable | None = None) -> ProfileTable:
        return cls(frozenset(m for m in models if m), prices)

    def profile(self, model: str, source: str = "model") -> ModelProfile:
        """The profile of `model`; an unknown id is an input error naming the known ones (never a $0 price), and so
        is a local model the given price file leaves out."""
        if model in self.local_models:
            return local_profile(model, self.prices, source)
        found = PROFILES.get(model) or EMBEDDING_PROFILES.get(model)
        if found is None:
            known = EMBEDDING_PROFILES if source == ROLE_FLAGS[EMBED_ROLE] else PROFILES
            raise InputError(source, model, "unknown model id; known: " + ", ".join(sorted(known))
                             + " (a model on your own OpenAI-compatible server: --llm local)")
        return found

    def check_sampling(self, model: str, temperature: float | None, sampling: str, source: str) -> None:
        """Refuse, before any call, a protocol temperature the model cannot take (unless model-default)."""
        if sampling not in SAMPLING_MODES:
            raise InputError("--sampling", sampling, f"expected one of {', '.join(SAMPLING_MODES)}")
        p = self.profile(model, source)
        if temperature is not None and sampling == "protocol" and not p.sampling:
            raise InputError(source, model, f"this model takes no temperature on any API version, and the protocol "
                             f"asks for {temperature}; pass --sampling model-default to send none (the manifest "
                             "and the tables then say so)")

    def sent_temperature(self, model: str, temperature: float | None, sampling: str) -> float | None:
        """What goes on the wire: the protocol's temperature where the model and version take it, else nothing."""
        if temperature is None or sampling == "model-default":
            return None
        self.check_sampling(model, temperature, sampling, "request")
        return temperature

    def cost_usd(self, model: str, input_tokens: int, output_tokens: int, cache_write_tokens: int = 0,
                 cache_read_tokens: int = 0, batch: bool = False) -> float:
        return self.profile(model).cost_usd(input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, batch)


CLOUD = ProfileTable()  # the known cloud models only: what the module-level functions below answer from


def profile(model: str, source: str = "model") -> ModelProfile:
    """The profile of a known cloud model; an unknown id is an input error naming the known ones. A local model is
    known only to its client (`LLMClient.profile`)."""
    return CLOUD.profile(model, source)


def check_sampling(model: str, temperature: float | None, sampling: str, source: str) -> None:
    CLOUD.check_sampling(model, temperature, sampling, source)


def sent_temperature(model: str, temperature: float | None, sampling: str) -> float | None:
    return CLOUD.sent_temperature(model, temperature, sampling)


def cost_usd(model: str, input_tokens: int, output_tokens: int, cache_write_tokens: int = 0,
             cache_read_tokens: int = 0, batch: bool = False) -> float:
    return CLOUD.cost_usd(model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, batch)
