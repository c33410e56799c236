"""The cache stage: a resolved request's stored reply (its key covers everything sent, memeval/llm/types.py), and
the one rule of what is stored: only an answer. A refusal, an empty reply, one cut at its cap, or text longer than
the request's cap can produce is never kept (the next run asks again), and one stored by an older version that is
not an answer is asked again rather than replayed."""

from __future__ import annotations

from memeval.llm import bounds
from memeval.llm.cache import ResponseCache
from memeval.llm.errors import InvalidReply, UnusableReply
from memeval.llm.types import LLMRequest, LLMResponse


class ReplyCache:
    def __init__(self, cache: ResponseCache | None, lock, stats):
        self.cache = cache  # None: nothing is stored or replayed
        self._lock = lock
        self.stats = stats

    def get(self, resolved: LLMRequest) -> LLMResponse | None:
        """A stored reply, unless it is not an answer (stored by an older version): that one is asked again."""
        if self.cache is None:
            return None
        hit = self.cache.get(resolved.key)
        if hit is None:
            return None
        response = LLMResponse.from_cache(hit)
        if bounds.oversized_text(resolved, response.text) \
                or response.unusable_reason(resolved.truncation_ok, resolved.empty_ok):
            return None
        return response

    def keep(self, request: LLMRequest, response: LLMResponse) -> None:
        """Cache a reply that is an answer; raise InvalidReply for text longer than the request's cap can produce
        and UnusableReply for a refusal, an empty reply or one cut at the cap (nothing cached: the next run asks
        again). Its tokens were spent and are already accounted."""
        oversized = bounds.oversized_text(request, response.text)
        if oversized is not None:
            with self._lock:
                self.stats.failures += 1
                self.stats.unusable["oversized reply"] = self.stats.unusable.get("oversized reply", 0) + 1
            raise InvalidReply(f"{oversized} from {response.model} (request-id {response.request_id or '-'}, "
                               f"usage: {response.output_tokens} output tokens); not an answer: not kept, the next "
                               "run asks again")
        reason = response.unusable_reason(request.truncation_ok, request.empty_ok)
        if reason is not None:
            with self._lock:
                self.stats.failures += 1
                self.stats.unusable[reason] = self.stats.unusable.get(reason, 0) + 1
            raise UnusableReply(f"{reason} from {response.model} (request-id {response.request_id or '-'}, "
                                f"{response.output_tokens} output tokens of {request.max_tokens_sent}); not kept, the "
                                "next run asks again", reason)
        if self.cache is not None:
            self.cache.put(request.key, request.key_material(), response.to_cache())
