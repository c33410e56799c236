"""Where to cut a cached prompt prefix that is larger than the account's per-minute input-token limit, so it can
be written to the prompt cache in pieces, each request under the limit.

Cache writes count toward the input-tokens-per-minute limit and cache reads do not (Anthropic's rate-limits page),
and a request may mark up to 4 cache breakpoints, each a prefix the service caches and finds again
(platform.claude.com/docs/en/build-with-claude/prompt-caching). So a 31,000-token conversation under a
30,000-token limit is sent first as a prefix ending at a breakpoint (written, ≈ half), then whole (the first half
read, the rest written): the same characters reach the model, and no request counts more than a piece. Pure.
"""

from __future__ import annotations

import math

MAX_BREAKPOINTS = 4
FILL = 0.8  # of the bucket per request: headroom for the 4-character token estimate being short
SNAP_CHARS = 2_000  # how far past an even cut a line break is looked for


def plan_cuts(prefix: str, prefix_tokens: int, rest_tokens: int, capacity: float,
              fill: float = FILL) -> tuple[int, ...] | None:
    """Character offsets (ascending, inside `prefix`) that cut it into pieces such that each piece alone, and the
    last piece with the `rest_tokens` the request adds after the prefix, stay within `fill` × `capacity`.
    () when the request fits whole; None when no cut fits (the rest alone is too large, or it would take more
    breakpoints than a request may carry)."""
    room = fill * capacity
    if prefix_tokens + rest_tokens <= room:
        return ()
    if rest_tokens >= room or not prefix:
        return None
    pieces = math.ceil(prefix_tokens / (room - rest_tokens))
    if pieces > MAX_BREAKPOINTS:
        return None
    cuts: list[int] = []
    for i in range(1, pieces):
        even = len(prefix) * i // pieces
        newline = prefix.find("\n", even, min(len(prefix), even + SNAP_CHARS))
        cut = newline + 1 if newline >= 0 else even
        if 0 < cut < len(prefix) and (not cuts or cut > cuts[-1]):
            cuts.append(cut)
    return tuple(cuts)
