"""What a run's manifest says of its model calls: per role the model, its profile, the API version and the
temperature actually sent, the first request id; the SDK version and the sampling mode."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from memeval.llm import profiles
from memeval.llm.openai_backend import endpoint_for


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
                       "endpoint": endpoint_for(p.provider) if p.provider != "anthropic" else None,
                       "protocol_temperature": temperature, "temperature_sent": sent,
                       "first_request_id": client.stats.first_request_id.get(role), "profile": p.as_dict()}
    providers = sorted({r["provider"] for r in roles.values()})
    sdks = {p: sdk_version("anthropic" if p == "anthropic" else "openai") for p in providers}
    return {"backend": client.backend_name, "sdk": "+".join("anthropic" if p == "anthropic" else "openai"
                                                            for p in providers) or "anthropic",
            "sdk_version": sdk_version(), "sdk_versions": sdks, "sampling": client.sampling, "roles": roles}
