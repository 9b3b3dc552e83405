"""Helpers of the fault tests: CPU time of a process, deleting topics, matching lines, polling."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from aiokafka.admin import AIOKafkaAdminClient

from logsig.matchers.catalog.loader import load_catalog

SEED_ID = "llm/vllm-cuda-oom-during-prefill"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds ``pid`` has used (``/proc/PID/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def oom_lines(start: int, count: int) -> list[bytes]:
    """``count`` distinct log lines (numbered from ``start``) that match the seed signature."""
    text = load_catalog().by_id()[SEED_ID].signature
    return [orjson.dumps({"log": f"{text} (line {i})", "stream": "stderr"}) for i in range(start, start + count)]


def line_numbers(values: list[bytes]) -> list[int]:
    """The ``(line N)`` numbers of incident values, sorted (repeats kept)."""
    out = []
    for value in values:
        line = orjson.loads(value)["match"]["line"]
        out.append(int(line.rsplit("(line ", 1)[1].rstrip(")")))
    return sorted(out)


async def delete_topic(bootstrap: str, name: str) -> None:
    """Delete topic ``name``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics([name])
    finally:
        await admin.close()


async def wait_for(predicate: Callable[[], bool], what: str, timeout_s: float = 90.0) -> None:
    """Poll ``predicate`` every 0.1 s until true; AssertionError naming ``what`` past the deadline."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not reached in {timeout_s} s"
        await asyncio.sleep(0.1)
