"""The kill -9 fault test, longer: N trials (default 40) against a broker of its own.

    python bench/fault_kill.py [--trials 40] [--lines 200] [--seed 13]

Same trials as tests/integration/test_fault_kill.py (tests/integration/kill_trials.py): the daemon
killed with SIGKILL at random moments under load, every other kill with the broker frozen (SIGSTOP)
between produce and commit. Prints kills, lines, incidents, duplicates, lost lines and lines whose
copies differ in event_id (both must be 0), and exits 1 otherwise. Needs Java 17+ (the local broker).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.kill_trials import run_kill_trials
from tests.integration.local_kafka import load_kafka_script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    kafka = load_kafka_script()
    with tempfile.TemporaryDirectory(prefix="logsig-kill-") as tmp:
        state = Path(tmp) / "broker"
        broker = kafka.start(state)
        try:
            report = asyncio.run(run_kill_trials(str(broker.bootstrap), broker.pid, Path(tmp), args.trials,
                                                 args.lines, args.seed))
        finally:
            kafka.stop(state)
    print(report.summary())
    return 0 if not (report.lost or report.ids_differing) else 1


if __name__ == "__main__":
    sys.exit(main())
