"""Where a run's requests go, said before anything is sent: per provider, the base URL (without credentials), what
set it (`--llm local`, an environment variable, the provider's own default) and the models sent there with the
roles they serve. A dry run prints it, so a run meant for a local server never reaches a paid API unnoticed, nor
the reverse, and a run whose replies can only come from the cache says so."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from memeval.llm.endpoints import OPENAI_BASE_URL, endpoint_for
from memeval.llm.types import ANTHROPIC_DEFAULT_BASE_URL, Route, anthropic_endpoint
from memeval.llm.types import merged as merged  # re-exported: a route helper, defined beside Route

DEFAULT_NAMES = {"anthropic": "Anthropic's API", "openai": "OpenAI's API"}
URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def destination(client, provider: str) -> tuple[str, str]:
    """(base URL, what set it) of `provider`'s requests on `client`; the URL is '' when its replies come from the
    cache only, and the second part then says why."""
    if not getattr(client.backend_for(provider), "sends_requests", True):
        if provider == "openai" and "local" in client.backends:
            return "", "cache only: under --llm local OPENAI_BASE_URL is the local server's"
        key = KEY_VARIABLES.get(provider)
        return "", f"cache only: no {key}" if key and not os.environ.get(key) else "cache only: --llm replay"
    return client.endpoint(provider) or "", via(provider, client.endpoint_is_default(provider))


def configured(provider: str) -> tuple[str, str]:
    """(base URL, what set it) of `provider` read from the environment alone, for `memeval doctor`, which makes no
    run client."""
    url = anthropic_endpoint() if provider == "anthropic" else endpoint_for(provider)
    default = {"anthropic": ANTHROPIC_DEFAULT_BASE_URL, "openai": OPENAI_BASE_URL}.get(provider)
    return url, via(provider, url == default)


def via(provider: str, default: bool) -> str:
    """What sets `provider`'s base URL: `--llm local` with OPENAI_BASE_URL, the provider's variable, or nothing (its
    own API)."""
    if provider == "local":
        return "--llm local, OPENAI_BASE_URL"
    if default:
        return DEFAULT_NAMES.get(provider, provider)
    return URL_VARIABLES.get(provider, provider)


def routes_of(client, calls: Iterable[tuple[str, str, str]]) -> tuple[Route, ...]:
    """The routes of `calls`, each (provider, model, role), in the order providers first appear."""
    found: dict[str, dict[str, list[str]]] = {}
    for provider, model, role in calls:
        roles = found.setdefault(provider, {}).setdefault(model, [])
        if role not in roles:
            roles.append(role)
    return tuple(Route(provider, *destination(client, provider), models) for provider, models in found.items())


def route_lines(routes: Sequence[Route]) -> list[str]:
    """'requests go to http://127.0.0.1:8000/v1 (--llm local, OPENAI_BASE_URL), model smollm2-135m for answer,
    judge', one line a provider; one line saying nothing is sent when there is no route."""
    if not routes:
        return ["requests go nowhere: every call is answered from the cache"]
    lines = []
    for route in routes:
        models = "; ".join(f"model {model} for {', '.join(roles)}" for model, roles in route.models.items())
        if route.url:
            lines.append(f"requests go to {route.url} ({route.via}), {models}")
        else:
            lines.append(f"requests go nowhere ({route.via}): {models}; calls not in the cache fail")
    return lines
