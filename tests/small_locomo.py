"""conv-26 cut short, for runs that must stay small (a real CPU model server, Mem0's ~8,000-token prompt per add):
written from the shared LoCoMo data into the test's own directory, never committed."""

import json
import re
from pathlib import Path


def small_locomo(tmp_path: Path, locomo_dir: Path, sessions: int = 1, turns: int | None = None) -> Path:
    """A LoCoMo directory holding conv-26's first `sessions` sessions (the last one cut to its first `turns` turns
    when given) and the questions whose evidence all lies in what is kept."""
    source = json.loads((locomo_dir / "locomo10_v2" / "26.json").read_text())
    kept = {}
    for key, value in source.items():
        match = re.search(r"session_(\d+)", key)
        if match and int(match.group(1)) > sessions:
            continue
        kept[key] = value
    if turns is not None:
        kept[f"session_{sessions}"] = kept[f"session_{sessions}"][:turns]
    ids = {t["dia_id"] for n in range(1, sessions + 1) for t in kept[f"session_{n}"]}
    kept["qa"] = [q for q in source["qa"] if q.get("evidence") and set(q["evidence"]) <= ids]
    out = tmp_path / "small" / "locomo10_v2"
    out.mkdir(parents=True)
    (out / "26.json").write_text(json.dumps(kept))
    return tmp_path / "small"
