"""kill -9 under load, ten times, half of them with the broker frozen between produce and commit:
nothing is lost and every duplicate carries the same event_id (see tests/integration/kill_trials.py)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.kill_trials import run_kill_trials
from tests.integration.local_kafka import load_kafka_script

TRIALS = 10


class TestKill:
    async def test_ten_kills_lose_nothing_and_duplicates_share_event_id(self, tmp_path: Path) -> None:
        """10 SIGKILLs (5 with the broker under SIGSTOP) over 2,000 lines: 0 lost, one event_id per line."""
        kafka, state = load_kafka_script(), tmp_path / "broker"
        broker = kafka.start(state)
        try:
            report = await run_kill_trials(str(broker.bootstrap), broker.pid, tmp_path, TRIALS)
        finally:
            kafka.stop(state)
        print(report.summary())
        assert (TRIALS, 5, 2000) == (report.trials, report.frozen, report.lines)
        assert ([], []) == (report.lost, report.ids_differing)
