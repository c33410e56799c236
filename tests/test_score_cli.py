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
