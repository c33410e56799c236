"""Whether a judged result was produced by an anchor's published protocol, in one sentence every table, report,
caption and manifest prints. "Published protocol" only when the prompts are the fetched ones (their version says
`published:`), the judge model is the anchor's, and the request carries the anchor's parameters (the judges build
those, so the prompt version and the model decide)."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.protocols.store import PARAPHRASED

PUBLISHED_PREFIX = "published:"


@dataclass(frozen=True)
class PublishedJudge:
    protocol: str  # the stored protocol (memeval/protocols/sources.py)
    models: tuple[str, ...]  # the judge model as the anchor names it (alias and dated id)
    who: str
    setting: str  # the parameters besides the prompt, for the sentence

    @property
    def model(self) -> str:
        return self.models[0]


PUBLISHED_JUDGES: dict[str, PublishedJudge] = {
    "binary": PublishedJudge("mem0_judge", ("gpt-4o-mini", "gpt-4o-mini-2024-07-18"), "the Mem0 paper's judge",
                             "JSON mode, temperature 0, no output cap, label = JSON `label` equal to CORRECT"),
    "evermemos": PublishedJudge("evermemos_prompts", ("gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
                                "the EverMemOS evaluation framework's judge",
                                "system and user messages, temperature 0, no output cap, 3 runs, label = JSON `label` "
                                "equal to CORRECT once stripped and upper-cased"),
    "longmemeval": PublishedJudge("longmemeval_judge", ("gpt-4o-2024-08-06",), "LongMemEval's judge",
                                  "temperature 0, 10 output tokens, label = 'yes' in the lower-cased reply"),
}


def is_published_version(prompt_version: str | None) -> bool:
    return bool(prompt_version) and prompt_version.startswith(PUBLISHED_PREFIX)


def setting_problem(client, role: str = "judge") -> str | None:
    """What in a run's model settings departs from an anchor's call besides prompt and model id: no temperature
    sent (`--sampling model-default`), or a model of that name served by the user's own server (`--llm local`)."""
    if client is None:
        return None
    if getattr(client, "sampling", "protocol") != "protocol":
        return "no temperature was sent (--sampling model-default)"
    try:
        provider = client.profile(client.model_for(role)).provider
    except (AttributeError, KeyError, ValueError):
        return None
    return "served by a local OpenAI-compatible server (--llm local), not OpenAI's API" if provider == "local" \
        else None


def manifest_problem(manifest_path) -> str | None:
    """`setting_problem` of a stored run, read from its manifest (the sampling and the judge's provider)."""
    import json

    try:
        llm = json.loads(open(manifest_path, encoding="utf-8").read()).get("llm") or {}
    except (OSError, ValueError):
        return None
    if llm.get("sampling", "protocol") != "protocol":
        return "no temperature was sent (--sampling model-default)"
    if ((llm.get("roles") or {}).get("judge") or {}).get("provider") == "local":
        return "served by a local OpenAI-compatible server (--llm local), not OpenAI's API"
    return None


def judge_status(protocol: str, judge_model: str | None, prompt_versions: set[str | None] | str | None,
                 problem: str | None = None) -> str:
    """The sentence for judged results of `protocol` ('' for a protocol no anchor publishes, e.g. graded);
    `problem`: a setting that departs from the anchor's call (`setting_problem`)."""
    anchor = PUBLISHED_JUDGES.get(protocol)
    if anchor is None:
        return ""
    versions = {prompt_versions} if not isinstance(prompt_versions, set) else prompt_versions
    if not versions or not all(is_published_version(v) for v in versions):
        mixed = " (some judgments paraphrased, some published)" if any(is_published_version(v) for v in versions) \
            else ""
        return f"`{protocol}`: {PARAPHRASED}{mixed}"
    if judge_model not in anchor.models:
        return (f"`{protocol}`: {anchor.who}'s prompts byte for byte, but judged by {judge_model or 'an unknown model'}"
                f", not {anchor.model}: not the published protocol")
    if problem:
        return f"`{protocol}`: {anchor.who}'s prompts byte for byte and {anchor.model}, but {problem}: not the " \
               "published protocol"
    return f"`{protocol}`: the published protocol ({anchor.who}: its prompts byte for byte, {anchor.model}, " \
           f"{anchor.setting})"


def published_protocol(protocol: str, judge_model: str | None, prompt_versions) -> bool:
    text = judge_status(protocol, judge_model, prompt_versions)
    return bool(text) and "the published protocol (" in text
