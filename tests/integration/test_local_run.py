"""``deploy/local/local_run.py`` (the README's local commands) against a real broker, and with none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import ConsumeFn
from tests.integration.daemon_proc import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "local" / "local_run.py"


def _local_run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the script with ``args``; its exit code, stdout and stderr."""
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          check=False)


class TestLocalRun:
    """The topics and produce commands."""

    async def test_topics_then_produce_reach_the_broker(self, kafka_bootstrap: str, tmp_path: Path,
                                                        consume: ConsumeFn) -> None:
        """With a broker, topics exist afterwards and every line of the file is a record of inference-logs."""
        lines = tmp_path / "lines.txt"
        lines.write_text("local run line one\nlocal run line two\n")
        topics = _local_run("--bootstrap-server", kafka_bootstrap, "topics")
        produced = _local_run("--bootstrap-server", kafka_bootstrap, "produce", str(lines))
        assert (0, 0, "sent 2 records to inference-logs\n") == (topics.returncode, produced.returncode, produced.stdout)
        values = {r.value for r in await consume("inference-logs", 1000, timeout_s=5.0)}
        assert {b"local run line one", b"local run line two"} <= values

    def test_broker_down_is_one_line_and_exit_1(self, tmp_path: Path) -> None:
        """With nothing listening at the address, each command prints one line naming it and exits 1."""
        address = f"127.0.0.1:{free_port()}"
        lines = tmp_path / "lines.txt"
        lines.write_text("a line\n")
        runs = [_local_run("--bootstrap-server", address, "topics"),
                _local_run("--bootstrap-server", address, "produce", str(lines))]
        assert [(1, f"local_run: {command}: cannot reach the Kafka broker at {address} (KafkaConnectionError); "
                    f"is it running? start it with `make broker-start`\n") for command in ("topics", "produce")] == [
            (run.returncode, run.stderr) for run in runs]

    def test_missing_file_is_one_line_and_exit_1(self, tmp_path: Path) -> None:
        """A FILE that does not exist is named on one line, exit 1, before any broker is contacted."""
        run = _local_run("--bootstrap-server", f"127.0.0.1:{free_port()}", "produce", str(tmp_path / "none.txt"))
        assert (1, f"local_run: produce: cannot read {tmp_path / 'none.txt'}: No such file or directory\n") == (
            run.returncode, run.stderr)
