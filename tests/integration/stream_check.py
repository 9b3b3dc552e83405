"""A numbered stream of failure lines for fault tests: produce it, tail the incidents, count losses.

Line ``i`` is the seed OOM line followed by `` req-<i>``; each incident's ``match.line`` names the
line it came from, so losses (a line with no incident) and duplicates (more than one) are exact.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import UnknownTopicOrPartitionError

from logsig.matchers.catalog.loader import load_catalog

SEED_ID = "llm/vllm-cuda-oom-during-prefill"
SEED_LINE = load_catalog().by_id()[SEED_ID].signature
LINE_PRIMARY = "cuda/torch-oom"
"""The primary of :func:`line` (plain text, so the server is unknown: the torch record, the seed also matched)."""
LINE_ID = re.compile(r" req-(\d+)$")
Isolation = Literal["read_committed", "read_uncommitted"]


def line(index: int) -> bytes:
    """Input line ``index``: a real vLLM OOM line tagged with its number."""
    return f"{SEED_LINE} req-{index}".encode()


def pod_key(index: int) -> bytes:
    """Line ``index`` comes from pod ``index % 4``: with two partitions, pods 0 and 2 share partition 0."""
    return f"pod-{index % 4}".encode()


def traceback_records(index: int) -> list[bytes]:
    """Line ``index`` as the last of a 4-record Python traceback (assembled into one event), every
    fourth index (pod 0's lines, see :func:`pod_key`); else the single line. Pod 0's traceback stays
    open until pod 0's next line, while pod 2's lines on the same partition go on behind it."""
    if index % 4:
        return [line(index)]
    return [b"Traceback (most recent call last):", b'  File "/app/vllm/worker.py", line 12, in execute_model',
            b"    output = self.model(input_ids)", line(index)]


@dataclass
class Tail:
    """Incidents read from the output topic: line number -> arrival times (monotonic seconds)."""

    arrivals: dict[int, list[float]] = field(default_factory=dict)
    event_ids: dict[int, set[str]] = field(default_factory=dict)

    def add(self, incident: dict[str, Any], at: float) -> None:
        found = LINE_ID.search(incident["match"]["line"])
        assert found is not None, incident["match"]["line"]
        index = int(found.group(1))
        self.arrivals.setdefault(index, []).append(at)
        self.event_ids.setdefault(index, set()).add(incident["event_id"])

    def lost(self, sent: int) -> list[int]:
        """Line numbers below ``sent`` with no incident."""
        return [i for i in range(sent) if i not in self.arrivals]

    def duplicates(self) -> int:
        """Incidents beyond the first, over every line."""
        return sum(len(times) - 1 for times in self.arrivals.values())

    def duplicate_ids_differ(self) -> list[int]:
        """Lines whose repeated incidents carry different event_ids."""
        return [i for i, ids in self.event_ids.items() if len(ids) > 1]

    def first_after(self, lines_from: int) -> float | None:
        """Earliest arrival of an incident of a line numbered ``lines_from`` or more."""
        times = [t[0] for i, t in self.arrivals.items() if i >= lines_from]
        return min(times) if times else None

    def per_line_counts(self) -> Counter[int]:
        return Counter({i: len(t) for i, t in self.arrivals.items()})


async def make_topics(bootstrap: str, names: list[str], replicas: list[int] | None = None,
                      partitions: int = 1) -> None:
    """Create ``names``; with ``replicas`` every partition is placed on those node ids (the first leads)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        if replicas is None:
            topics = [NewTopic(name, partitions, 1) for name in names]
        else:
            assignment = {p: replicas for p in range(partitions)}
            topics = [NewTopic(name, -1, -1, replica_assignments=assignment) for name in names]
        await admin.create_topics(topics)
        deadline = time.monotonic() + 60
        while not await _led(admin, names, partitions):
            assert time.monotonic() < deadline, f"topics {names} have no leaders in time"
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


async def _led(admin: AIOKafkaAdminClient, names: list[str], partitions: int) -> bool:
    described = await admin.describe_topics(names)
    leaders = [p["leader"] for t in described if t["error_code"] == 0 for p in t["partitions"]]
    return len(leaders) == partitions * len(names) and all(leader >= 0 for leader in leaders)


async def leaders(bootstrap: str, topic: str, timeout_s: float = 30.0) -> dict[int, int]:
    """Partition -> leader node id of ``topic`` once the node asked knows the topic (-1: no leader)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            described = await admin.describe_topics([topic])
            found = {p["partition"]: p["leader"] for t in described if t["error_code"] == 0 for p in t["partitions"]}
            if found:
                return found
            assert time.monotonic() < deadline, f"topic {topic} unknown to the cluster in time"
            await asyncio.sleep(0.2)
    finally:
        await admin.close()


class Producer:
    """The log shipper: sends ``make(i)`` (default ``[line(i)]``: the records of line ``i``) in order, with
    key ``key(i)`` (default none), to partition ``i % partitions``, one acknowledged send at a time, and remembers when each line was
    acknowledged (monotonic seconds) and the longest wait for one acknowledgement."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = 1,
                 make: Callable[[int], list[bytes]] | None = None,
                 key: Callable[[int], bytes | None] | None = None) -> None:
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.make = make or (lambda index: [line(index)])
        self.key = key or (lambda index: None)
        self.sent = 0
        self.longest_ack_s = 0.0
        self.acked_at: list[float] = []

    async def run(self, count: int, interval_s: float) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, enable_idempotence=True, acks="all",
                                    request_timeout_ms=60000)
        await producer.start()
        try:
            while self.sent < count:
                started = time.monotonic()
                for value in self.make(self.sent):
                    await producer.send_and_wait(self.topic, value, key=self.key(self.sent),
                                                 partition=self.sent % self.partitions)
                self.acked_at.append(time.monotonic())
                self.longest_ack_s = max(self.longest_ack_s, self.acked_at[-1] - started)
                self.sent += 1
                await asyncio.sleep(interval_s)
        finally:
            await producer.stop()


async def tail(bootstrap: str, topic: str, into: Tail, stop: asyncio.Event,
               isolation_level: Isolation = "read_uncommitted") -> None:
    """Read ``topic`` from the start into ``into`` until ``stop`` is set and a poll comes back empty."""
    consumer = await _started_consumer(bootstrap, topic, isolation_level)
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=300)
            now = time.monotonic()
            for batch in batches.values():
                for record in batch:
                    into.add(orjson.loads(record.value), now)
            if stop.is_set() and not batches:
                return
    finally:
        await consumer.stop()


async def _started_consumer(bootstrap: str, topic: str, isolation_level: Isolation,
                            timeout_s: float = 60.0) -> AIOKafkaConsumer:
    """A started consumer of ``topic``. On a 3-node cluster the node answering the first metadata
    request may not know a topic just created on another (``start()`` then raises
    UnknownTopicOrPartitionError): start again until one does; metadata_max_age_ms keeps later
    answers fresh too (the default would wait 5 minutes to ask again)."""
    deadline = time.monotonic() + timeout_s
    while True:
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                    enable_auto_commit=False, group_id=None, isolation_level=isolation_level,
                                    metadata_max_age_ms=1000)
        try:
            await consumer.start()
            return consumer
        except UnknownTopicOrPartitionError:
            await consumer.stop()
            assert time.monotonic() < deadline, f"topic {topic} unknown to the cluster in {timeout_s} s"
            await asyncio.sleep(0.5)


async def wait_for(predicate: Any, timeout_s: float, what: str,
                   watch: tuple[asyncio.Task[Any], ...] = ()) -> None:
    """Poll ``predicate()`` every 0.1 s until true; AssertionError naming ``what`` past ``timeout_s``.
    A task of ``watch`` that ends meanwhile (a reader that failed) ends the wait with its error."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        for task in watch:
            if task.done():
                task.result()
                raise AssertionError(f"{task.get_name()} ended before {what}")
        assert time.monotonic() < deadline, f"{what} not reached in {timeout_s} s"
        await asyncio.sleep(0.1)
