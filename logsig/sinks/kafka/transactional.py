"""Exactly-once Kafka sink: a batch's incidents, dead letters and input offsets in one transaction.

``delivery: exactly_once``. The producer has a ``transactional.id`` stable per replica
(:meth:`logsig.config.KafkaSettings.effective_transactional_id`), so a restarted replica's first
``InitProducerId`` fences its previous incarnation and aborts the transaction it left open. Rules:

- :meth:`TransactionalKafkaSink.produce` (called by ``deliver``) opens a transaction when none is
  open, sends the records and waits for every acknowledgement; they stay *staged* in it;
- :meth:`TransactionalKafkaSink.commit` adds the input offsets to the transaction
  (``send_offsets_to_transaction``, the consumer group's commit) and commits it: outputs and
  offsets become visible together, to ``isolation_level=read_committed`` readers;
- any failure aborts the open transaction by replacing the producer (a new ``InitProducerId``
  aborts it on the broker) and sends every staged record again in a new transaction, with
  backoff, until it commits or the daemon gives up (then the offsets stay uncommitted and the
  records are read again after the restart: nothing is lost and nothing is seen twice);
- records the broker can never take (size) are returned as rejected and dropped from the
  transaction, as in :class:`logsig.sinks.kafka.sink.KafkaSink`.

Kafka semantics from KIP-98 (transactions) as spoken by aiokafka 0.14 (``InitProducerId``,
``AddOffsetsToTxn``, ``TxnOffsetCommit`` and ``EndTxn`` v0: no KIP-447 generation fencing, so the
transactional id must be per replica, not per process).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

from logsig.backoff import backoff_delays
from logsig.config import KafkaSettings
from logsig.records import TP
from logsig.sinks.kafka.records import OutRecord
from logsig.sinks.kafka.sink import KafkaSink
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.sink")
Rejected = list[tuple[OutRecord, str]]


class TransactionalKafkaSink(KafkaSink):
    """Produces in transactions; ``commit`` ends each one with the consumer group's offsets.

    stopping: true once the daemon is shutting down (set by the daemon); a commit still being
    retried then gives up after ``give_up_after_seconds``.
    """

    def __init__(self, settings: KafkaSettings, metrics: Metrics | None = None,
                 stopping: Callable[[], bool] = lambda: False, give_up_after_seconds: float = 20.0) -> None:
        super().__init__(settings, metrics)
        transactional_id = settings.effective_transactional_id()
        if transactional_id is None:
            raise ValueError("TransactionalKafkaSink needs delivery=exactly_once")
        self.transactional_id = transactional_id
        self.stopping = stopping
        self._give_up_after = give_up_after_seconds
        self._staged: list[OutRecord] = []
        self._in_txn = False
        self._committed: dict[TP, int] = {}

    def _producer_options(self) -> dict[str, Any]:
        """The idempotent producer's options plus the transactional id and timeout."""
        return {**super()._producer_options(), "transactional_id": self.transactional_id,
                "transaction_timeout_ms": self.settings.transaction_timeout_ms}

    async def _open(self) -> None:
        """Start a producer, fencing earlier ones of this transactional id (no transaction open then)."""
        await super()._open()
        self._in_txn = False

    async def produce(self, records: list[OutRecord], give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> Rejected | None:
        """Send ``records`` inside the open transaction until acknowledged (see the module docstring).

        Returns the rejected records, or None if ``give_up()`` became true first.
        """
        if not records:
            return []
        self._staged.extend(records)
        fresh, rejected = records, []
        next_delay = backoff_delays(self.settings.retry_backoff_max_seconds)
        while True:
            sent, dropped = await self._send(fresh)
            rejected.extend(dropped)
            if sent:
                return rejected
            if give_up():
                return None
            await self._after_failure(next_delay(), sleep)
            fresh = self._staged

    async def _send(self, fresh: list[OutRecord]) -> tuple[bool, Rejected]:
        """Send ``fresh`` in the open transaction, opening one if needed (then every staged record is
        sent). Returns whether all were acknowledged, and the records the broker can never take
        (dropped from the transaction, which must then be aborted)."""
        if self._producer is None:
            return False, []
        if not self._in_txn:
            try:
                await self._producer.begin_transaction()
            except KafkaError as error:
                log.warning("beginning a transaction failed", error=repr(error))
                return False, []
            self._in_txn, fresh = True, self._staged
        report = await self.send_all(fresh)
        dropped = {id(record) for record, _ in report.rejected}
        self._staged = [r for r in self._staged if id(r) not in dropped]
        return not (report.retry or report.rejected), report.rejected

    async def commit(self, offsets: dict[TP, int]) -> bool:
        """Commit the open transaction with ``offsets`` (next offset to read per partition).

        Retries the whole transaction with backoff until it commits; returns False only when the
        daemon is stopping and ``give_up_after_seconds`` have passed (nothing is then committed).
        """
        if not self._staged and not self._in_txn and all(self._committed.get(tp) == o for tp, o in offsets.items()):
            return True
        next_delay = backoff_delays(self.settings.retry_backoff_max_seconds)
        deadline: float | None = None
        while True:
            if await self._try_commit(offsets):
                return True
            deadline = deadline or (asyncio.get_running_loop().time() + self._give_up_after
                                    if self.stopping() else None)
            if deadline is not None and asyncio.get_running_loop().time() > deadline:
                log.error("gave up committing the transaction; it is aborted and its records will be re-read",
                          records=len(self._staged))
                return False
            await self._after_failure(next_delay(), asyncio.sleep)

    async def _try_commit(self, offsets: dict[TP, int]) -> bool:
        if not self._in_txn:
            sent, rejected = await self._send([])
            for record, error in rejected:
                log.error("record rejected by the broker; dropped", topic=record.topic, error=error)
            if not sent:
                return False
        assert self._producer is not None
        try:
            if offsets:
                await self._producer.send_offsets_to_transaction(
                    {TopicPartition(t, p): o for (t, p), o in offsets.items()}, self.settings.group_id)
            await self._producer.commit_transaction()
        except KafkaError as error:
            log.warning("committing the transaction failed", error=repr(error), records=len(self._staged))
            return False
        self._staged, self._in_txn = [], False
        self._committed.update(offsets)
        return True

    async def _after_failure(self, delay: float, sleep: Callable[[float], Awaitable[None]]) -> None:
        """Abort the open transaction (by replacing the producer), then back off."""
        log.warning("transaction aborted; sending its records again", records=len(self._staged),
                    retry_in_seconds=delay)
        self._in_txn = False
        await self.reset()
        await sleep(delay)
