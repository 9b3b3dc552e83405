"""The command line: scan, catalog check/test, config show."""

import json
from pathlib import Path

import pytest

from logsig.cli import main
from logsig.matchers.catalog.loader import load_catalog

SEED_ID = "llm/vllm-cuda-oom-during-prefill"
TORCH_OOM = "cuda/torch-oom"
"""The primary of the seed's own line on a stream whose server is unknown (a pod named vllm-0 says nothing)."""


class TestScan:
    def test_scan_writes_incidents_and_a_summary(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file with a Fluent Bit record of an OOM line gives one incident with the pod, and a summary."""
        oom = load_catalog().by_id()[SEED_ID].signature
        record = {"log": oom, "kubernetes": {"pod_name": "vllm-0", "namespace_name": "ml"}}
        path = tmp_path / "in.log"
        path.write_text("INFO all good\n" + json.dumps(record) + "\n")
        assert 0 == main(["scan", str(path)])
        out, err = capsys.readouterr()
        incidents = [json.loads(line) for line in out.splitlines()]
        assert [("opened", TORCH_OOM, "vllm-0", "ml", 2), ("resolved", TORCH_OOM, "vllm-0", "ml", 2)] == [
            (i["status"], i["signature"]["id"], i["source"]["pod"], i["source"]["namespace"],
             i["source"]["line_number"]) for i in incidents]
        assert "scanned 2 records" in err
        assert TORCH_OOM in err

    def test_scan_groups_a_burst_by_log_time(self, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """1,000 OOM lines logged 10 ms apart give one group: opened, one update per 2 s of log time, resolved."""
        monkeypatch.setenv("LOGSIG_GROUPING__UPDATE_INTERVAL_SECONDS", "2")
        oom = load_catalog().by_id()[SEED_ID].signature
        records = [{"@timestamp": 1_746_361_380.0 + i / 100, "log": oom,
                    "kubernetes": {"pod_name": "vllm-0", "namespace_name": "ml"}} for i in range(1000)]
        path = tmp_path / "burst.log"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        assert 0 == main(["scan", str(path)])
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [("opened", 1), ("updated", 201), ("updated", 401), ("updated", 601), ("updated", 801),
                ("resolved", 1000)] == [(e["status"], e["group"]["occurrences"]) for e in events]

    def test_scan_without_grouping_writes_one_event_per_line(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        """grouping.enabled false: every matching line is its own event, with no status."""
        monkeypatch.setenv("LOGSIG_GROUPING__ENABLED", "false")
        oom = load_catalog().by_id()[SEED_ID].signature
        path = tmp_path / "in.log"
        path.write_text(f"{oom}\n{oom}\n")
        assert 0 == main(["scan", str(path)])
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [(None, 1), (None, 2)] == [(e["status"], e["source"]["line_number"]) for e in events]

    def test_missing_file_is_exit_2(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file that does not exist is reported, exit code 2."""
        assert 2 == main(["scan", str(tmp_path / "nope.log")])
        assert "nope.log" in capsys.readouterr().err


class TestCatalogCommands:
    def test_check_lists_every_problem(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """catalog check exits 1 and names file, id and field of each problem."""
        path = tmp_path / "bad.yaml"
        path.write_text("- id: a/b\n  signature: s\n  regex: '(x'\n- id: a/c\n  signature: s\n  regex: ''\n")
        assert 1 == main(["catalog", "check", str(path)])
        out = capsys.readouterr().out
        assert f"{path}: a/b: regex: does not compile" in out
        assert f"{path}: a/c: regex" in out

    def test_test_reports_failing_examples(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """catalog test exits 1 with a diff naming the signature and the line."""
        path = tmp_path / "c.yaml"
        path.write_text("id: a/b\nsignature: s\nregex: boom\nexamples: {match: [bang], no_match: [boom!]}\n")
        assert 1 == main(["catalog", "test", str(path)])
        out = capsys.readouterr().out
        assert "FAIL a/b" in out
        assert "should match, did not: 'bang'" in out
        assert "should not match, did: 'boom!'" in out

    def test_builtin_catalog_passes_its_own_tests(self, capsys: pytest.CaptureFixture[str]) -> None:
        """catalog test on the built-in catalog exits 0."""
        assert 0 == main(["catalog", "test"])
        assert " 0 failed" in capsys.readouterr().out


class TestConfigShow:
    def test_secrets_masked(self, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
        """config show prints the effective settings with the SASL password masked."""
        monkeypatch.setenv("LOGSIG_KAFKA__SASL_PASSWORD", "hunter2")
        assert 0 == main(["config", "show"])
        out = capsys.readouterr().out
        assert "hunter2" not in out
        assert "sasl_password: '**********'" in out

    def test_unknown_key_is_exit_2(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A settings file with an unknown key exits 2 naming the key."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  topic: x\n")
        assert 2 == main(["config", "show", "--config", str(path)])
        assert "kafka.topic: unknown key" in capsys.readouterr().err
