"""Kafka source: an aiokafka consumer in a consumer group, manual commits only."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError

from logsig.batch import RecordBatch, Run
from logsig.config import KafkaSettings
from logsig.kafka import client_options
from logsig.records import TP, Origin, RawRecord
from logsig.sources import Rebalance

log = structlog.get_logger("logsig.source")


async def _ignore(_: set[TP]) -> None:
    return None


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, revoked: Rebalance, assigned: Rebalance) -> None:
        self._revoked, self._assigned = revoked, assigned

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._revoked({(tp.topic, tp.partition) for tp in revoked})

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self._assigned({(tp.topic, tp.partition) for tp in assigned})


def within_bytes(batch: RecordBatch, max_bytes: int) -> tuple[RecordBatch, dict[TP, int]]:
    """The leading records of ``batch`` whose values and keys (bytes after decompression) add up to at
    most ``max_bytes`` (always the first one), and, per partition left out, the first offset not taken
    (to seek back to)."""
    values, keys = batch.values, batch.keys
    if _total(values) + _total(keys) <= max_bytes:
        return batch, {}
    sizes = itertools.accumulate(len(v or b"") + len(k or b"") for v, k in zip(values, keys, strict=True))
    cut = next((i for i, total in enumerate(sizes) if total > max_bytes and i > 0), len(batch))
    if cut == len(batch):
        return batch, {}
    rewind: dict[TP, int] = {}
    for run in batch.runs:
        if run.end > cut and run.topic is not None and run.partition is not None:
            rewind.setdefault((run.topic, run.partition), batch.offsets[max(run.start, cut)])
    return batch.head(cut), rewind


def _total(parts: Sequence[bytes | str | None]) -> int:
    """Sum of the lengths of ``parts`` (None counts 0)."""
    if None in parts:
        return sum(len(p or b"") for p in parts)
    return sum(map(len, parts))  # type: ignore[arg-type]


def _key_text(key: bytes | None) -> str | None:
    return None if key is None else key.decode("utf-8", errors="replace")


class Message(Protocol):
    """What the batch needs of an aiokafka ``ConsumerRecord``."""

    @property
    def value(self) -> bytes | None: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def headers(self) -> Sequence[tuple[str, bytes]]: ...


def batch_of_messages(batches: Mapping[TP, Sequence[Message]]) -> RecordBatch:
    """A :class:`~logsig.batch.RecordBatch` of fetched messages, one run per (topic, partition);
    a record's RawRecord (origin, key text, headers) is built only when asked for."""
    values: list[bytes | None] = []
    keys: list[bytes | None] = []
    offsets: list[int] = []
    runs: list[Run] = []
    places: list[tuple[str, int, Sequence[Message], int]] = []
    for (topic, partition), messages in batches.items():
        start = len(values)
        values.extend([m.value for m in messages])
        keys.extend([m.key for m in messages])
        offsets.extend([m.offset for m in messages])
        runs.append(Run(start, len(values), topic, partition))
        places.append((topic, partition, messages, start))

    def make(index: int) -> RawRecord:
        run = bisect.bisect_right([r.start for r in runs], index) - 1
        topic, partition, messages, start = places[run]
        m = messages[index - start]
        origin = Origin(topic=topic, partition=partition, offset=m.offset, timestamp_ms=m.timestamp,
                        key=_key_text(m.key))
        return RawRecord(value=m.value, origin=origin, key=m.key, headers=tuple(m.headers or ()))

    return RecordBatch(values, runs, keys, offsets, make)


class KafkaSource:
    """Consumes ``settings.topics`` as group ``settings.group_id``; offsets are committed only by
    :meth:`commit` (``enable_auto_commit`` is off). ``on_revoked``/``on_assigned`` (or those given
    to :meth:`listen`) are awaited during a rebalance with the affected ``(topic, partition)`` pairs.
    ``commit_via``, when given, commits instead of the consumer (exactly-once: the producer's
    transaction carries the offsets). With ``group_instance_id`` the member is static (KIP-345): it
    does not leave the group on stop, and coming back within ``session_timeout_ms`` it gets its
    partitions back without a rebalance. Implements :class:`logsig.sources.Source`."""

    def __init__(self, settings: KafkaSettings, on_revoked: Rebalance = _ignore,
                 on_assigned: Rebalance = _ignore,
                 commit_via: Callable[[dict[TP, int]], Awaitable[bool]] | None = None) -> None:
        self.settings = settings
        self._listener = _Listener(on_revoked, on_assigned)
        self._consumer: AIOKafkaConsumer | None = None
        self._commit_via = commit_via
        self._missing: list[str] = []

    def listen(self, on_revoked: Rebalance, on_assigned: Rebalance) -> None:
        """Await ``on_revoked``/``on_assigned`` in rebalances (set before :meth:`start`)."""
        self._listener = _Listener(on_revoked, on_assigned)

    async def start(self) -> None:
        """Connect and join the group. Raises: a KafkaError (or OSError) if the broker is unreachable."""
        s = self.settings
        consumer = AIOKafkaConsumer(
            group_id=s.group_id, enable_auto_commit=False, auto_offset_reset=s.auto_offset_reset,
            max_poll_records=s.max_poll_records, session_timeout_ms=s.session_timeout_ms,
            max_poll_interval_ms=s.max_poll_interval_ms, metadata_max_age_ms=s.metadata_max_age_ms,
            group_instance_id=s.group_instance_id, heartbeat_interval_ms=s.heartbeat_interval_ms,
            isolation_level="read_committed" if s.delivery == "exactly_once" else "read_uncommitted",
            **client_options(s))
        try:
            await consumer.start()
        except BaseException:
            await consumer.stop()
            raise
        consumer.subscribe(topics=s.topics, listener=self._listener)
        self._consumer = consumer

    @property
    def consumer(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            raise RuntimeError("KafkaSource.start() has not succeeded")
        return self._consumer

    async def poll(self) -> RecordBatch:
        """The next batch (at most ``max_poll_records`` records and about ``max_batch_bytes`` of values
        after decompression), waiting up to ``fetch_timeout_ms``. Records past the byte bound are
        read again by the next poll (their partitions are sought back to them)."""
        batches = await self.consumer.getmany(timeout_ms=self.settings.fetch_timeout_ms,
                                              max_records=self.settings.max_poll_records)
        batch = batch_of_messages({(tp.topic, tp.partition): messages for tp, messages in batches.items()})
        taken, rewind = within_bytes(batch, self.settings.max_batch_bytes)
        for (topic, partition), offset in rewind.items():
            self.consumer.seek(TopicPartition(topic, partition), offset)
        return taken

    def trouble(self) -> str | None:
        """Why the consumer cannot work now, else None (``/readyz``): the group coordinator is
        unknown, as after the broker went away (aiokafka's ``GroupCoordinator.coordinator_id``)."""
        coordinator = getattr(self._consumer, "_coordinator", None)
        if coordinator is not None and getattr(coordinator, "coordinator_id", 0) is None:
            return "group coordinator unknown: the broker is unreachable"
        return None

    async def missing_topics(self) -> list[str]:
        """The subscribed topics the cluster does not have (fresh metadata, sorted). While no broker
        answers (aiokafka: "Unable to get cluster metadata over all known brokers"), the previous
        answer, with a warning: the consumer keeps retrying, and ``/readyz`` already tells why."""
        try:
            present = await self.consumer.topics()
        except KafkaError as error:
            log.warning("cannot list the cluster's topics; will ask again", error=repr(error))
            return self._missing
        self._missing = sorted(set(self.settings.topics) - set(present))
        return self._missing

    def assignment(self) -> set[TP]:
        """The partitions assigned to this member now (none before :meth:`start` succeeded)."""
        if self._consumer is None:
            return set()
        return {(tp.topic, tp.partition) for tp in self._consumer.assignment()}

    async def commit(self, offsets: dict[TP, int]) -> bool:
        """Commit ``offsets`` (the next offset to read, per partition). Returns False on failure
        (logged; the same offsets are committed again later, so nothing is lost)."""
        if not offsets:
            return True
        if self._commit_via is not None:
            return await self._commit_via(offsets)
        try:
            await self.consumer.commit({TopicPartition(t, p): o for (t, p), o in offsets.items()})
        except KafkaError as error:
            log.warning("offset commit failed; will retry", error=repr(error), offsets=len(offsets))
            return False
        return True

    async def lag(self) -> dict[TP, int]:
        """Records behind the high watermark per assigned partition (known partitions only)."""
        out: dict[TP, int] = {}
        for tp in self.consumer.assignment():
            highwater = self.consumer.highwater(tp)
            if highwater is None:
                continue
            try:
                position = await self.consumer.position(tp)
            except KafkaError as error:  # the broker went away: lag is unknown, not an error of ours
                log.warning("cannot read a partition's position; lag unknown for now", error=repr(error),
                            topic=tp.topic, partition=tp.partition)
                continue
            out[(tp.topic, tp.partition)] = max(0, highwater - position)
        return out

    async def stop(self) -> None:
        """Leave the group and close (no commit: the runner commits before calling this)."""
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None
