"""The source stage: where raw records come from (Kafka, files and stdin).

A :class:`Source` is what the daemon's runner consumes: batches of records
(:class:`~logsig.batch.RecordBatch`, records built only on demand), a partition assignment that
changes in rebalances, and a commit of the next offset to read per partition. No client type
(aiokafka's ``ConsumerRecord``, ``TopicPartition``) crosses this boundary.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from logsig.batch import RecordBatch
from logsig.records import TP

Rebalance = Callable[[set[TP]], Awaitable[None]]
"""Awaited during a rebalance with the revoked or assigned ``(topic, partition)`` pairs."""


class Source(Protocol):
    """A partitioned record source with manual commits (the Kafka consumer group's model)."""

    def listen(self, on_revoked: Rebalance, on_assigned: Rebalance) -> None:
        """Call ``on_revoked`` before partitions move away and ``on_assigned`` once they arrive."""

    async def start(self) -> None:
        """Connect and join. Raises on failure (the runner retries with backoff)."""

    async def poll(self) -> RecordBatch:
        """The next batch (possibly empty after a bounded wait)."""

    def assignment(self) -> set[TP]:
        """The partitions this member reads now."""

    async def missing_topics(self) -> list[str]:
        """The subscribed topics that do not exist (a consumer of a missing topic just sits idle)."""

    async def commit(self, offsets: dict[TP, int]) -> bool:
        """Commit ``offsets`` (next offset to read per partition); False if it failed (retried later)."""

    async def lag(self) -> dict[TP, int]:
        """Records behind the end of each assigned partition (known ones only)."""

    async def stop(self) -> None:
        """Leave and close (no commit)."""
