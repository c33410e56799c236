import json
import subprocess
import sys


def test_score_reports_bad_rows_and_scores_the_rest(tmp_path, cli):
    path = tmp_path / "predictions.jsonl"
    rows = [
        {"prediction": "the cat sat", "answer": "the cat sat", "category": 4},
        "not json",
        {"prediction": "dog", "answer": "cat", "category": 4},
        {"prediction": "x", "answer": "x", "category": 9},
        {"prediction": "Paris, London", "gold": "London and Paris", "category": 1},
        {"prediction": "not mentioned", "category": 5},
    ]
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    proc = cli("score", str(path), "--json")
    assert proc.returncode == 0
    result = json.loads(proc.stdout)
    assert [b["line"] for b in result["bad_rows"]] == [2, 4]
    assert result["by_category"]["4"]["count"] == 2 and result["by_category"]["4"]["mean_f1"] == 0.5
    # one gold part ("London and Paris") against the best single prediction part: 2/3
    assert abs(result["by_category"]["1"]["mean_f1"] - 2 / 3) < 1e-12
    assert abs(result["overall"] - (1 + 0 + 2 / 3 + 1) / 4) < 1e-12
    assert f"{path}:2:" in proc.stderr and f"{path}:4:" in proc.stderr
    text = cli("score", str(path), "--mode", "seed")
    assert "F1 mode: seed" in text.stdout and "single-hop (4)" in text.stdout


def test_score_missing_file_is_one_line_across_the_process_boundary(tmp_path):
    """The one test that runs `python -m memeval` as a process: exit code and stderr as a shell sees them."""
    proc = subprocess.run([sys.executable, "-m", "memeval", "score", str(tmp_path / "none.jsonl")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "none.jsonl" in proc.stderr


def test_score_by_system_on_the_reports_scale(tmp_path, cli):
    path = tmp_path / "p.jsonl"
    rows = [{"system": "a", "prediction": "the cat sat", "answer": "the cat sat", "category": 4},
            {"system": "a", "prediction": "dog", "answer": "cat", "category": 1},
            {"system": "a", "prediction": "not mentioned", "category": 5},
            {"system": "b", "prediction": "cat", "answer": "cat", "category": 4},
            {"prediction": "cat", "answer": "cat", "category": 4}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = cli("score", path, "--by", "system")
    assert text.returncode == 0 and f"{path}:5: system: missing (row skipped)" in text.stderr
    table = {line.split(" | ")[0].strip("| "): line for line in text.stdout.splitlines()}
    # a: categories 1 and 4 score 0 and 100, category 5 (abstains) 100 -> 1-4: 50.00, 1-5: 66.67
    assert table["a"].endswith("| 0.00 | – | – | 100.00 | 100.00 | 50.00 | 66.67 | 3 |")
    assert table["b"].endswith("| – | – | – | 100.00 | – | 100.00 | – | 1 |")
    doc = json.loads(cli("score", path, "--by", "system", "--json", check=True).stdout)
    assert doc["by_system"]["a"]["overall_1_4"] == 0.5 and doc["scale"] == "0-1"
    mem0 = cli("score", path, "--by", "system", "--mode", "mem0").stdout
    assert "category 5 is not scored in this mode" in mem0 and "| a | 0.00 | – | – | 100.00 | – | 50.00 | – | 2 |" in mem0


def test_score_errors_name_the_field_and_line_or_the_empty_file(tmp_path, cli):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"answer": "x", "category": 4}) + "\n" + json.dumps({"prediction": "x"}) + "\n")
    result = cli("score", path)
    assert result.returncode == 2  # nothing scorable is bad input: one error line like every error
    assert result.stderr.splitlines() == [f"memeval: error: {path}: predictions: none of its 2 rows could be "
                                          "scored (first: line 1: prediction: missing)"]
    path.write_text(path.read_text() + json.dumps({"prediction": "x", "answer": "x", "category": 4}) + "\n")
    result = cli("score", path)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [f"{path}:1: prediction: missing (row skipped)",
                                          f"{path}:2: category: missing (row skipped)"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = cli("score", empty)
    assert result.returncode == 2 and result.stderr.strip() == f"memeval: error: {empty}: predictions: empty file: no rows to score"
