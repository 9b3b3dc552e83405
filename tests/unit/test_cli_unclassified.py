"""The command line of the unclassified tier: scan --unclassified and catalog draft (stdin, file, daemon)."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry

from logsig.cli import main
from logsig.daemon.http import HttpServer
from logsig.discovery.unclassified import Unclassified

BURST = [f"(EngineCore_DP{i} pid={100 + i}) ERROR 09-24 20:59:5{i} [core.py:790] Invocation of collective_rpc method failed"
         for i in range(3)]
OTHER = "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge"
GENERIC_FAMILY = Path(__file__).parents[2] / "logsig/matchers/catalog/builtin/generic"
"""Only the generic family is loaded, so a specific signature added later does not change these tests."""


def _scan_unclassified(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    path = tmp_path / "in.log"
    path.write_text("\n".join([*BURST, OTHER, "INFO 09-24 20:59:50 [api_server.py:1] all good"]) + "\n")
    assert 0 == main(["scan", str(path), "--no-builtin", "--catalog", str(GENERIC_FAMILY), "--unclassified", *extra])
    return capsys.readouterr().out


@contextmanager
def _daemon_http(view: Unclassified) -> Iterator[int]:
    """The daemon's HTTP server on 127.0.0.1 in a thread of its own; yields its port."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = HttpServer(CollectorRegistry(), lambda: None, "127.0.0.1", 0, unclassified=view)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server.port
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


class TestScanUnclassified:
    """logsig scan --unclassified."""

    def test_json_lines_most_frequent_first(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The burst is one template of count 3, first; the other failure follows; no incidents are written."""
        rows = [json.loads(line) for line in _scan_unclassified(tmp_path, capsys).splitlines()]
        assert [(3, "generic/error-log-record"), (1, "generic/python-exception")] == [
            (r["count"], r["signature_id"]) for r in rows]
        assert "Invocation of collective_rpc method failed" in rows[0]["template"]

    def test_text_table_and_limit(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--format text prints the totals and the top N templates with their fingerprint."""
        out = _scan_unclassified(tmp_path, capsys, "1", "--format", "text")
        assert out.startswith("4 unclassified lines, 2 templates tracked (top 1 below)")
        assert "collective_rpc" in out and "HeaderTooLarge" not in out


class TestCatalogDraft:
    """logsig catalog draft."""

    def test_from_stdin(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """Example lines on stdin give a YAML record whose regex matches them; exit 0."""
        monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(BURST) + "\n"))
        assert 0 == main(["catalog", "draft"])
        record = yaml.safe_load(capsys.readouterr().out)
        assert (r"Invocation\s+of\s+collective_rpc\s+method\s+failed", BURST) == (
            record["regex"], record["examples"]["match"])

    def test_from_a_scan_file_and_check_rejects_it(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--template with a scan --unclassified file drafts that template; catalog check fails it until filled."""
        top = tmp_path / "top.jsonl"
        top.write_text(_scan_unclassified(tmp_path, capsys))
        fingerprint = json.loads(top.read_text().splitlines()[1])["fingerprint"]
        draft = tmp_path / "draft.yaml"
        assert 0 == main(["catalog", "draft", "--template", fingerprint, "--from", str(top), "-o", str(draft)])
        assert [OTHER] == yaml.safe_load(draft.read_text())["examples"]["match"]
        assert 0 == main(["catalog", "test", str(draft)])
        assert 1 == main(["catalog", "check", str(draft)])
        assert "still holds the placeholder '<fill in>'" in capsys.readouterr().out

    def test_from_the_daemon(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--from http://... reads the template from the daemon's /unclassified endpoint."""
        view = Unclassified()
        view.topk.add("00aa11bb22cc33dd", "ValueError: bad value <NUM> for rope_scaling", line="ValueError: bad value 7 for rope_scaling",
                      seen_at=0.0, signature_id="generic/python-exception")
        with _daemon_http(view) as port:
            code = main(["catalog", "draft", "--template", "00aa11bb22cc33dd", "--from", f"http://127.0.0.1:{port}"])
            missing = main(["catalog", "draft", "--template", "ffffffffffffffff", "--from", f"http://127.0.0.1:{port}"])
        out, err = capsys.readouterr()
        assert (0, 2) == (code, missing)
        assert ["ValueError: bad value 7 for rope_scaling"] == yaml.safe_load(out)["examples"]["match"]
        assert "no unclassified template with fingerprint 'ffffffffffffffff'" in err

    def test_no_input_is_exit_2(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        """No example lines and no --template is a usage error naming both ways."""
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        assert 2 == main(["catalog", "draft"])
        assert "no example lines on stdin" in capsys.readouterr().err

    @pytest.mark.parametrize(("content", "says"), [
        ("kafka:\n  topics: [a]\n", ":1: not JSON; expected the JSON lines `logsig scan --unclassified FILE` writes"),
        ('{"a": 1}\n', ":1: not a template entry (found keys a); expected the JSON lines"),
        ("[1, 2]\n", ":1: not a template entry (found a JSON list); expected"),
        ("4 unclassified lines, 2 templates tracked (top 2 below)\n",
         ":1: not JSON (this is `--format text` output: scan again without it); expected"),
    ])
    def test_wrong_file_says_what_was_expected(self, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               content: str, says: str) -> None:
        """A --from file that is not `scan --unclassified` JSON lines is exit 2, naming the line and what was expected."""
        wrong = tmp_path / "wrong.txt"
        wrong.write_text(content)
        assert 2 == main(["catalog", "draft", "--template", "00aa11bb22cc33dd", "--from", str(wrong)])
        assert f"logsig: {wrong}{says}" in capsys.readouterr().err

    def test_missing_file_says_what_was_expected(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A --from file that does not exist is exit 2, with the reason and what was expected."""
        assert 2 == main(["catalog", "draft", "--template", "00aa11bb22cc33dd", "--from", str(tmp_path / "no.jsonl")])
        assert (f"logsig: {tmp_path / 'no.jsonl'}: cannot read it (No such file or directory); expected the JSON lines "
                "`logsig scan --unclassified FILE` writes: one object per template with fingerprint, template and "
                "example\n") == capsys.readouterr().err

    def test_from_without_template_is_exit_2(self, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
        """--from without --template is refused instead of being ignored while stdin is drafted."""
        monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(BURST) + "\n"))
        assert 2 == main(["catalog", "draft", "--from", "top.jsonl"])
        assert "--from top.jsonl needs --template FINGERPRINT" in capsys.readouterr().err
