"""Text from data never acts (issue 40, item 10): a directory name, a recorded command or an answer holding ESC ]52;…
BEL (OSC 52 writes the clipboard), ESC ]0;… (the terminal's title), `<script>`, `|`, backticks and newlines is
printed with its control characters as visible escapes, and every Markdown table shows it as text."""

from __future__ import annotations

import re

import pytest

from tests.rows import answer

OSC52 = "\x1b]52;c;aGVsbG8=\x07"  # "hello" into the clipboard
TITLE = "\x1b]0;pwned\x07"
HOSTILE = f"a{OSC52}<script>alert(1)</script> | b\nc `d` {TITLE}\u202eevil\x9b2J"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def no_controls(text: str) -> None:
    found = sorted({hex(ord(c)) for c in RAW.findall(text)})
    assert not found, f"control characters reach the terminal: {found}"


# --- the helpers ----------------------------------------------------------------------------------------------------
def test_shown_escapes_every_control_and_keeps_the_rest():
    from memeval.safe_text import shown

    assert shown(HOSTILE) == ("a\\x1b]52;c;aGVsbG8=\\x07<script>alert(1)</script> | b\\nc `d` \\x1b]0;pwned\\x07"
                              "\\u202eevil\\x9b2J")
    assert shown("line 1\n\tline 2\x1b[2J", lines=True) == "line 1\n\tline 2\\x1b[2J"
    assert shown("café ≥ 95% – ×100 · …") == "café ≥ 95% – ×100 · …"


def test_a_markdown_cell_from_data_renders_as_its_text():
    from memeval.reports.markdown import markdown_table

    table = markdown_table(["system", "answer"], [["s<b>", HOSTILE]])
    row = table.splitlines()[2]
    assert row == ("| s&lt;b&gt; | a\\x1b]52;c;aGVsbG8=\\x07&lt;script&gt;alert(1)&lt;/script&gt; \\| b c \\`d\\` "
                   "\\x1b]0;pwned\\x07\\u202eevil\\x9b2J |")
    assert len(table.splitlines()) == 3  # the newline did not start a row
    no_controls(table)


def test_ordinary_cells_are_unchanged():
    """What the published and headline tables hold renders exactly as before the escaping."""
    from memeval.reports.markdown import Markdown, markdown_table

    rows = [["rag_turns", "12.34", "[10.10, 14.52]", "n/a (1 conversation)", "–"],
            ["memory_graph:hops=1", "0.850 ± 0.010", "≥ 0.9", "4 (multi-hop)", 12],
            [Markdown("MEMAUDIT-Small `base`, gvt / OPT at B = 6"), "1.000", "0.97–0.99",
             Markdown("`memeval memaudit sweep small --budgets 6,12`"), "a499f06"]]
    assert markdown_table(["what", "ours", "CI", "n", "x"], rows) == "\n".join([
        "| what | ours | CI | n | x |", "|---|---|---|---|---|",
        "| rag_turns | 12.34 | [10.10, 14.52] | n/a (1 conversation) | – |",
        "| memory_graph:hops=1 | 0.850 ± 0.010 | ≥ 0.9 | 4 (multi-hop) | 12 |",
        "| MEMAUDIT-Small `base`, gvt / OPT at B = 6 | 1.000 | 0.97–0.99 | `memeval memaudit sweep small "
        "--budgets 6,12` | a499f06 |"])


@pytest.mark.parametrize("command, fence", [("memeval ls", "`"), ("echo `id` <b>", "``"), ("a``b`", "```")])
def test_a_recorded_command_is_one_code_span_it_cannot_close(command, fence):
    from memeval.reports.markdown import code_span, md_markup

    span = code_span(command)
    assert span.startswith(fence) and span.endswith(fence) and not span.startswith(fence + "`")
    assert md_markup(f"run <i>x</i>: {span}") == f"run &lt;i&gt;x&lt;/i&gt;: {span}"


def test_a_report_table_of_answers_shows_them_as_text():
    from memeval.benchmarks.locomo.report import extremes_table, per_question_table

    rows = [answer(f"conv-1:q{i:04d}", question=f"q{i} {HOSTILE}", gold="<img src=x onerror=alert(1)>",
                   prediction=HOSTILE, f1=i / 10) for i in range(3)]
    for text in (extremes_table(rows), per_question_table({"s|<x>": rows})):
        no_controls(text)
        assert "<script>" not in text and "<img" not in text
        assert "&lt;script&gt;" in text
        assert all(line.startswith("|") for line in text.split("\n\n")[0].splitlines())


# --- the commands -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile_sweep(tmp_path_factory):
    """A real sweep whose directory name (and so its recorded command) holds the hostile text."""
    from memeval.cli import main

    root = tmp_path_factory.mktemp("hostile")
    out = root / f"sw{OSC52}<script>|x`y`{TITLE}"
    assert main(["memaudit", "sweep", "small", "--budgets", "2", "--n-seeds", "1", "--no-progress",
                 "--out", str(out)]) == 0
    return out


def test_ls_shows_a_hostile_directory_and_command_as_text(hostile_sweep, cli):
    for argv in (["ls", hostile_sweep.parent], ["ls", "-l", hostile_sweep.parent]):
        result = cli(*argv, check=True)
        no_controls(result.stdout + result.stderr)
        assert "\\x1b]52;c;aGVsbG8=\\x07" in result.stdout
    assert "command: memeval memaudit sweep small" in result.stdout


@pytest.mark.parametrize("fmt", ["md", "csv", "html", "json"])
def test_results_show_a_hostile_directory_as_text(fmt, hostile_sweep, cli):
    result = cli("results", hostile_sweep, "--format", fmt, "--no-progress", check=True)
    no_controls(result.stdout + result.stderr)
    if fmt == "md":
        table = [line for line in result.stdout.splitlines() if line.startswith("|")]
        assert "&lt;script&gt;\\|x\\`y\\`" in table[0]
        assert len({line.count(" | ") for line in table if not line.startswith("|-")}) == 1  # columns kept
        note = next(line for line in result.stdout.splitlines() if line.startswith("- sw"))
        outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", note)  # whatever is left outside code spans
        assert "<" not in outside


def test_an_error_quoting_data_shows_it_as_text(cli, tmp_path):
    result = cli("ls", tmp_path / f"gone{OSC52}")
    assert result.returncode == 2
    no_controls(result.stderr)
    assert result.stderr.startswith("memeval: error: ") and "gone\\x1b]52" in result.stderr


def test_the_sweep_table_and_closing_line_show_a_hostile_out_as_text(cli, tmp_path):
    result = cli("memaudit", "sweep", "small", "--budgets", "2", "--n-seeds", "1", "--no-progress", "--out",
                 tmp_path / f"s{TITLE}", check=True)
    no_controls(result.stdout + result.stderr)


def test_solve_shows_hostile_candidate_ids_as_text(cli, tmp_path):
    import json

    doc = {"schema": "memaudit.package/v1", "package_id": "p1", "budget": 2, "max_per_group": 1,
           "experiences": [{"id": "e0", "text": "", "time": 0}],
           "candidates": [{"id": f"c{OSC52}", "experience": "e0", "kind": "fact", "cost": 1.0, "text": HOSTILE}],
           "units": [{"id": "u0", "weight": 1.0, "kind": "fact"}],
           "coverage": [{"candidate": f"c{OSC52}", "unit": "u0", "value": 1.0}]}
    path = tmp_path / f"p{TITLE}.json"
    path.write_text(json.dumps(doc))
    for argv in (["memaudit", "solve", path, "--method", "greedy"], ["memaudit", "validate", path]):
        result = cli(*argv, check=True)
        no_controls(result.stdout + result.stderr)


def test_a_closing_line_quoting_a_message_is_shown_as_text(capsys):
    from memeval.commands.arguments import finish

    assert finish(f"incomplete: 1 of 2 answers failed (plugin: ValueError: {OSC52}); rerun to retry them") == 4
    err = capsys.readouterr().err
    no_controls(err)
    assert err.startswith("memeval: incomplete: ") and "\\x1b]52;c;aGVsbG8=\\x07" in err and err.count("\n") == 1


def test_a_whole_run_report_shows_names_notes_and_answers_as_text():
    """report.md as `run_task` writes it: a system's name in headings, a note quoting a plug-in's message."""
    from memeval.benchmarks.locomo.report import run_report

    rows = [answer(f"conv-1:q{i:04d}", category=1 + i % 4, question=f"q{i}", gold="<b>gold</b>",
                   prediction=HOSTILE, f1=i / 10) for i in range(4)]
    text = run_report({"<script>s</script>": rows}, notes=[f"1 of 4 answers failed (plugin: ValueError: {HOSTILE})"])
    no_controls(text)
    assert "<script>" not in text and "<b>" not in text
    assert "## &lt;script&gt;s&lt;/script&gt;: top 5 questions" in text


def test_a_progress_bar_shows_a_hostile_label_as_text(locomo_dir, tmp_path, cli, monkeypatch):
    """`results` labels its BLEU-1 bar with the run's name: the bar, on stderr, printed it raw."""
    run = tmp_path / f"run{OSC52}"
    cli("locomo", "run", "--data", locomo_dir, "--conversations", "conv-26", "--questions", "first:2", "--systems",
        "rag_turns", "--no-progress", "--out", run, check=True)
    monkeypatch.setenv("MEMEVAL_PROGRESS", "1")
    result = cli("results", run, check=True)
    assert "\\x1b]52" in result.stderr, "the bar was not drawn: the test would not see it"
    no_controls(result.stdout + result.stderr.replace("\r", ""))  # tqdm's own carriage returns redraw the bar


def test_a_progress_bar_status_is_shown_as_text(capsys, monkeypatch):
    from memeval.progress import ProgressBar

    monkeypatch.setenv("MEMEVAL_PROGRESS", "1")
    with ProgressBar(2, f"run{TITLE}", "q", status=lambda: f"waiting for m{OSC52}", interval_s=0.01) as bar:
        bar._show()
        bar.update()
    err = capsys.readouterr().err
    assert "waiting for m\\x1b]52" in err
    no_controls(err.replace("\r", ""))


def test_the_viewer_page_title_shows_a_hostile_run_name_as_text(tmp_path):
    from memeval.viewer import render

    head = render({"runs": [{"label": f"run{TITLE}"}]}).split("<script", 1)[0]
    assert "run\\x1b]0;pwned" in head
    no_controls(head)
