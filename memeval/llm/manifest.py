"""What a run's manifest says of its model calls: per role the model, its profile, the endpoint (base URL), the
API version and the temperature actually sent, the first request id; the SDK version and the sampling mode."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from memeval.llm import profiles

SDK_PACKAGE = {"anthropic": "anthropic", "openai": "openai", "local": "openai"}


def sdk_version(package: str = "anthropic") -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def llm_manifest(client, role_temperatures: dict) -> dict | None:
    if client is None:
        return None
    roles = {}
    table = profile_table(client)
    for role, temperature in role_temperatures.items():
        model = client.model_for(role)
        p = table.profile(model)
        sent = table.sent_temperature(model, temperature, client.sampling)
        roles[role] = {"model": model, "provider": p.provider, "api_version": p.api_version,
                       "endpoint": _endpoint(client, p.provider),
                       "protocol_temperature": temperature, "temperature_sent": sent,
                       "first_request_id": client.stats.first_request_id.get(role), "profile": p.as_dict()}
    sdks = {SDK_PACKAGE[r["provider"]] for r in roles.values()} or {"anthropic"}
    return {"backend": client.backend_name, "sdk": "+".join(sorted(sdks)),
            "sdk_version": "+".join(str(sdk_version(name)) for name in sorted(sdks)),
            "sdk_versions": {name: sdk_version(name) for name in sorted(sdks)}, "sampling": client.sampling,
            "response_format": getattr(client, "response_format", None), "roles": roles}


def profile_table(client) -> profiles.ProfileTable:
    """The profiles `client` resolves its requests against (its own local models included); an object without a
    table of its own (a stand-in for a client) answers from the cloud profiles."""
    return getattr(client, "profile_table", profiles.CLOUD)


def _endpoint(client, provider: str) -> str | None:
    lookup = getattr(client, "endpoint", None)
    return lookup(provider) if callable(lookup) else (getattr(client, "endpoints", None) or {}).get(provider)


def role_identity(client, role: str, temperature: float | None, structured: bool = False) -> dict:
    """What of a role changes its replies, for a run directory's identity: model, provider, API version,
    sampling, the temperature actually sent, the thinking settings sent, and the endpoint when it is not the provider's public default
    (ANTHROPIC_BASE_URL or OPENAI_BASE_URL pointing elsewhere; a local server always): rows answered by one
    endpoint are not resumed against another. Left out at the default, so directories recorded before endpoints
    were part of the identity still resume. `structured`: the role's requests carry memeval's own reply schema, so
    on an OpenAI-compatible provider the `response_format` they are sent with (--response-format) is recorded."""
    model = client.model_for(role)
    table = profile_table(client)
    p = table.profile(model)
    out = {"model": model, "provider": p.provider, "api_version": p.api_version, "sampling": client.sampling,
           "temperature_sent": table.sent_temperature(model, temperature, client.sampling)}
    if p.thinking_sent or p.effort:  # only where sent, so directories recorded before thinking still resume
        out["thinking"] = {"type": p.thinking_sent, "effort": p.effort,
                           "reserve": p.thinking_tokens if p.thinks(p.thinking_sent) else 0}
    if structured and p.provider in ("openai", "local") and p.structured_outputs:
        out["response_format"] = getattr(client, "response_format", "json_schema")
    is_default = getattr(client, "endpoint_is_default", None)
    if callable(is_default) and not is_default(p.provider):
        out["endpoint"] = _endpoint(client, p.provider)
    return out
