"""`memeval doctor`: the first command to run with a new key or endpoint. One tiny request per role (answer,
judge, extraction) under the profile's API version and the role's protocol temperature, so a model that is
unavailable, a version the endpoint does not know, or a temperature it refuses shows up here for well under a
cent instead of as a failed run. Without a key it says what it would check and how to set the key."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass

from memeval.commands.arguments import JSON, command
from memeval.commands.llm_options import add_llm_arguments, llm_options
from memeval.settings import add_config_arguments, flag

ROLE_TEMPERATURES = {"answer": 0.0, "judge": 0.5, "extract": 0.0}  # the strictest protocol of each role
PING = "Reply with the single word: ok"
PROBE_TOKENS = 5  # the probe's answer cap; a thinking model gets its profile's thinking reserve on top


@dataclass
class DoctorConfig:
    """`memeval doctor`'s own setting (the LLM options are the shared ones)."""

    json: bool = flag(JSON, False, help="print the plan or the checks as JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    doctor = command(subparsers, "doctor", "check the key, models, API versions and sampling (a few cents at most)",
                     "memeval doctor --judge-model claude-sonnet-4-6")
    add_llm_arguments(doctor)
    add_config_arguments(doctor, DoctorConfig)
    doctor.set_defaults(handler=_doctor)


def plan(options) -> list[dict]:
    rows = []
    table = options.profile_table  # under --llm local the named models are the local server's
    for role, temperature in ROLE_TEMPERATURES.items():
        model = options.model(role)
        p = table.profile(model, f"--{role}-model")
        sent = table.sent_temperature(model, temperature, options.sampling) if p.sampling else None
        rows.append({"role": role, "model": model, "provider": p.provider, "status": p.status,
                     "api_version": p.api_version,
                     "sampling_accepted": p.sampling, "protocol_temperature": temperature, "temperature_sent": sent,
                     "min_cache_tokens": p.min_cache_tokens, "structured_outputs": p.structured_outputs,
                     "retires": p.retires, "successor": p.successor,
                     "thinking": p.thinking, "thinking_sent": p.thinking_sent or None, "effort_sent": p.effort or None,
                     "max_tokens_sent": PROBE_TOKENS + (p.thinking_tokens if p.thinks(p.thinking_sent) else 0),
                     "usd_per_mtok": [p.input_usd_mtok, p.output_usd_mtok, p.cache_write_usd_mtok,
                                      p.cache_read_usd_mtok]})
    return rows


def check(options, rows: list[dict]) -> list[dict]:
    from memeval.llm.client import AnthropicBackend, LLMClient, LLMRequest
    from memeval.llm.errors import APIRejected, LLMError, UnusableReply
    from memeval.llm.openai_backend import OpenAIBackend

    for row in rows:
        # a client per role, without cache: one role's rejection must not stop the others' checks
        try:
            backend = (AnthropicBackend(timeout=30) if row["provider"] == "anthropic"
                       else OpenAIBackend(row["provider"], timeout=30))
        except LLMError as exc:
            row.update(ok=False, error=str(exc))
            continue
        client = LLMClient(backend, None, max_retries=2, profile_table=options.profile_table)
        request = LLMRequest(model=row["model"], messages=(("user", PING),), max_tokens=PROBE_TOKENS,
                             temperature=row["temperature_sent"], template_version="doctor",
                             truncation_ok=True)  # a probe cut at 5 tokens still shows text comes back; empty fails
        try:
            response = client.complete(request)
            row.update(ok=True, reply=response.text.strip()[:20], request_id=response.request_id,
                       cost_usd=round(response.cost_usd, 6))
        except UnusableReply as exc:  # its tokens were spent all the same
            row.update(ok=False, error=no_text(row, exc), cost_usd=round(client.stats.cost_usd, 6))
        except APIRejected as exc:
            hint = ""
            if exc.status == 401 and row["provider"] == "anthropic" and os.environ.get("ANTHROPIC_BASE_URL"):
                hint = ("; the anthropic SDK 2.x sends the key as `Authorization: Bearer`, so a proxy at "
                        "ANTHROPIC_BASE_URL that reads only `X-Api-Key` answers 401")
            row.update(ok=False, error=exc.one_line() + hint)
        except LLMError as exc:
            row.update(ok=False, error=str(exc))
    return rows


def no_text(row: dict, exc) -> str:
    """The line for a probe that came back without answer text (empty, or thinking only): what it was given, and
    that a run's calls would fail the same way."""
    sent = row.get("max_tokens_sent", PROBE_TOKENS)
    if sent > PROBE_TOKENS:
        why = (f"max_tokens {sent} ({PROBE_TOKENS} for the answer + {sent - PROBE_TOKENS} reserved for thinking) "
               "went on thinking; raise its thinking reserve in memeval/llm/profiles.py")
    else:
        why = (f"max_tokens {sent} went without text (what a model that thinks unasked does: check its thinking "
               "settings in memeval/llm/profiles.py)")
    return f"no answer text ({exc.reason}) from {row['model']}: {why}. Every call of a run would fail the same way"


def _thinking(row: dict) -> str:
    """How the probe treats the model's thinking ('' for a model that thinks only when asked)."""
    if row.get("thinking", "off") == "off":
        return ""
    if row["thinking_sent"] in ("between_tools", "disabled"):
        return f", thinking off ({row['thinking_sent']})"
    effort = f"effort {row['effort_sent']}, " if row.get("effort_sent") else ""
    return f", thinks ({effort}max_tokens {PROBE_TOKENS} + {row['max_tokens_sent'] - PROBE_TOKENS} for thinking)"


KEY_VARIABLE = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "local": "OPENAI_BASE_URL"}
SETUP_HINT = {
    "ANTHROPIC_API_KEY": "`export ANTHROPIC_API_KEY=...` (ANTHROPIC_BASE_URL for another endpoint)",
    "OPENAI_API_KEY": "`export OPENAI_API_KEY=...` (OPENAI_BASE_URL for a proxy of OpenAI's API)",
    "OPENAI_BASE_URL": "`export OPENAI_BASE_URL=http://127.0.0.1:8000/v1` for `memeval serve-local` or vLLM "
                       "(http://127.0.0.1:11434/v1 for Ollama)",
}


def routes(rows: list[dict]) -> list:
    """Where each role's probe goes (memeval/llm/routes.py): the URL without credentials and what set it."""
    from memeval.llm.routes import configured, merged
    from memeval.llm.types import Route

    return merged(Route(r["provider"], *configured(r["provider"]), {r["model"]: [r["role"]]}) for r in rows)


def _where(row: dict) -> str:
    return f"anthropic-version {row['api_version']}" if row["provider"] == "anthropic" else f"{row['provider']} API"


RETIREMENT_WARNING_DAYS = 90


def retirement_lines(rows: list[dict], today: str | None = None) -> list[str]:
    """Each role's model shut down already, or within 90 days, with the provider's successor."""
    from datetime import date

    now = date.fromisoformat(today) if today else date.today()
    lines = []
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("retires"):
            by_model.setdefault(r["model"], []).append(r)
    for model, used in by_model.items():
        retires, successor = used[0]["retires"], used[0]["successor"] or "not named"
        days = (date.fromisoformat(retires) - now).days
        if days <= RETIREMENT_WARNING_DAYS:
            when = f"was shut down on {retires}" if days <= 0 else f"retires on {retires} (in {days} days)"
            roles = ", ".join(r["role"] for r in used)
            lines.append(f"note: {model} ({roles}) {when}; successor {successor}. From then on runs naming it are "
                         "refused (cached replies still replay), and a protocol published with it cannot be rerun "
                         "as published")
    return lines


def _doctor(args: argparse.Namespace) -> int:
    options = llm_options(args)
    rows = plan(options)
    if not args.json:
        for line in retirement_lines(rows):
            print(line)
    needed = sorted({KEY_VARIABLE[r["provider"]] for r in rows})
    missing = [v for v in needed if not os.environ.get(v)]
    from dataclasses import asdict

    from memeval.llm.routes import route_lines

    if missing or options.backend == "replay":
        if args.json:
            print(json.dumps({"key": False, "missing": missing, "would_check": rows,
                              "requests_go_to": [asdict(r) for r in routes(rows)]}, indent=2))
            return 2
        unset = " / ".join(missing) if missing else "live calls (--llm replay)"
        print(f"No {unset}: nothing sent. With it, doctor sends one {PROBE_TOKENS}-token request per role:")
        for r in rows:
            temp = "no temperature" if r["temperature_sent"] is None else f"temperature {r['temperature_sent']}"
            print(f"  {r['role']:<8} {r['model']:<18} {_where(r)}, {temp}{_thinking(r)} "
                  f"({r['status']}; cache floor {r['min_cache_tokens']} tokens)")
        for line in route_lines(routes(rows)):
            print(f"  {line}")
        import shlex

        from memeval.invocation import invocation

        steps = [SETUP_HINT[v] for v in missing] or ["choose --llm auto, anthropic, openai or local for live calls"]
        typed = invocation([])["argv"] or ["memeval", "doctor"]
        print(f"Set {'; '.join(steps)}; then run `{shlex.join(typed)}` again.")
        return 2  # nothing was checked
    rows = check(options, rows)
    if args.json:
        from memeval.llm.types import public_url  # the URL without its credentials, as every record has it

        endpoint = os.environ.get("ANTHROPIC_BASE_URL")
        print(json.dumps({"key": True, "endpoint": public_url(endpoint) if endpoint else "default",
                          "requests_go_to": [asdict(r) for r in routes(rows)], "checks": rows}, indent=2))
    else:
        for r in rows:
            verdict = (f"ok (request {r['request_id']}, ${r['cost_usd']:.6f})" if r["ok"] else f"FAILED: {r['error']}")
            temp = "no temperature" if r["temperature_sent"] is None else f"temperature {r['temperature_sent']}"
            print(f"{r['role']:<8} {r['model']:<18} {_where(r)}, {temp}{_thinking(r)}: {verdict}")
        for line in route_lines(routes(rows)):
            print(line)
        total = sum(r.get("cost_usd", 0.0) for r in rows)
        print(f"total ${total:.6f}; prompt caching engages from {min(r['min_cache_tokens'] for r in rows)} tokens "
              "on these models (see docs/llm.md, Using a real key)")
    return 0 if all(r["ok"] for r in rows) else 1
