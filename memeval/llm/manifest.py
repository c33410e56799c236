"""What a run's manifest says of its model calls: per role the model, its profile, the API version and the
temperature actually sent, the first request id; the SDK version and the sampling mode."""

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
    for role, temperature in role_temperatures.items():
        model = client.model_for(role)
        p = profiles.profile(model)
        sent = profiles.sent_temperature(model, temperature, client.sampling)
        roles[role] = {"model": model, "provider": p.provider, "api_version": p.api_version,
                       "endpoint": client.endpoints.get(p.provider),
                       "protocol_temperature": temperature, "temperature_sent": sent,
                       "first_request_id": client.stats.first_request_id.get(role), "profile": p.as_dict()}
    sdks = {SDK_PACKAGE[r["provider"]] for r in roles.values()} or {"anthropic"}
    return {"backend": client.backend_name, "sdk": "+".join(sorted(sdks)), "sdk_version": sdk_version(),
            "sdk_versions": {name: sdk_version(name) for name in sorted(sdks)}, "sampling": client.sampling,
            "roles": roles}


def role_identity(client, role: str, temperature: float | None) -> dict:
    """What of a role changes its replies, for a run directory's identity: model, provider, API version,
    sampling and the temperature actually sent."""
    model = client.model_for(role)
    p = profiles.profile(model)
    return {"model": model, "provider": p.provider, "api_version": p.api_version, "sampling": client.sampling,
            "temperature_sent": profiles.sent_temperature(model, temperature, client.sampling)}
