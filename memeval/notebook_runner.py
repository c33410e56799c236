"""Execute notebooks with papermill into reports/ and render them to HTML (with and without code)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

from memeval.atomic import write_text_atomic
from memeval.data.paths import project_root
from memeval.errors import NotebookFailed
from memeval.progress import progress_enabled

KERNEL_ENVIRONMENT = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", "MEMEVAL_PROGRESS": "0"}


@contextmanager
def kernel_environment(values: Mapping[str, str]):
    """Set environment variables for the kernels started inside the block (they inherit this process's
    environment), then restore what was there."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def strip_outputs(nb_path: str | Path) -> bool:
    """Remove outputs and execution counts in place; returns whether anything changed."""
    path = Path(nb_path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    changed = False
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            changed = True
        cell["outputs"] = []
        cell["execution_count"] = None
    if changed:
        write_text_atomic(path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def execute_notebook(
    notebook: str | Path,
    output: str | Path,
    parameters: Mapping | None = None,
    cwd: str | Path | None = None,
    progress: bool = True,
    timeout: int | None = None,
) -> Path:
    import papermill as pm

    from memeval.notebook_config import check_run_inputs
    from memeval.parameters import checked_parameters

    # refused here in one line, before a kernel starts or anything is written, as the notebook itself would
    parameters = checked_parameters(Path(notebook).stem, dict(parameters or {}))
    check_run_inputs(Path(notebook).stem, parameters)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    # The kernel inherits this process's environment: it must get the inline matplotlib backend, since any
    # other (Agg, say, from a user's MPLBACKEND) leaves every figure out of the executed notebook and its HTML,
    # and no progress bars, whose every redraw would become a line of the saved output.
    with kernel_environment(KERNEL_ENVIRONMENT):
        pm.execute_notebook(
            str(notebook),
            str(output),
            parameters=parameters,
            cwd=str(cwd or project_root()),
            progress_bar=progress,
            kernel_name="python3",
            execution_timeout=timeout,
            # the kernel app's own start-up warnings (a local kernel "running over TCP without encryption") are
            # noise in a reproduce log; the notebook's warnings still land in its outputs. The inline backend is
            # activated at start-up: activated lazily, by a notebook's first figure, inside a `style()` block, the
            # block's exit would turn interactive mode off again and every later figure would be left out.
            extra_arguments=["--IPKernelApp.log_level=ERROR", "--IPKernelApp.matplotlib=inline"],
        )
    return output


# Reports read as tables of results: text columns left-aligned and numbers right-aligned (set per column by
# `aligned_tables`) and never broken across lines, tables at the left edge, rows aligned at their top so a long
# question does not float.
REPORT_CSS = """<style>
.jp-Notebook .jp-Cell .jp-RenderedHTMLCommon table { margin-left: 0; margin-right: auto; }
.jp-Notebook .jp-Cell .jp-RenderedHTMLCommon td, .jp-Notebook .jp-Cell .jp-RenderedHTMLCommon th {
  text-align: left; vertical-align: top; font-variant-numeric: tabular-nums; }
.jp-RenderedHTMLCommon td[style*="text-align:right"], .jp-RenderedHTMLCommon th[style*="text-align:right"],
.jp-RenderedHTMLCommon td.memeval-token { white-space: nowrap; }
</style>
"""

_SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
_NUMBER = re.compile(r"^(?:[<>≈~±+−-]\s?)?\d[\d,]*(?:\.\d+)?(?:–\d[\d.]*)?(?:%| ±.*| \(.*\)| \[.*\])?$"
                     r"|^\[-?\d.*\]$|^\d{4}-\d{2}-\d{2}$")  # a number, its interval or ± std, or a date
_EMPTY = {"", "–", "-", "n/a"}
# a table cell holding one short token (a question id such as conv-26:q0139): kept on one line
_TOKEN_CELL = re.compile(r'<td( style="text-align:left")?>(?=[^<\s]{1,32}</td>)')


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _numeric(cell: str) -> bool | None:
    """True for a number (with its interval or ± std), None for an empty mark, False for text."""
    if cell in _EMPTY or cell.startswith("n/a"):
        return None
    return bool(_NUMBER.match(cell))


def aligned_tables(markdown: str) -> str:
    """Markdown tables with an alignment per column: right where every filled cell is a number, left otherwise."""
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if i == 0 or not _SEPARATOR.match(line) or not lines[i - 1].lstrip().startswith("|"):
            continue
        body = []
        for row in lines[i + 1:]:
            if not row.lstrip().startswith("|"):
                break
            body.append(_cells(row))
        width = len(_cells(line))
        marks = []
        for column in range(width):
            kinds = [_numeric(row[column]) for row in body if column < len(row)]
            filled = [k for k in kinds if k is not None]
            marks.append("---:" if filled and all(filled) else ":---")
        lines[i] = "|" + "|".join(marks) + "|"
    return "\n".join(lines)


def render_html(executed: str | Path, no_input: bool = False) -> Path:
    """The executed notebook as an HTML report: table columns aligned by content, and every absolute path under
    the reports directory, the repository or the home directory (printed, in a traceback or a warning) shown
    relative, since the report is read elsewhere."""
    import nbformat
    from nbconvert import HTMLExporter

    from memeval.reports.summary import relative_paths

    executed = Path(executed)
    exporter = HTMLExporter()
    if no_input:
        exporter.exclude_input = True
        exporter.exclude_input_prompt = True
        exporter.exclude_output_prompt = True
    nb = nbformat.read(str(executed), as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/markdown" in data:
                data["text/markdown"] = aligned_tables(data["text/markdown"])
    body, _ = exporter.from_notebook_node(nb)
    body = _TOKEN_CELL.sub(r'<td\1 class="memeval-token">', body)
    body = relative_paths(body.replace("</head>", REPORT_CSS + "</head>", 1), executed.parent)
    target = executed.with_name(executed.stem + (".no-input.html" if no_input else ".html"))
    write_text_atomic(target, body)
    return target


# The judged configuration: Claude reader and LLM judges where a notebook has them. It needs ANTHROPIC_API_KEY
# or a shared MEMEVAL_CACHE_DIR holding the calls (replay); anything missing is reported by the notebook.
JUDGED_PARAMETERS = {
    "01_prototype_scoring": {"answerer": "claude", "judge": "graded"},
    "02_full_run": {"answerer": "claude", "judge": "graded"},
    "06_memory_graph_study": {"answerer": "claude", "judge": "three_dim"},
}


# `memeval reproduce --quick`: every notebook end to end on small parameters (a smoke run of the whole pipeline
# in well under a minute; its numbers are not the published ones). The notebook tests run these too.
QUICK_PARAMETERS = {
    "01_prototype_scoring": {"systems": ["rag_turns", "no_memory"]},
    "02_full_run": {"conversations": "conv-26,conv-30", "questions": "first:15",
                    "systems": ["rag_turns", "observations", "full_context"]},
    "03_memaudit_small": {"seeds": 6, "budgets": [2, 4, 16], "certify": "milp", "jobs": 1},
    "04_memaudit_validity": {"seeds": 3, "certify": "milp", "jobs": 1},
    "05_memaudit_natural87": {"target": 5, "budgets": [30, 100], "noise_seeds": 1, "jobs": 1,
                              "conversation_scope": "conv-30", "conversation_budgets": [500, 2000]},
    "06_memory_graph_study": {"systems": ["memory_graph:hops=1", "chunks", "no_memory"], "repeats": 2},
    "08_longmemeval": {"questions": 20, "natural_target": 5},
    "09_trust": {"conversations": "conv-26,conv-30", "questions": "first:15", "systems": ["rag_turns", "full_context"]},
}


def reproduce(notebooks_dir: str | Path, out_dir: str | Path, only: list[str] | None = None,
              judged: bool = False, progress: bool = True, quick: bool = False) -> list[dict]:
    """Run every notebook on its offline defaults (or the judged configuration, or the quick parameters), in
    name order, rendering each as it finishes."""
    from papermill.exceptions import PapermillExecutionError

    notebooks = sorted(Path(notebooks_dir).glob("[0-9]*.ipynb"))
    if only:
        notebooks = [nb for nb in notebooks if any(nb.stem.startswith(o) for o in only)]
    results = []
    for i, nb in enumerate(notebooks, start=1):
        start = time.perf_counter()
        print(f"[{i}/{len(notebooks)}] {nb.name} ...", flush=True)
        params = {**(QUICK_PARAMETERS.get(nb.stem, {}) if quick else {}),
                  **(JUDGED_PARAMETERS.get(nb.stem, {}) if judged else {})}
        executed = Path(out_dir) / nb.name
        try:
            execute_notebook(nb, executed, params, progress=progress_enabled(progress))
        except PapermillExecutionError as exc:
            render_html(executed)
            said = " ".join(str(exc.evalue).split())[:300]
            raise NotebookFailed(nb.name, str(executed), f"{exc.ename} in cell {exc.exec_count}"
                                 + (f": {said}" if said else "")) from None
        html = render_html(executed)
        bare = render_html(executed, no_input=True)
        seconds = time.perf_counter() - start
        print(f"[{i}/{len(notebooks)}] {nb.name} done in {seconds:.1f} s -> {html.name}, {bare.name}", flush=True)
        results.append({"notebook": nb.name, "seconds": seconds, "html": str(html)})
    return results
