"""The account stage: what the run has spent (tokens, dollars, per-role first request ids, a log of events), the
budget that stops new calls once spent, and the dry run's estimate of what a set of requests would cost before
spending anything (cache misses only, identical requests once, a cached prefix priced as one write and reads)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memeval.llm import tokenizers
from memeval.llm.errors import BudgetExceeded
from memeval.llm.routes import routes_of
from memeval.llm.types import CostEstimate, LLMRequest, LLMResponse

UNCAPPED_OUTPUT_ESTIMATE = 256  # dry-run output tokens assumed for an uncapped request


def estimate_tokens(text: str, model: str | None = None) -> int:
    """A rough token count for dry-run estimates without a key and for the rate limiter: 4 characters a token,
    times `model`'s tokenizer ratio (memeval/llm/tokenizers.py)."""
    return tokenizers.estimate_tokens(text, model)


@dataclass
class ClientStats:
    requests_sent: int = 0
    replies: int = 0  # requests that came back with a reply (the progress bar's rate: memeval/progress.py)
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    first_request_id: dict = field(default_factory=dict)  # role → request id of its first sent call
    unusable: dict = field(default_factory=dict)  # reason → replies that were not answers (never cached)
    log: list[dict] = field(default_factory=list)


class Account:
    def __init__(self, lock, stats: ClientStats, budget_usd: float | None):
        self._lock = lock  # the client's one lock: stats are shared with every stage
        self.stats = stats
        self.budget_usd = budget_usd

    def check_budget(self) -> None:
        """BudgetExceeded once the run's spending reached its budget: no new call is scheduled."""
        with self._lock:
            if self.budget_usd is not None and self.stats.cost_usd >= self.budget_usd:
                raise BudgetExceeded(f"budget ${self.budget_usd:.2f} spent (${self.stats.cost_usd:.4f}); "
                                     "no new calls scheduled")

    def charge(self, request: LLMRequest, response: LLMResponse) -> None:
        """What a reply cost: its tokens and dollars added to the run's, its request id the role's first."""
        role = request.role or "other"
        with self._lock:
            s = self.stats
            s.cost_usd += response.cost_usd
            s.input_tokens += response.input_tokens
            s.output_tokens += response.output_tokens
            s.cache_creation_input_tokens += response.cache_creation_input_tokens
            s.cache_read_input_tokens += response.cache_read_input_tokens
            s.first_request_id.setdefault(role, response.request_id)
            s.log.append({"event": "response", "request_id": response.request_id, "model": response.model,
                          "input_tokens": response.input_tokens, "output_tokens": response.output_tokens,
                          "cache_read_input_tokens": response.cache_read_input_tokens,
                          "cost_usd": response.cost_usd, "attempts": response.attempts,
                          "key": request.key[:12]})


def estimate(client, requests: Sequence[LLMRequest], expected_output_tokens: int | None = None,
             batch: bool = False, counter: Callable[[LLMRequest], int] | None = None) -> CostEstimate:
    """Dry run: calls still to send (cache misses), tokens and dollars before spending. `counter` gives
    exact input tokens (the token-counting endpoint or a user's server's tokenizer, memeval/llm/count.py; its
    `count_all` counts the misses at once, None for a request it cannot count, and its `token_count`, where it
    has one, says how); otherwise 4 characters a token times the model's tokenizer
    ratio (memeval/llm/tokenizers.py), and `token_count` says which ratios. A cached prefix is priced as one
    cache write per distinct prefix (when it reaches the model's floor) and reads after."""
    resolved = list({r.key: r for r in map(client.resolve, requests)}.values())  # identical ones are sent once
    misses = [r for r in resolved if client.replies.get(r) is None]
    count_all = getattr(counter, "count_all", None) or (lambda rs: [counter(r) if counter else None for r in rs])
    counts = count_all(misses)
    keyless = [r.model for r, n in zip(misses, counts, strict=True) if n is None]
    tokens_in = tokens_out = tokens_cap = written = read = 0
    dollars = dollars_max = 0.0
    prefixes: set = set()
    for r, exact in zip(misses, counts, strict=True):
        total = exact if exact is not None else estimate_tokens(r.system + "".join(t for _, t in r.messages),
                                                                r.model)
        # a thinking model may spend its whole thinking reserve too: billed as output (profiles.py); a
        # typical reply is priced, never more than the request's own cap (`--answer-max-tokens`)
        cap = (r.max_tokens or UNCAPPED_OUTPUT_ESTIMATE) + r.thinking_tokens
        out = min(expected_output_tokens + r.thinking_tokens, cap) if expected_output_tokens else cap
        prefix_tokens = 0
        if r.cache_prefix:
            prefix_tokens = min(total, estimate_tokens(r.cache_prefix, r.model) if exact is None
                                else round(total * r.cache_prefix_chars / r.prompt_chars))
            if prefix_tokens < client.profile(r.model).min_cache_tokens:
                prefix_tokens = 0
        w = rd = 0
        if prefix_tokens:
            group = (r.model, r.cache_prefix)
            if group in prefixes:
                rd = prefix_tokens
            else:
                prefixes.add(group)
                w = prefix_tokens
        tokens_in += total
        tokens_out += out
        tokens_cap += cap
        written += w
        read += rd
        dollars += client.profile_table.cost_usd(r.model, total - w - rd, out, w, rd, batch)
        dollars_max += client.profile_table.cost_usd(r.model, total - w - rd, cap, w, rd, batch)
    return CostEstimate(requests=len(requests), identical=len(requests) - len(resolved),
                        cached=len(resolved) - len(misses), to_send=len(misses), input_tokens_est=tokens_in,
                        cache_write_tokens_est=written, cache_read_tokens_est=read,
                        output_tokens_expected=tokens_out, output_tokens_max=tokens_cap, usd_est=dollars,
                        usd_max=dollars_max, token_count=(
                            counter.token_count(len(misses), counts, keyless) if hasattr(counter, "token_count")
                            else _token_count(counter is not None, len(misses), keyless)),
                        routes=routes_of(client, ((r.provider, r.model, r.role or "other") for r in misses)))


def _token_count(counted: bool, misses: int, keyless: list[str]) -> str:
    """How an estimate's input tokens were counted: by the endpoint, by characters (with the ratios used), or
    both when the endpoint could count only some requests (another provider's)."""
    estimated = f"estimate ({tokenizers.estimate_note(keyless)})"
    if not counted:
        return estimated
    if not keyless:
        return "exact (token-counting endpoint)"
    return f"exact (token-counting endpoint) for {misses - len(keyless)} of {misses} calls; {estimated} for the rest"
