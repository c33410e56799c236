"""benchmarks/request_bodies.py (issue 44's request yardstick): a fake logs what it receives under the running test,
and compare finds a body that changed, one request more, and lets through only a reordering of concurrent calls."""

import hashlib
import json
import urllib.request

from benchmarks.request_bodies import compare
from tests.loopback import JsonHandler, LoopbackServer


def _row(test: str, body: str, path: str = "/v1/messages") -> dict:
    return {"test": test, "phase": "call", "fake": "F", "method": "POST", "path": path, "headers": {}, "keys": {},
            "sha256": hashlib.sha256(body.encode()).hexdigest(), "body": body}


def _log(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_fake_logs_each_request_under_the_test_without_the_keys_value(tmp_path, monkeypatch):
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("MEMEVAL_FAKE_REQUEST_LOG", str(log))

    class Echo(LoopbackServer):
        def __init__(self):
            class Handler(JsonHandler):
                def do_POST(self):
                    self.send_json(self.read_json())

            self.serve(Handler)

    with Echo() as server:
        request = urllib.request.Request(server.url + "/v1/x?y=1", data=b'{"a": 1}', method="POST",
                                         headers={"x-api-key": "SECRET-KEY", "content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 (127.0.0.1)
            assert json.loads(reply.read()) == {"a": 1}
    (row,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert row["test"].endswith("::test_a_fake_logs_each_request_under_the_test_without_the_keys_value")
    assert (row["phase"], row["method"], row["path"], row["body"]) == ("call", "POST", "/v1/x?y=1", '{"a": 1}')
    assert row["sha256"] == hashlib.sha256(b'{"a": 1}').hexdigest() and row["keys"]["x-api-key"] is True
    assert "SECRET-KEY" not in log.read_text() and row["headers"]["content-type"] == "application/json"


def test_compare_finds_a_changed_body_and_an_extra_request_but_not_a_reordering(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows = [_row("t::one", '{"q": 1}'), _row("t::one", '{"q": 2}'), _row("t::two", '{"q": 3}')]
    _log(a, rows)
    _log(b, list(reversed(rows)))
    assert compare(a, b) == 0
    _log(b, [rows[0], _row("t::one", '{"q": 2, "temperature": 0}'), rows[2]])
    assert compare(a, b) == 1 and '"temperature": 0' in capsys.readouterr().out
    _log(b, [*rows, rows[2]])
    assert compare(a, b) == 1 and "t::two: 0 request(s) only in A, 1 only in B" in capsys.readouterr().out


def test_which_concurrent_call_went_out_is_scheduling_only_unless_strict(tmp_path, capsys):
    """A run stopped after one of two concurrent calls: either may be the one sent; both bodies are known."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _log(a, [_row("t::stop", '{"q": 1}'), _row("t::all", '{"q": 1}'), _row("t::all", '{"q": 2}')])
    _log(b, [_row("t::stop", '{"q": 2}'), _row("t::all", '{"q": 1}'), _row("t::all", '{"q": 2}')])
    assert compare(a, b) == 0 and "scheduling only: t::stop" in capsys.readouterr().out
    assert compare(a, b, strict=True) == 1
