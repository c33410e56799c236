"""The viewer's page (memeval/viewer.py fills in __TITLE__, __DATA__ and __CONVENTION__): markup, style and script.

Why the script is written as it is: every string from a run reaches the page through `textContent` or a text
node, never through HTML parsing, so nothing in a prediction can become markup; and the answer list is drawn as a
fixed pool of row elements over the filtered order (a virtual list), so a keystroke in a filter costs one pass
over the columns and ~40 rows of text, whatever the number of answers.
"""

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
:root{--row:24px;--line:#e3e3e3;--muted:#5f6368;--ev:#fff0b3;--accent:#1a56a8}
*{box-sizing:border-box} [hidden]{display:none !important}
body{font:13px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:12px 16px 40px;color:#1f1f1f}
h1{font-size:17px;margin:0 0 6px} h2{font-size:15px;margin:0 0 4px} h3{font-size:13px;margin:10px 0 4px}
.muted{color:var(--muted)} .note{color:#8a4b00;margin:4px 0} .err{color:#b00020;white-space:pre-wrap}
#runs{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.run{border:1px solid var(--line);border-radius:6px;padding:8px 12px;flex:1 1 520px;max-width:100%}
.meta{margin:1px 0;overflow-wrap:anywhere} .meta b{font-weight:600}
.cmd{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--muted)}
table.scores{border-collapse:collapse;margin-top:6px;font-variant-numeric:tabular-nums}
table.scores th,table.scores td{padding:2px 10px 2px 0;text-align:right;border-bottom:1px solid var(--line);
 white-space:nowrap} table.scores th:first-child,table.scores td:first-child{text-align:left}
table.scores th{font-weight:600;white-space:normal;max-width:16em;overflow-wrap:anywhere;vertical-align:bottom}
table.scores td:first-child{white-space:normal;max-width:28em;overflow-wrap:anywhere} .ci{color:var(--muted)}
select{max-width:24em}
#convention{margin:8px 0 4px;color:var(--muted);max-width:110ch}
#controls{display:flex;gap:6px 14px;flex-wrap:wrap;align-items:center;margin:10px 0 6px}
#controls input[type=number]{width:4.5em} #q{width:22em} #count{font-weight:600}
#listbox{border:1px solid var(--line);border-radius:4px;overflow-x:auto} #head,#list{min-width:860px}
.grid{display:grid;grid-template-columns:var(--cols);column-gap:8px;padding:0 8px}
#head{background:#f3f4f6;font-weight:600;line-height:26px;border-bottom:1px solid var(--line);
 user-select:none} #head span{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis} #head span.sorted::after{content:attr(data-dir);color:var(--accent)}
#list{height:38vh;min-height:180px;overflow-y:auto;position:relative;scrollbar-gutter:stable;resize:vertical;
 contain:strict}
#body{position:relative} #win{position:absolute;left:0;right:0;top:0}
.row{height:var(--row);line-height:var(--row);cursor:pointer;border-bottom:1px solid #f0f0f0}
.row span{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.row:hover{background:#f5f9ff} .row.sel{background:#dbe8fb}
.num{text-align:right;font-variant-numeric:tabular-nums} .id{font-family:ui-monospace,Menlo,monospace;font-size:12px}
.adv{color:#8a4b00;font-style:italic}
#empty{padding:10px;color:var(--muted)}
#detail{margin-top:14px}
.qhead{border-left:4px solid var(--accent);padding:2px 0 2px 10px;margin-bottom:8px}
.qtext{font-size:15px;font-weight:600;margin:2px 0}
.advbox{background:#fff7e6;border:1px solid #f0c36d;border-radius:4px;padding:4px 8px;margin:4px 0}
.auditflag{background:#fdecea;border:1px solid #e0a39a;border-radius:4px;padding:4px 8px;margin:4px 0}
.answers{display:grid;gap:10px;overflow-x:auto;padding-bottom:6px}
.answer{border:1px solid var(--line);border-radius:6px;padding:8px 10px;min-width:0}
.answer.current{border-color:var(--accent);box-shadow:0 0 0 1px var(--accent)}
.answer h3{margin:0 0 4px;font-size:13px;overflow-wrap:anywhere}
.pred{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;border-radius:4px;padding:4px 6px;margin:2px 0}
.stats{font-variant-numeric:tabular-nums;color:var(--muted)} .stats b{color:#1f1f1f}
.judge{margin:4px 0} .judge summary{cursor:pointer} .judge ol{margin:2px 0;padding-left:22px}
.judge li{margin:1px 0;overflow-wrap:anywhere} .call{margin:3px 0} .call summary{cursor:pointer;color:var(--accent)}
pre.reply{background:#eef6ee}
.mems{margin:2px 0;padding-left:0;list-style:none;max-height:420px;overflow-y:auto}
.mems li{margin:2px 0;padding:1px 4px;border-radius:3px;overflow-wrap:anywhere}
.mems li.hasev{background:var(--ev)} .rank{color:var(--muted);font-variant-numeric:tabular-nums;margin-right:4px}
.multi .turn{display:block;padding-left:1.2em;text-indent:-1.2em}
.turn .tid{font-family:ui-monospace,Menlo,monospace;font-size:11.5px;color:var(--muted);margin-right:3px}
.turn.ev .tid{color:#8a4b00;font-weight:700} .turn.ev .tid::before{content:"★ "}
pre.prompt{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;background:#f7f7f7;padding:6px;max-height:360px;
 overflow:auto} button{font:inherit;font-size:12px}
kbd{font:11px ui-monospace,monospace;border:1px solid #ccc;border-radius:3px;padding:0 3px}
</style></head><body>
<h1>__TITLE__</h1>
<div id="notes"></div>
<div id="runs"></div>
<p id="convention"></p>
<div id="controls">
 <label>system <select id="system"><option value="">all</option></select></label>
 <label>category <select id="category"><option value="">all</option></select></label>
 <label>F1 ×100 from <input id="fmin" type="number" min="0" max="100" step="5" value="0"></label>
 <label>to <input id="fmax" type="number" min="0" max="100" step="5" value="100"></label>
 <label>search <input id="q" type="search" placeholder="question, gold or prediction"></label>
 <span id="count"></span>
 <span class="muted"><kbd>↑</kbd><kbd>↓</kbd> move through the list</span>
</div>
<div id="listbox"><div id="head" class="grid"></div>
<div id="list" tabindex="0"><div id="body"><div id="win"></div></div><div id="empty" hidden>no answer matches</div>
</div></div>
<section id="detail"></section>
<script id="data" type="application/gzip+base64">__DATA__</script>
<script>
"use strict";
async function pageData() {
  const text = atob(document.getElementById("data").textContent), bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
pageData().then(main, err => {
  document.getElementById("notes").textContent = "This page could not read its data (" + err + "); it needs a " +
    "browser from 2023 or later (DecompressionStream).";
});
function main(D) {
const R = D.rows, Q = D.questions, T = D.turns, N = R.q.length, ROW = 24;
const $ = id => document.getElementById(id);
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v; else if (k === "title") e.title = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) if (kid !== null && kid !== undefined && kid !== false) e.append(kid);
  return e;
}
const fmt = (v, d = 1) => v === null || v === undefined ? "–" : Number(v).toFixed(d);
const int = v => v === null || v === undefined ? "–" : Number(v).toLocaleString("en");
const catName = c => c + " " + (D.categories[c] || "");
const flagOf = q => Q.audit ? Q.audit[q] : null;  // [error type, the audit's answer, published gold, reasoning]
const goldText = q => Q.cat[q] === 5 ? "adversarial" + (Q.trap[q] ? " · premise invites: " + Q.trap[q] : "") +
  (Q.gold[q] ? " · answer: " + Q.gold[q] : "") : (flagOf(q) ? "⚑ " + flagOf(q)[0] + " · " : "") + (Q.gold[q] ?? "–");
// each judge protocol's mean for a row, by the protocol's name (every run numbers its own protocols)
const JUDGES = [...new Set(D.protocols.map(p => p.name))];
const judged = name => i => { for (const j of R.j[i]) if (j[1] !== null && D.protocols[j[0]].name === name) return j[1];
  return null; };

// ---- the header: one block per run, then the conventions the numbers follow ----
function interval(x) {
  if (!x) return ["–", ""];
  const bounds = x.low === null ? "n/a (" + x.units + " " + (x.resampled === "conversations" ? "conversation" :
    "question") + ")" : "[" + fmt(x.low) + ", " + fmt(x.high) + "]" + (x.resampled === "questions" ? " †" : "");
  return [fmt(x.mean), bounds];
}
function reader(r) {
  const x = r.reader, imported = (x.imported || []).map(([s, how]) => s + ": " + how);
  if (!x.reader && imported.length) return imported.join("; ");
  return nativeReader(x) + (imported.length ? "; " + imported.join("; ") : "");
}
function nativeReader(x) {
  const parts = [x.reader || "not recorded"];
  if (x.reader === "extractive") parts[0] = "extractive (no LLM: the best-matching sentence of the memories)";
  else if (x.model) parts.push(x.model);
  if (x.temperature !== null && x.temperature !== undefined) parts.push("temperature " + x.temperature);
  if (x.max_tokens) parts.push("≤ " + x.max_tokens + " output tokens");
  if (x.k !== null && x.k !== undefined) parts.push("k = " + x.k + " memories (ranked systems)");
  if (x.prompt) parts.push("prompt " + x.prompt + (x.prompt_source ? " (" + x.prompt_source + ")" : ""));
  return parts.join(" · ");
}
function judgeLine(p) {
  const parts = [p.name];
  if (p.model) parts.push(p.model);
  if (p.runs) parts.push(p.runs + (p.runs === 1 ? " run" : " runs") + " per question");
  if (p.temperature !== null && p.temperature !== undefined) parts.push("temperature " + p.temperature);
  if (p.prompt_version) parts.push("prompt " + p.prompt_version + (p.prompt_source ? " (" + p.prompt_source + ")" : ""));
  if (p.status) parts.push(p.status);
  if (p.leniency) parts.push(p.leniency);
  return parts.join(" · ");
}
let itemLevel = false;
for (const run of D.runs) {
  const heads = ["system", "F1 ×100", "95% CI", "n"];
  for (const p of run.protocols) heads.push("J " + D.protocols[p].name, "95% CI", "n");
  heads.push("errors");
  const body = run.scores.map(s => {
    const f = interval(s.f1), cells = [D.systems[s.system].name, f[0], f[1], s.f1 ? int(s.f1.n) : "0"];
    if (s.f1 && s.f1.resampled === "questions") itemLevel = true;
    for (const p of run.protocols) {
      const j = interval(s.j[p]); cells.push(j[0], j[1], s.j[p] ? int(s.j[p].n) : "0");
      if (s.j[p] && s.j[p].resampled === "questions") itemLevel = true;
    }
    cells.push(int(s.errors));
    return el("tr", {}, cells.map((c, k) => el("td", {class: heads[k] === "95% CI" ? "ci" : ""}, c)));
  });
  const systems = run.scores.map(s => { const x = D.systems[s.system], p = Object.entries(x.params || {});
    return x.name + (p.length ? " (" + p.map(([k, v]) => k + "=" + v).join(", ") + ")" : ""); });
  $("runs").append(el("section", {class: "run"},
    el("h2", {}, run.label),
    el("div", {class: "meta"}, el("b", {}, "commit "), run.commit || "not recorded", " · ", run.status,
       run.created ? " · " + run.created.replace("T", " ").replace("+00:00", " UTC") : "", " · ",
       int(run.answers) + " answers to " + int(run.questions) + " questions in " + run.conversations +
       (run.conversations === 1 ? " conversation" : " conversations")),
    el("div", {class: "meta"}, el("b", {}, "systems "), systems.join(", ")),
    el("div", {class: "meta"}, el("b", {}, "reader "), reader(run)),
    el("div", {class: "meta"}, el("b", {}, run.protocols.length > 1 ? "judges " : "judge "),
       run.protocols.length ? run.protocols.map(p => judgeLine(D.protocols[p])).join("; ") : "none (no J)"),
    run.command ? el("div", {class: "meta cmd"}, run.command) : null,
    el("table", {class: "scores"}, el("thead", {}, el("tr", {}, heads.map(h => el("th", {}, h)))), el("tbody", {}, body))));
}
$("convention").textContent = __CONVENTION__;
for (const n of D.notes) $("notes").append(el("p", {class: "note"}, n));

// ---- the answer list: filters over the columns, a pool of row elements over the filtered order ----
// [heading, key, grid width]; a run column when the page holds several runs (the system column then still shows
// the system), and a J column per judge protocol, named
const COLS = [["sample", "q", "108px"], ...(D.runs.length > 1 ? [["run", "r", "minmax(60px,140px)"]] : []),
  ["system", "s", "minmax(80px,160px)"], ["category", "cat", "104px"],
  ["question", "question", "minmax(120px,3fr)"], ["gold", "gold", "minmax(80px,1.4fr)"],
  ["prediction", "pred", "minmax(120px,3fr)"], ["F1", "f1", "50px"],
  ...JUDGES.map((name, n) => ["J " + name, "j" + n, Math.min(120, Math.max(50, 8 * name.length + 24)) + "px"]),
  ["tokens", "tok", "62px"]];
document.documentElement.style.setProperty("--cols", COLS.map(c => c[2]).join(" "));
const NUMERIC = new Set(["f1", "tok", ...JUDGES.map((_, n) => "j" + n)]);
const runOf = i => D.systems[R.s[i]].run;
const key = {
  q: i => R.q[i], r: runOf, s: i => R.s[i], cat: i => Q.cat[R.q[i]], question: i => Q.text[R.q[i]],
  gold: i => goldText(R.q[i]), pred: i => R.pred[i], f1: i => R.f1[i], tok: i => R.tok[i]};
const shown = {
  q: i => Q.id[R.q[i]], r: i => D.runs[runOf(i)].label, s: i => D.systems[R.s[i]].name,
  cat: i => catName(Q.cat[R.q[i]]), question: i => Q.text[R.q[i]], gold: i => goldText(R.q[i]),
  pred: i => R.pred[i], f1: i => fmt(R.f1[i]), tok: i => int(R.tok[i])};
JUDGES.forEach((name, n) => { key["j" + n] = judged(name); shown["j" + n] = i => fmt(key["j" + n](i)); });
const TITLED = new Set(["r", "s", "question", "gold", "pred"]);
for (const [label, k] of COLS) {
  const title = k[0] === "j" && k.length > 1 ? "J (" + label.slice(2) + "): the judge's mean score, 0–100" :
    k === "f1" ? "F1 ×100" : "";
  const h = el("span", {"data-key": k, class: NUMERIC.has(k) ? "num" : "", title: title}, label);
  h.addEventListener("click", () => sortBy(k));
  $("head").append(h);
}
for (const [s, x] of D.systems.entries()) $("system").add(new Option(x.label, s));
for (const c of [...new Set(Q.cat)].sort()) $("category").add(new Option(catName(c), c));

const natural = Int32Array.from({length: N}, (_, i) => i).sort((a, b) => R.q[a] - R.q[b] || R.s[a] - R.s[b]);
const rank = new Int32Array(N); natural.forEach((row, k) => { rank[row] = k; });
let sorted = natural, sortKey = "q", sortDir = 1, order = natural, selected = -1;
function sortBy(k) {
  sortDir = sortKey === k ? -sortDir : (NUMERIC.has(k) ? -1 : 1); sortKey = k;
  const v = new Array(N); for (let i = 0; i < N; i++) v[i] = key[k](i);
  sorted = Int32Array.from(natural).sort((a, b) => {
    const x = v[a], y = v[b];
    if (x === y) return rank[a] - rank[b];
    if (x === null || x === undefined) return 1; if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * sortDir;
  });
  for (const h of $("head").children) { h.classList.toggle("sorted", h.dataset.key === k);
    h.dataset.dir = sortDir > 0 ? " ▲" : " ▼"; }
  refilter(false);
}
const hay = new Array(N);
const text = i => hay[i] ?? (hay[i] = (Q.text[R.q[i]] + "\\u0001" + goldText(R.q[i]) + "\\u0001" + R.pred[i])
  .toLowerCase());
function refilter(toTop = true) {
  const sys = $("system").value === "" ? -1 : Number($("system").value);
  const cat = $("category").value === "" ? -1 : Number($("category").value);
  const lo = parseFloat($("fmin").value), hi = parseFloat($("fmax").value);
  const low = isNaN(lo) ? 0 : lo, high = isNaN(hi) ? 100 : hi, needle = $("q").value.trim().toLowerCase();
  const out = new Int32Array(N); let n = 0;
  for (let k = 0; k < N; k++) {
    const i = sorted[k];
    if (sys >= 0 && R.s[i] !== sys) continue;
    if (cat >= 0 && Q.cat[R.q[i]] !== cat) continue;
    const f = R.f1[i];
    if (f === null ? low > 0 : f < low || f > high) continue;
    if (needle && !text(i).includes(needle)) continue;
    out[n++] = i;
  }
  order = out.subarray(0, n);
  $("count").textContent = int(n) + " of " + int(N) + " answers";
  $("body").style.height = n * ROW + "px";
  $("empty").hidden = n > 0;
  if (toTop) $("list").scrollTop = 0;
  draw();
}
const pool = [];
function ensurePool() {
  const want = Math.ceil($("list").clientHeight / ROW) + 12;
  while (pool.length < want) {
    const row = el("div", {class: "row grid"}, COLS.map(([, k]) => el("span", {class: NUMERIC.has(k) ? "num" :
      k === "q" ? "id" : ""})));
    row.addEventListener("click", () => select(Number(row.dataset.i)));
    $("win").append(row); pool.push(row);
  }
}
function draw() {
  ensurePool();
  $("head").style.paddingRight = 8 + $("list").offsetWidth - $("list").clientWidth + "px";
  const first = Math.max(0, Math.floor($("list").scrollTop / ROW) - 4);
  $("win").style.transform = "translateY(" + first * ROW + "px)";
  for (let k = 0; k < pool.length; k++) {
    const row = pool[k], pos = first + k;
    if (pos >= order.length) { row.hidden = true; continue; }
    const i = order[pos], c = row.children;
    row.hidden = false; row.dataset.i = i; row.classList.toggle("sel", i === selected);
    for (let m = 0; m < COLS.length; m++) {
      const k = COLS[m][1], value = shown[k](i);
      c[m].textContent = value;
      if (TITLED.has(k)) c[m].title = value;
      if (k === "gold") c[m].classList.toggle("adv", Q.cat[R.q[i]] === 5);
      if (k === "pred") c[m].classList.toggle("err", Boolean(R.err[i]));
    }
  }
}
let pending = false;
$("list").addEventListener("scroll", () => { if (!pending) { pending = true;
  requestAnimationFrame(() => { pending = false; draw(); }); } });
new ResizeObserver(() => draw()).observe($("list"));
for (const id of ["system", "category", "fmin", "fmax", "q"]) $(id).addEventListener("input", () => refilter());
document.addEventListener("keydown", e => {
  if (e.target.closest && e.target.closest("input, select, textarea")) return;
  if (e.key !== "ArrowDown" && e.key !== "ArrowUp" && e.key !== "j" && e.key !== "k") return;
  if (!order.length) return;
  e.preventDefault();
  let pos = order.indexOf(selected);
  pos = pos < 0 ? 0 : Math.min(order.length - 1, Math.max(0, pos + (e.key === "ArrowDown" || e.key === "j" ? 1 : -1)));
  const list = $("list");
  if (pos * ROW < list.scrollTop) list.scrollTop = pos * ROW;
  else if ((pos + 1) * ROW > list.scrollTop + list.clientHeight) list.scrollTop = (pos + 1) * ROW - list.clientHeight;
  select(order[pos]);
});

// ---- the chosen question with every system's answer side by side ----
const byQuestion = new Map();
for (const i of natural) { const q = R.q[i]; if (!byQuestion.has(q)) byQuestion.set(q, []); byQuestion.get(q).push(i); }
function turnNode(t, evidence) {
  return el("span", {class: "turn" + (evidence.has(t) ? " ev" : "")}, el("span", {class: "tid"}, T.id[t]),
    T.text[t] ?? "(turn text not available)");
}
function memories(i, evidence, all) {
  const set = D.sets[R.mem[i]], scores = R.scores ? R.scores[i] : null;
  const list = el("ol", {class: "mems"});
  let hidden = 0;
  set.forEach((item, r) => {
    const turns = D.items[item], hasEv = turns.some(t => evidence.has(t));
    if (!all && r >= 10 && !hasEv) { hidden++; return; }
    list.append(el("li", {class: (hasEv ? "hasev" : "") + (turns.length > 1 ? " multi" : "")},
      el("span", {class: "rank"}, "#" + (r + 1) + (scores && scores[r] !== null && scores[r] !== undefined ?
        " · " + Number(scores[r]).toFixed(3) : "") + (turns.length > 1 ? " (" + turns.length + " turns)" : "")),
      turns.map(t => turnNode(t, evidence))));
  });
  return [list, hidden];
}
function memoryBlock(i, evidence) {
  const set = D.sets[R.mem[i]], box = el("div");
  const withEv = set.filter(item => D.items[item].some(t => evidence.has(t))).length;
  const head = el("h3", {}, set.length + (set.length === 1 ? " memory" : " memories") + " given · " + (withEv ?
    withEv + " with an evidence turn (★, highlighted)" : "none with an evidence turn"));
  const render = all => {
    const [list, hidden] = memories(i, evidence, all);
    box.replaceChildren(...[head, list, hidden ? el("button", {onclick: () => render(true)}, "show all " + set.length + " (" + hidden +
        " more without evidence)") : null].filter(Boolean));
  };
  render(false);
  return box;
}
// ---- what the model saw: a call's request as sent and its reply, from the response cache by its key ----
const X = D.exchanges || {calls: [], texts: [], params: []}, XT = X.texts;
function callBlock(c, what) {
  const x = X.calls[c];
  if (x.missing) return el("div", {class: "call missing muted"}, what + ": not in this machine's cache (key " +
    x.key.slice(0, 12) + "…)");
  const p = {...X.params[x.params], repeat_index: x.repeat}, r = x.reply, sent = ["model " + p.model];
  for (const [k, label] of [["max_tokens", "max_tokens"], ["temperature_sent", "temperature"],
    ["api_version", "API version"], ["endpoint", "endpoint"], ["repeat_index", "repeat"]])
    if (p[k] !== null && p[k] !== undefined && p[k] !== "") sent.push(label + " " + p[k]);
  const text = parts => parts.map(t => XT[t]).join("");
  return el("details", {class: "call"},
    el("summary", {}, what + " — request and reply (" + int(r.input_tokens) + " in, " + int(r.output_tokens) +
      " out" + (r.stop_reason ? ", " + r.stop_reason : "") + ")"),
    el("div", {class: "muted"}, sent.join(" · ")),
    XT[x.system] ? [el("h3", {}, "system"), el("pre", {class: "prompt"}, XT[x.system])] : null,
    x.messages.map(([role, parts]) => [el("h3", {}, role), el("pre", {class: "prompt"}, text(parts))]),
    el("h3", {}, "reply" + (r.model ? " · " + r.model : "") + (r.request_id ? " · " + r.request_id : "")),
    el("pre", {class: "prompt reply"}, XT[r.text]),
    el("div", {class: "muted"}, "cached " + x.created + " UTC · key " + x.key.slice(0, 12) + "…"));
}
function callsBlock(calls, what, none) {
  if (calls === null || calls === undefined) return el("div", {class: "call muted"}, what + ": " + none);
  return calls.map((c, k) => callBlock(c, calls.length > 1 ? what + " " + (k + 1) : what));
}
function judgeBlock(i) {
  if (!R.j[i].length) return el("div", {class: "muted"}, D.protocols.length ? "not judged" : "no judge in this run");
  return R.j[i].map(([p, mean, scores, expl, calls]) => {
    const proto = D.protocols[p], shown = s => s === null || s < 0 ? "failed" : fmt(s, 0);
    return el("details", {class: "judge", ...(scores.length <= 3 ? {open: ""} : {})},
      el("summary", {}, el("b", {}, "J " + proto.name + " " + fmt(mean)), " — " + (scores.length === 1 ? "1 run" :
        "mean of " + scores.length + " runs: " + scores.map(shown).join(", ")) + (proto.model ? " (" + proto.model +
        ")" : "")),
      el("ol", {}, scores.map((s, k) => el("li", {}, el("b", {}, shown(s)), expl[k] ? " — " + expl[k] : "",
        calls && calls[k] !== undefined ? callBlock(calls[k], "judge run " + (k + 1)) : null))),
      calls ? null : el("div", {class: "call muted"}, "judge requests: not recorded in this row (judged before " +
        "memeval recorded request keys, or recorded by another harness)"));
  });
}
function answerColumn(i, current, evidence) {
  const x = D.systems[R.s[i]], prompt = R.prompt ? R.prompt[i] : null;
  return el("div", {class: "answer" + (i === current ? " current" : "")},
    el("h3", {class: "sys"}, x.label),
    el("div", {class: "pred"}, R.pred[i] === "" ? "(empty answer)" : R.pred[i]),
    R.err[i] ? el("div", {class: "err"}, "error: " + R.err[i]) : null,
    el("div", {class: "stats"}, el("b", {}, "F1 " + fmt(R.f1[i])), " · evidence recall " + fmt(R.rec[i]) +
      " · " + int(R.tok[i]) + " context tokens · " + fmt(R.ms[i]) + " ms"),
    judgeBlock(i),
    callsBlock(R.calls ? R.calls[i] : null, "reader", x.reader ? "no request recorded (" + x.reader + ")" :
      D.runs[x.run].reader.reader === "extractive" ?
      "no model call (the extractive reader)" : "request not recorded in this row (answered before memeval " +
      "recorded request keys, or imported)"),
    prompt ? el("details", {}, el("summary", {}, "prompt sent"), el("pre", {class: "prompt"}, prompt)) : null,
    memoryBlock(i, evidence));
}
function storedNote(rows) {
  const prompts = R.prompt ? rows.filter(r => R.prompt[r]).length : 0;
  const scores = R.scores ? rows.filter(r => R.scores[r]).length : 0;
  return (prompts === rows.length ? "Each column shows the prompt sent and " : (prompts ? "Some columns show the " +
    "prompt sent; the others' runs did not store it. Each column lists " : "The prompt sent is not stored in " +
    (D.runs.length > 1 ? "these runs" : "this run") + "; each column lists ")) +
    "the memories its reader was given, in rank order" + (scores === rows.length ? " with their retrieval scores" :
    scores ? " (retrieval scores where the run stored them)" : " (retrieval scores are not stored)") +
    ", each shown by its source turns.";
}
function select(i) {
  selected = i; draw();
  const q = R.q[i], evidence = new Set(Q.ev[q]), rows = byQuestion.get(q);
  try { history.replaceState(null, "", "#" + encodeURIComponent(Q.id[q] + "|" + R.s[i])); } catch (e) { /* opaque origin */ }
  const gold = Q.cat[q] === 5 ?
    el("div", {class: "advbox"}, el("b", {}, "Adversarial question (category 5). "),
      "Its premise is false: the official scorer gives 1 to an answer saying “not mentioned” or “no information " +
      "available”. ", Q.trap[q] ? ["The answer the premise invites (LoCoMo's adversarial_answer): ",
        el("b", {}, Q.trap[q])] : "LoCoMo's adversarial_answer is not available (data not found).",
      Q.gold[q] ? [" Gold answer: ", el("b", {}, Q.gold[q])] : null) :
    el("div", {}, el("b", {}, "gold "), Q.gold[q] ?? "–");
  const flag = flagOf(q);
  const audit = flag ? el("div", {class: "auditflag"}, el("b", {}, "LoCoMo audit: " + flag[0] + ". "),
    flag[0] === "WRONG_CITATION" ? "The gold answer stands; its evidence citation is wrong." :
      ["Published gold: ", el("b", {}, flag[2]), " · the audit's answer: ", el("b", {}, flag[1]), "."],
    flag[3] ? el("div", {class: "muted"}, "The audit's reasoning (its words, CC BY-NC 4.0, from your fetched copy): ",
      flag[3]) : null) : null;
  $("detail").replaceChildren(
    el("div", {class: "qhead"},
      el("div", {class: "muted"}, el("span", {class: "id"}, Q.id[q]), " · " + catName(Q.cat[q]) + " · " +
        rows.length + (rows.length === 1 ? " answer" : " answers side by side")),
      el("div", {class: "qtext"}, Q.text[q]), gold, audit,
      el("div", {}, el("b", {}, "evidence "), Q.ev[q].length ? Q.ev[q].map((t, m) => [m ? " · " : "",
        turnNode(t, evidence)]) : "none listed"),
      el("div", {class: "muted"}, storedNote(rows))),
    el("div", {class: "answers", style: "grid-template-columns:repeat(" + rows.length + ",minmax(300px,1fr))"},
      rows.map(r => answerColumn(r, i, evidence))));
}
function fromHash() {
  const [id, s] = decodeURIComponent(location.hash.slice(1)).split("|");
  for (const i of natural) if (Q.id[R.q[i]] === id && String(R.s[i]) === s) return i;
  return -1;
}
refilter();
const start = fromHash();
if (start >= 0) select(start); else if (order.length) select(order[0]);
document.body.dataset.ready = "1";
}
</script></body></html>
"""

# The line under the runs' headers: the default kind's convention, or (`convention`) one a page's runs all share
# when their benchmark averages other categories; either way followed by how the intervals were drawn.
DEFAULT_OPENING = '''"F1 ×100: the official LoCoMo token F1, averaged over categories 1–4 (this " +
  "project's overall convention; adversarial category 5 is scored by abstention and left out of the headline). " +
  "J: the judge's mean score, 0–100, over categories 1–4. 95% CI: percentile bootstrap (2,000 resamples) " +
  '''
INTERVALS = '''"resampling whole conversations" + (itemLevel ? "; † one conversation only, so questions are resampled " +
  "instead (narrower than a clustered interval would be)" : "") + ". Per-answer F1 in the list is ×100 too."'''


def convention(opening: str | None) -> str:
    """The script's expression for the convention line: `opening` (plain text, before "resampling whole
    conversations") as a script string, else the default kind's."""
    import json

    if opening is None:
        return DEFAULT_OPENING + INTERVALS
    return json.dumps(opening, ensure_ascii=False).replace("<", "\\u003c") + " +\n  " + INTERVALS
