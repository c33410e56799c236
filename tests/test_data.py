import json
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memeval.benchmarks.locomo.data import load_locomo, load_locomo_with_report, stats
from memeval.benchmarks.locomo.datasets import fetch_locomo
from memeval.data.fetch import sha256_file
from memeval.data.paths import find_locomo
from memeval.errors import DataNotFoundError, InputError


def _single_file_from_per_conversation(src_dir: Path, target: Path) -> Path:
    """Rebuild the harness layout (one locomo10.json list) from the per-conversation files."""
    samples = []
    for path in sorted(src_dir.glob("*.json"), key=lambda p: int(p.stem)):
        flat = json.loads(path.read_text())
        conversation = {k: v for k, v in flat.items() if k.startswith(("speaker_", "session_")) and not k.endswith(("_observation", "_summary"))}
        samples.append(
            {
                "sample_id": f"conv-{path.stem}",
                "conversation": conversation,
                "qa": flat["qa"],
                "observation": {k: v for k, v in flat.items() if k.endswith("_observation")},
                "session_summary": {k: v for k, v in flat.items() if k.endswith("_summary")},
                "event_summary": {k: v for k, v in flat.items() if k.startswith("events_session_")},
            }
        )
    target.write_text(json.dumps(samples))
    return target


def test_category_counts(conversations):
    result = stats(conversations)
    assert result["conversations"] == 10
    assert result["questions"] == 1986
    assert result["by_category"] == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}


def test_all_layouts_yield_identical_records(locomo_dir, conversations, tmp_path):
    single = _single_file_from_per_conversation(locomo_dir / "locomo10_v2", tmp_path / "locomo10.json")
    assert load_locomo(single) == conversations
    assert load_locomo(tmp_path) == conversations  # a directory holding locomo10.json
    assert load_locomo(locomo_dir / "locomo10.zip") == conversations
    assert load_locomo(locomo_dir) == conversations


def test_quirks_are_counted_not_fatal(locomo_dir):
    conversations, report = load_locomo_with_report(locomo_dir / "locomo10_v2")
    assert report.quirks["integer_answer"] == 6
    assert report.quirks["adversarial_answer_only"] == 444
    assert report.quirks["repaired_evidence_id"] == 2
    assert report.quirks["unresolvable_evidence_id"] == 3
    assert report.quirks["empty_evidence"] == 4
    assert report.quirks["date_without_session"] == 16
    by_id = {q.sample_id: q for c in conversations for q in c.qa}
    assert "D11:26" in by_id["conv-43:q0018"].evidence_ids
    assert "D30:5" in by_id["conv-50:q0069"].evidence_ids
    assert by_id["conv-42:q0058"].unresolved_evidence == ("D10:19",)
    split = [q for q in by_id.values() if q.evidence == ("D8:6; D9:17",)]
    assert len(split) == 1 and split[0].evidence_ids == ("D8:6", "D9:17")
    cat5 = [q for q in by_id.values() if q.category == 5]
    assert sum(q.answer is not None for q in cat5) == 2
    assert all(q.adversarial_answer for q in cat5 if q.answer is None)
    assert all(isinstance(q.answer, str) for q in by_id.values() if q.answer is not None)


def test_turn_and_session_records(conversations):
    conv = conversations[0]
    assert conv.sample_id == "conv-26"
    first = conv.sessions[0]
    assert first.date_time == "1:56 pm on 8 May, 2023"
    assert first.date.year == 2023 and first.date.month == 5 and first.date.hour == 13
    turn = conv.turn_by_id()["D1:5"]
    assert turn.blip_caption and turn.session == 1 and turn.speaker == "Caroline"
    assert conv.observations and all(o.source_ids for o in conv.observations[:10])
    assert 1 in conv.session_summaries


@pytest.mark.parametrize(
    "content, field",
    [
        ('{"x": ', "json"),
        ('[{"sample_id": "conv-1", "conversation": {"speaker_a": "A"}}]', "speaker_b"),
        ('[{"sample_id": "conv-1", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [{"speaker": "A", "dia_id": "D1:1"}]}, "qa": []}]', "session_1[0].text"),
        ('[{"sample_id": "conv-1", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": []}, "qa": [{"question": "q", "category": "2", "answer": "a"}]}]', "qa[0].category"),
        ('"just a string"', "json"),
    ],
)
def test_malformed_files_name_file_and_field(tmp_path, content, field, cli):
    path = tmp_path / "locomo10.json"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        load_locomo(path)
    assert str(path) in str(err.value) and field in str(err.value)
    proc = cli("data", "stats", str(path))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and field in proc.stderr


def test_stats_cli_json(locomo_dir, cli):
    proc = cli("data", "stats", str(locomo_dir), "--json", check=True)
    result = json.loads(proc.stdout)
    assert result["by_category"] == {"1": 282, "2": 321, "3": 96, "4": 841, "5": 446}
    assert result["turns"] == 5882 and result["sessions"] == 272


def test_discovery_order(tmp_path, monkeypatch, locomo_dir):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMEVAL_DATA_LOCOMO", raising=False)
    explicit = tmp_path / "explicit.json"
    explicit.write_text("[]")
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    (env_dir / "locomo10.json").write_text("[]")
    local = tmp_path / "data" / "locomo"
    local.mkdir(parents=True)
    (local / "locomo10.json").write_text("[]")
    monkeypatch.setenv("MEMEVAL_DATA_LOCOMO", str(env_dir))
    assert find_locomo(explicit) == explicit
    assert find_locomo() == env_dir
    monkeypatch.delenv("MEMEVAL_DATA_LOCOMO")
    assert find_locomo() == local
    shutil.rmtree(local)
    assert find_locomo().resolve() == locomo_dir.resolve()  # ../shared/data/locomo beside the checkout
    with pytest.raises(DataNotFoundError, match="memeval data fetch locomo"):
        find_locomo(tmp_path / "missing.json")


@pytest.fixture()
def http_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_fetch_from_loopback_verifies_checksum(http_server, locomo_dir, tmp_path, conversations):
    root, base = http_server
    single = _single_file_from_per_conversation(locomo_dir / "locomo10_v2", root / "locomo10.json")
    digest = sha256_file(single)
    dest = tmp_path / "dest"
    with pytest.raises(InputError, match="checksum mismatch"):
        fetch_locomo(dest, source=f"{base}/locomo10.json")  # not the public file's hash
    assert not dest.exists() or not any(dest.iterdir())
    target = fetch_locomo(dest, source=f"{base}/locomo10.json", sha256=digest)
    assert target == dest / "locomo10.json" and sha256_file(target) == digest
    assert load_locomo(dest) == conversations
    assert [p.name for p in dest.iterdir()] == ["locomo10.json"]


def test_fetch_local_zip_with_known_hash(locomo_dir, tmp_path):
    target = fetch_locomo(tmp_path / "d", source=str(locomo_dir / "locomo10.zip"))
    assert target.name == "locomo10.zip"
    assert stats(load_locomo(tmp_path / "d"))["questions"] == 1986


def test_fetch_rejects_bad_content_even_with_matching_hash(tmp_path):
    bad = tmp_path / "locomo10.json"
    bad.write_text('{"not": "locomo"')
    with pytest.raises(InputError):
        fetch_locomo(tmp_path / "dest", source=str(bad), sha256=sha256_file(bad))
    assert not (tmp_path / "dest" / "locomo10.json").exists()


def test_fetch_cli_error_is_one_line(tmp_path, cli):
    proc = cli("data", "fetch", "locomo", "--dest", tmp_path / "x", "--source", tmp_path / "nope.json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "nope.json" in proc.stderr


def test_stats_names_the_path_it_was_given_not_a_flag_it_lacks(cli, tmp_path):
    """`data stats` has no --data: a PATH that is not there is named as the path, and a data set's name given as
    PATH is pointed at --dataset."""
    missing = tmp_path / "nothing.json"
    for argv, said in ((["longmemeval"], "longmemeval: path: no such file or directory; a data set is named by "
                                         "--dataset: `memeval data stats --dataset longmemeval FILE`"),
                       ([str(missing)], f"{missing}: path: no such file or directory (read as locomo"),
                       (["--dataset", "longmemeval", str(missing)], f"{missing}: path: no such file or directory "
                                                                    "(read as longmemeval")):
        proc = cli("data", "stats", *argv)
        assert proc.returncode == 2 and "--data " not in proc.stderr, argv
        assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and said in proc.stderr, argv
