"""A judge's leniency, measured: how often it accepts answers known to be wrong — the locomo-audit's
specific-but-wrong set (v1) and vague-but-topical set (v2) — and the gold answers themselves, which a sound judge
accepts. A J means little without them: the judge most papers use accepts most vague wrong answers.

Rates belong to one judge configuration (`configuration`: judge, model, prompt version, sampling, the temperature
sent, and the endpoint when it is not the provider's own) and are only ever shown for exactly that one. Two
places hold them: the judgments the audit recorded (gpt-4o-mini under the EverMemOS prompts, three runs), read from
the fetched scored files whenever `memeval data fetch locomo-audit` has stored them; and every `memeval judge
calibrate` run, which registers its rates as `data/judge-calibrations/<hash>.json` (MEMEVAL_JUDGE_CALIBRATIONS_DIR
moves the place), so every table can find them without being told where the run went.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

ANSWER_SETS = ("specific_wrong", "vague_wrong", "gold")
SET_WORDS = {"specific_wrong": "specific wrong ones", "vague_wrong": "vague wrong answers", "gold": "gold answers"}
CALIBRATIONS_ENV = "MEMEVAL_JUDGE_CALIBRATIONS_DIR"
NOT_MEASURED = "leniency not measured"


class Rate(BaseModel):
    """Answers accepted of those judged: `accepted` is the mean over the judge's runs (a fraction when runs
    disagree), `rate` its percentage, `low`–`high` the Wilson 95% interval over the `n` questions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: float = Field(ge=0)
    n: int = Field(ge=0)
    rate: float = Field(ge=0, le=100)
    low: float = Field(ge=0, le=100)
    high: float = Field(ge=0, le=100)

    @classmethod
    def of(cls, accepted: float, n: int) -> Rate:
        p = accepted / n if n else 0.0
        low, high = wilson(p, n)
        return cls(accepted=round(accepted, 6), n=n, rate=round(100 * p, 6), low=round(100 * low, 6),
                   high=round(100 * high, 6))

    def text(self, digits: int = 1) -> str:
        return f"{self.rate:.{digits}f}% [{self.low:.1f}–{self.high:.1f}]"


class Leniency(Rate):
    """One answer set judged by one judge configuration: the overall rate, per category, and where it was
    measured (`source`: the audit's recorded judgments, or a calibration run's directory)."""

    judge: str
    judge_model: str | None
    prompt_version: str | None
    prompt_source: str | None
    sampling: str | None
    temperature_sent: float | None = None
    endpoint: str | None = None
    runs: int
    answer_set: str
    by_category: dict[int, Rate]
    source: str

    def configuration(self) -> tuple:
        return configuration({"judge": self.judge, "model": self.judge_model, "prompt_version": self.prompt_version,
                              "sampling": self.sampling, "temperature_sent": self.temperature_sent,
                              "endpoint": self.endpoint})


def wilson(p: float, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of a proportion `p` (0–1) over `n` questions; (0, 1) when nothing was judged."""
    from memeval.scoring.power import wilson as interval

    return interval(p * n, n) if n > 0 else (0.0, 1.0)


def configuration(identity: Mapping) -> tuple:
    """What makes two judge configurations the same for leniency: the judge, its model, its prompt version, the
    sampling mode and temperature actually sent, and a non-default endpoint (a local server answering to a cloud
    model's name is not that model). `identity` is a judge's identity as a run records it
    (`judge_identities` in memeval/reports/judge_leniency.py) with `judge` set to its name; `judge_model` is
    read for `model` where only that is given."""
    temperature = identity.get("temperature_sent")
    return (identity.get("judge"), identity.get("model") or identity.get("judge_model"),
            identity.get("prompt_version"), identity.get("sampling") or "protocol",
            None if temperature is None else float(temperature), identity.get("endpoint") or None)


def leniency_for(identity: Mapping, audit_dir: str | Path | None = None,
                 calibrations: str | Path | None = None) -> list[Leniency]:
    """Every measured rate of exactly this configuration: the audit's recorded ones (when fetched) and each
    registered calibration run's, best first within each answer set (most questions judged)."""
    wanted = configuration(identity)
    found = [r for r in (*recorded(audit_dir), *registered(calibrations)) if r.configuration() == wanted]
    return sorted(found, key=lambda r: (ANSWER_SETS.index(r.answer_set), -r.n, r.source))


def recorded(audit_dir: str | Path | None = None) -> list[Leniency]:
    """The rates a benchmark's own sources recorded (LoCoMo: its audit's judgments), from each declaration's answer
    keys (memeval.answer_keys)."""
    from memeval.answer_keys import offered

    return [r for keys in offered() for r in keys.recorded_leniency(audit_dir)]


def leniency_text(rates: Iterable[Leniency]) -> str:
    """One clause for beside a J: "this judge accepts 62.8% [60.4–65.2] of vague wrong answers, 10.6% [..] of
    specific wrong ones", the gold rate after it when measured; "leniency not measured" when nothing is."""
    best: dict[str, Leniency] = {}
    for r in rates:
        if r.n and (r.answer_set not in best or r.n > best[r.answer_set].n):
            best[r.answer_set] = r
    wrong = [f"{best[s].text()} of {SET_WORDS[s]}" for s in ("vague_wrong", "specific_wrong") if s in best]
    gold = f"{best['gold'].text()} of {SET_WORDS['gold']}" if "gold" in best else None
    if not wrong and gold is None:
        return NOT_MEASURED
    if not wrong:
        return f"this judge accepts {gold}; its acceptance of wrong answers is not measured"
    return "this judge accepts " + ", ".join(wrong) + (f" (and {gold})" if gold else "")


def calibrations_dir(explicit: str | Path | None = None) -> Path:
    """`explicit`, then MEMEVAL_JUDGE_CALIBRATIONS_DIR, then data/judge-calibrations/ of the checkout (git-ignored)."""
    from memeval.data.paths import data_folder

    return data_folder(explicit, CALIBRATIONS_ENV, "judge-calibrations")


class Registration(BaseModel):
    """What a calibration run leaves where every table looks: its directory and its rates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str
    leniency: list[Leniency]


def register(run: str | Path, rates: list[Leniency], directory: str | Path | None = None) -> Path | None:
    """Record `run`'s rates (replacing what it registered before); None when it measured nothing."""
    from memeval.atomic import write_json_atomic
    from memeval.rundir import identity_hash

    where = Path(run).resolve()
    path = calibrations_dir(directory) / f"{identity_hash(str(where))}.json"
    if not rates:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, Registration(run=str(where), leniency=rates).model_dump(mode="json"))
    return path


def registered(directory: str | Path | None = None) -> list[Leniency]:
    """Every registered calibration's rates; a registration that cannot be read is refused naming its file."""
    from pydantic import ValidationError

    from memeval.errors import InputError
    from memeval.safe_json import load_json_file

    place = calibrations_dir(directory)
    if not place.is_dir():
        return []
    out: list[Leniency] = []
    advice = "; rerun the calibration that wrote it, or delete the file to forget it"
    for path in sorted(place.glob("*.json")):
        try:
            out.extend(Registration.model_validate(load_json_file(path, "calibration registration")).leniency)
        except InputError as exc:
            raise InputError(exc.source, exc.field, exc.problem + advice) from None
        except ValidationError as exc:
            error = exc.errors()[0]
            raise InputError(path, ".".join(str(p) for p in error["loc"]) or "(top level)",
                             error["msg"] + advice) from None
    return out


def dumps(rates: Iterable[Leniency]) -> str:
    return "".join(json.dumps(r.model_dump(mode="json"), sort_keys=True) + "\n" for r in rates)
