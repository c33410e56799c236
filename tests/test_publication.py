import json

from memeval.publication import locomo_figure
from memeval.qa.locomo_run import LocomoRunConfig, run_locomo


def test_locomo_figure_adds_a_j_panel_only_when_judgments_exist(locomo_dir, tmp_path):
    run = tmp_path / "02_full_run" / "run"
    run_locomo(LocomoRunConfig(out=str(run), data=str(locomo_dir), conversations="conv-26", questions="prototype",
                               systems=["rag_turns"], progress=False))
    fig, caption = locomo_figure(tmp_path)
    assert len(fig.axes) == 2 and "1 conversations, 20 answers" in caption
    rows = [{"sample_id": f"conv-26:q{i:04d}", "system": "rag_turns", "category": 4, "protocol": "graded",
             "scores": [50.0], "mean": 50.0, "std": None, "run_count": 1} for i in range(3)]
    (run / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fig, _ = locomo_figure(tmp_path)
    assert len(fig.axes) == 3
    bars = fig.axes[2].patches
    assert [round(b.get_width(), 6) for b in bars] == [50.0]
