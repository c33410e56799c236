"""A per-sample viewer for one LoCoMo run: one static, self-contained HTML page (no server; it opens from
reports/ or any folder) to browse questions by system, category and score.

Each row holds the question, gold, prediction, F1, latency and context tokens; opened, it shows the memories the
reader was given (their source turns, the evidence turns marked) and each judge run's score and explanation.
The data rides in the page as JSON; a few lines of plain JavaScript filter and sort it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from memeval.categories import CATEGORY_NAMES
from memeval.errors import InputError
from memeval.rundir import RunDir


def _turn_texts(run: Path) -> tuple[dict[str, str], str | None]:
    """"conversation|dia_id" → "speaker: text" from the data the run's manifest names, or ({}, why not). Turn
    ids repeat across conversations (every one has a D1:1), so the conversation is part of the key."""
    manifest_path = RunDir(run).manifest
    from memeval.invocation import load_manifest

    manifest = load_manifest(manifest_path) if manifest_path.is_file() else {}  # unreadable: one line, no page
    data = manifest.get("data")
    data = data.get("path") if isinstance(data, dict) else None
    if not isinstance(data, str) or not data or not Path(data).exists():
        return {}, "the run's LoCoMo data was not found, so memories show their turn ids only"
    from memeval.data.locomo import load_locomo
    from memeval.memory.render import turn_text

    return {f"{c.sample_id}|{t.dia_id}": turn_text(t) for c in load_locomo(data) for s in c.sessions
            for t in s.turns}, None


def page_data(run: str | Path) -> dict:
    from memeval.records import load_answers, load_judgments

    run = Path(run)
    if not RunDir(run).answers.is_file():
        raise InputError(RunDir(run).answers, "answers", "not found: expected a `locomo run` directory")
    if RunDir(run).manifest.is_file():
        from memeval.invocation import load_manifest

        kind = load_manifest(RunDir(run).manifest).get("command")
        if kind not in (None, "locomo run"):  # None: a hand-made or older manifest; its rows are checked below
            raise InputError(RunDir(run).manifest, "command", f"{kind!r}: the viewer reads `locomo run` directories "
                             "only (its report.md and answers.jsonl hold this run's results)")
    texts, note = _turn_texts(run)
    judged: dict[tuple[str, str], list[dict]] = {}
    for j in load_judgments(RunDir(run).judgments):
        judged.setdefault((j.system, j.sample_id), []).append(
            {"protocol": j.protocol, "mean": j.mean, "scores": j.scores, "explanations": j.explanations or []})
    rows, memory_sets, set_index = [], [], {}
    for a in load_answers(RunDir(run).answers):
        # identical memory lists (full context: every question of a conversation) are stored once
        memories = (a.conversation_id, tuple(tuple(item) for item in a.retrieved_ids))
        if memories not in set_index:
            set_index[memories] = len(memory_sets)
            memory_sets.append([[f"{a.conversation_id}|{i}" for i in item] for item in memories[1]])
        rows.append({
            "sample_id": a.sample_id, "conversation_id": a.conversation_id, "system": a.system,
            "category": a.category,
            "category_name": CATEGORY_NAMES.get(a.category, str(a.category)), "question": a.question,
            "gold": "" if a.gold is None else str(a.gold), "prediction": a.prediction, "f1": a.f1,
            "error": a.error, "latency_ms": None if a.latency_total_s is None else 1000 * a.latency_total_s,
            "context_tokens": a.context_tokens, "evidence_ids": a.evidence_ids,
            "evidence_recall": a.evidence_recall,
            "memories": set_index[memories],
            "judgments": judged.get((a.system, a.sample_id), []),
        })
    used = {i for items in memory_sets for item in items for i in item}
    return {"run": str(run), "rows": rows, "note": note, "memory_sets": memory_sets,
            "turns": {i: t for i, t in texts.items() if i in used},
            "systems": sorted({r["system"] for r in rows}), "categories": sorted({r["category"] for r in rows})}


# Inside <script>, `<!--`, `<script` and `</script` change how the browser reads the block (an imported prediction
# holding `<!--<script>` swallowed the page's own script); with `<`, `>` and `&` escaped none can occur, and JSON
# reads the same. U+2028/U+2029 are escaped for engines that predate JSON ⊂ ECMAScript.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(data) -> str:
    """`data` as JSON safe to embed in a <script> block, whatever its strings hold."""
    return re.sub("[<>&\u2028\u2029]", lambda m: _SCRIPT_ESCAPES[m.group()], json.dumps(data, ensure_ascii=False))


def render(data: dict) -> str:
    values = {"__TITLE__": f"memeval · {html.escape(Path(data['run']).name)}", "__DATA__": script_json(data)}
    # one pass: a run named __DATA__ (or data holding __TITLE__) is never substituted twice
    return re.sub("__TITLE__|__DATA__", lambda m: values[m.group()], _TEMPLATE)


def write_viewer(run: str | Path, output: str | Path | None = None) -> Path:
    from memeval.atomic import write_text_atomic

    run = Path(run)
    return write_text_atomic(Path(output) if output else run / "view.html", render(page_data(run)))


_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:16px;margin:0 0 8px} .note{color:#a15c00}
#controls{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin:8px 0}
table{border-collapse:collapse;width:100%} th,td{border-bottom:1px solid #ddd;padding:4px 6px;vertical-align:top;
text-align:left} th{cursor:pointer;background:#f4f4f4;position:sticky;top:0} tr.row:hover{background:#f7fbff}
td.num{text-align:right;font-variant-numeric:tabular-nums} .detail td{background:#fafafa}
.ev{background:#fff3bf} .mem{margin:2px 0} .id{color:#666;font-family:monospace} .err{color:#b00020}
</style></head><body>
<h1>__TITLE__</h1>
<div id="summary"></div>
<div id="controls">
 <label>system <select id="system"><option value="">all</option></select></label>
 <label>category <select id="category"><option value="">all</option></select></label>
 <label>F1 from <input id="fmin" type="number" min="0" max="1" step="0.05" value="0" style="width:5em"></label>
 <label>to <input id="fmax" type="number" min="0" max="1" step="0.05" value="1" style="width:5em"></label>
 <label>search <input id="q" type="search" placeholder="question, gold, prediction"></label>
 <span id="count"></span>
</div>
<table><thead><tr><th data-key="sample_id">sample</th><th data-key="system">system</th>
<th data-key="category">category</th><th data-key="question">question</th><th data-key="gold">gold</th>
<th data-key="prediction">prediction</th><th data-key="f1">F1</th><th data-key="judge">J</th>
<th data-key="latency_ms">latency (ms)</th><th data-key="context_tokens">tokens</th></tr></thead>
<tbody id="rows"></tbody></table>
<script id="data" type="application/json">__DATA__</script>
<script>
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = id => document.getElementById(id);
let sortKey = "sample_id", sortDir = 1, open = new Set();
const esc = s => String(s ?? "").replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\\"":"&quot;"}[c]));
const fmt = (v, d) => v === null || v === undefined ? "–" : Number(v).toFixed(d);
const judge = r => r.judgments.length ? r.judgments.map(j => j.mean).find(m => m !== null) ?? null : null;
for (const s of DATA.systems) $("system").add(new Option(s, s));
for (const c of DATA.categories) $("category").add(new Option(c + " " + (DATA.rows.find(r => r.category === c) || {}).category_name, c));
if (DATA.note) $("summary").innerHTML = '<p class="note">' + esc(DATA.note) + "</p>";
function visible() {
  const sys = $("system").value, cat = $("category").value, q = $("q").value.toLowerCase();
  const lo = parseFloat($("fmin").value), hi = parseFloat($("fmax").value);
  return DATA.rows.filter(r => (!sys || r.system === sys) && (!cat || String(r.category) === cat)
    && (r.f1 === null ? lo <= 0 : r.f1 >= lo && r.f1 <= hi)
    && (!q || (r.question + " " + r.gold + " " + r.prediction).toLowerCase().includes(q)));
}
function value(r, key) { return key === "judge" ? judge(r) : r[key]; }
function detail(r) {
  const evidence = new Set(r.evidence_ids.map(id => r.conversation_id + "|" + id));
  const mems = DATA.memory_sets[r.memories].map((item, i) => '<div class="mem">' + (i + 1) + ". " + item.map(key =>
    '<span class="' + (evidence.has(key) ? "ev" : "") + '"><span class="id">' + esc(key.slice(key.indexOf("|") + 1)) +
    "</span> " + esc(DATA.turns[key] || "") + "</span>").join(" · ") + "</div>").join("") ||
    "<i>no memories given to the reader</i>";
  const js = r.judgments.map(j => "<div><b>" + esc(j.protocol) + "</b> mean " + fmt(j.mean, 1) + ": " +
    j.scores.map((s, i) => fmt(s, 0) + (j.explanations[i] ? " — " + esc(j.explanations[i]) : "")).join("; ") +
    "</div>").join("") || "<i>not judged</i>";
  return '<tr class="detail"><td colspan="10"><div><b>evidence</b> ' + esc(r.evidence_ids.join(", ") || "none") +
    " (recall " + fmt(r.evidence_recall, 2) + ")</div><div><b>memories given</b> (evidence turns marked)" +
    mems + "</div><div><b>judge runs</b>" + js + "</div>" + (r.error ? '<div class="err">' + esc(r.error) +
    "</div>" : "") + "</td></tr>";
}
function draw() {
  const rows = visible().sort((a, b) => {
    const x = value(a, sortKey), y = value(b, sortKey);
    if (x === y) return a.sample_id < b.sample_id ? -1 : 1;
    if (x === null || x === undefined) return 1; if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * sortDir;
  });
  $("count").textContent = rows.length + " of " + DATA.rows.length + " rows";
  $("rows").innerHTML = rows.map(r => {
    const key = r.system + "|" + r.sample_id;
    return '<tr class="row" data-key="' + esc(key) + '"><td class="id">' + esc(r.sample_id) + "</td><td>" +
      esc(r.system) + "</td><td>" + esc(r.category + " " + r.category_name) + "</td><td>" + esc(r.question) +
      "</td><td>" + esc(r.gold) + "</td><td>" + esc(r.prediction) + '</td><td class="num">' + fmt(r.f1, 3) +
      '</td><td class="num">' + fmt(judge(r), 1) + '</td><td class="num">' + fmt(r.latency_ms, 1) +
      '</td><td class="num">' + fmt(r.context_tokens, 0) + "</td></tr>" + (open.has(key) ? detail(r) : "");
  }).join("");
}
$("rows").addEventListener("click", e => {
  const tr = e.target.closest("tr.row"); if (!tr) return;
  const key = tr.dataset.key; open.has(key) ? open.delete(key) : open.add(key); draw();
});
document.querySelectorAll("th").forEach(th => th.addEventListener("click", () => {
  sortDir = sortKey === th.dataset.key ? -sortDir : 1; sortKey = th.dataset.key; draw();
}));
for (const id of ["system", "category", "fmin", "fmax", "q"]) $(id).addEventListener("input", draw);
draw();
</script></body></html>
"""
