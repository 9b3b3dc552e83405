"""Kafka sink: an idempotent aiokafka producer (acks=all) for incidents and dead letters.

Delivery rules (:meth:`KafkaSink.deliver` for a pipeline step, :meth:`KafkaSink.produce` for records):

- every record is retried until the broker acknowledges it, with exponential backoff, except
  records the broker can never take (``MessageSizeTooLargeError``, ``RecordListTooLargeError``):
  those are returned as rejected, so one oversized record never blocks a partition;
- only the records that failed are sent again (an acknowledged record is not duplicated);
- after an error that leaves the idempotent producer unusable (``OutOfOrderSequenceNumber``,
  ``ProducerFenced``, a timeout, ...: every non-retriable error but the size ones) the producer
  is closed and a new one started before the next try.

:meth:`KafkaSink.deliver` returns one :class:`~logsig.sinks.Outcome` per output, so a rejected dead
letter is told apart from a rejected incident.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordListTooLargeError

from logsig.backoff import backoff_delays
from logsig.config import KafkaSettings
from logsig.errors import SinkError
from logsig.kafka import client_options
from logsig.pipeline import Detection, StepResult
from logsig.records import DecodeFailure
from logsig.sinks import Outcome, OutputKind
from logsig.sinks.kafka.guard import MetadataGuard
from logsig.sinks.kafka.records import (
    SHRINK_STEPS,
    OutRecord,
    dead_letter_record,
    incident_record,
    shrunk_dead_letter,
    shrunk_incident,
)
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.sink")
REJECTED = (MessageSizeTooLargeError, RecordListTooLargeError)
STALLED_SECONDS = 5.0
"""Acknowledgements awaited longer than this make ``/readyz`` answer 503 (the broker is away)."""


@dataclass
class SendReport:
    """Outcome of one try: records to send again, records that can never be written, and
    whether the producer must be replaced before the next try."""

    retry: list[OutRecord] = field(default_factory=list)
    rejected: list[tuple[OutRecord, str]] = field(default_factory=list)
    broken: bool = False

    def failed(self, record: OutRecord, error: BaseException) -> None:
        """File ``record`` under what ``error`` means for it."""
        if isinstance(error, REJECTED):
            self.rejected.append((record, type(error).__name__))
            return
        self.retry.append(record)
        if not getattr(error, "retriable", True):
            self.broken = True


class KafkaSink:
    """Produces batches and waits until the broker acknowledged every record (a :class:`logsig.sinks.Sink`)."""

    name = "kafka"

    def __init__(self, settings: KafkaSettings, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self._metrics = metrics
        self._producer: AIOKafkaProducer | None = None
        self._failing: str | None = None
        self._sending_since: float | None = None
        self._blocked: str | None = None
        self.missing: list[str] = []
        """The output and dead-letter topics the cluster did not have at the last check (sorted)."""

    async def start(self) -> None:
        """Connect (once) and check that the output and dead-letter topics exist.

        Raises: KafkaError (or OSError) if the broker is unreachable; SinkError naming missing topics.
        """
        if self._producer is None:
            await self._open()
        await self.require_topics(self.topics())

    def topics(self) -> list[str]:
        """The topics this sink writes to: the output topic, then the dead-letter topic."""
        return [self.settings.output_topic, self.settings.dead_letter_topic]

    def _producer_options(self) -> dict[str, Any]:
        """Keyword arguments of the producer: idempotent, acks=all, linger, sizes, client options.

        A partition's batch may be as large as a request (aiokafka's default ``max_batch_size`` is 16 KiB:
        a step's incidents of about 2 KB each then fill a batch every 8 records, and each further
        ``send`` waits for the full batch's round trip, one at a time, as the idempotent producer keeps
        one request in flight per partition), so a step's outputs go out in one request per partition.
        """
        return {"enable_idempotence": True, "acks": "all", "linger_ms": self.settings.linger_ms,
                "max_request_size": self.settings.max_request_bytes, "max_batch_size": self.settings.max_request_bytes,
                **client_options(self.settings)}

    async def _open(self) -> None:
        """Start a producer. Raises: KafkaError (or OSError) if the broker is unreachable."""
        producer = AIOKafkaProducer(**self._producer_options())
        try:
            await producer.start()
        except BaseException:
            await producer.stop()
            raise
        counter = self._metrics.metadata_requests.inc if self._metrics is not None else None
        MetadataGuard(producer.client, on_request=counter).install()
        self._producer = producer

    def trouble(self) -> str | None:
        """Why the sink cannot deliver now, else None (``/readyz``): a try failed and is being retried,
        or acknowledgements have been awaited for more than :data:`STALLED_SECONDS`."""
        if self._blocked is not None:
            return self._blocked
        since = self._sending_since
        if self._failing is None and since is not None and time.monotonic() - since > STALLED_SECONDS:
            return f"Kafka sink waiting {time.monotonic() - since:.0f} s for the broker's acknowledgements"
        return self._failing

    async def send_all(self, records: list[OutRecord]) -> SendReport:
        """One try at producing ``records``, waiting for every acknowledgement."""
        report = SendReport()
        if self._producer is None:
            report.retry, report.broken = list(records), True
            return report
        sent: list[tuple[OutRecord, asyncio.Future[object]]] = []
        for r in records:
            try:
                future = await self._producer.send(r.topic, r.value, key=r.key, headers=list(r.headers),
                                                   timestamp_ms=r.timestamp_ms)
            except KafkaError as error:
                report.failed(r, error)
                continue
            sent.append((r, future))
        outcomes = await asyncio.gather(*(f for _, f in sent), return_exceptions=True)
        for (r, _), outcome in zip(sent, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                report.failed(r, outcome)
        return report

    async def require_topics(self, names: list[str]) -> None:
        """Raise SinkError naming each of ``names`` the cluster does not have (topic auto-creation is
        usually off in production, and producing to a missing topic only times out); they are kept
        in :attr:`missing` for ``/status``."""
        if self._producer is None:
            raise SinkError("Kafka sink not started", retriable=True)
        cluster = await self._producer.client.fetch_all_metadata()
        self.missing = sorted(set(names) - set(cluster.topics()))
        if self.missing:
            raise SinkError(f"output topics do not exist: {', '.join(self.missing)}; create them", retriable=True)

    async def missing_topics(self) -> list[str]:
        """The output and dead-letter topics the cluster does not have (fresh metadata, sorted). While no
        broker answers, or before the producer started, the previous answer."""
        if self._producer is None:
            return self.missing
        try:
            await self.require_topics(self.topics())
        except (KafkaError, SinkError) as error:
            if not isinstance(error, SinkError):
                log.warning("cannot list the cluster's topics; will ask again", error=repr(error))
        return self.missing

    async def reset(self) -> None:
        """Replace the producer (after an error that leaves it unusable)."""
        await self.stop()
        try:
            await self._open()
        except (KafkaError, OSError) as error:
            log.warning("restarting the producer failed; will retry", error=repr(error))

    async def deliver(self, step: StepResult, give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> list[Outcome] | None:
        """Produce ``step``'s incidents and dead letters; one outcome per output, incidents first.

        A record the broker refuses as too large is sent again smaller (:func:`_shrink`): nothing is
        dropped. Returns None if ``give_up()`` became true before every record was acknowledged.
        """
        s = self.settings
        outputs: list[tuple[OutputKind, Detection | DecodeFailure, OutRecord]] = [
            ("incident", d, incident_record(d.incident, s.output_topic, s.cloudevents_source)) for d in step.detections]
        outputs.extend(("dead_letter", f, dead_letter_record(f, s.dead_letter_topic, s.dead_letter_max_bytes))
                       for f in step.failures)
        lines: list[tuple[OutputKind, Detection | DecodeFailure, OutRecord]] = [
            ("incident", d, incident_record(d.incident, s.line_topic, s.cloudevents_source))
            for d in (step.lines or []) if s.line_topic]
        rejected = await self.produce([r for *_, r in outputs + lines], give_up, sleep)
        if rejected is None:
            return None
        lost = {id(record) for record, _ in rejected}
        for kind, output, record in outputs + lines:
            if id(record) in lost and not await self._shrink(kind, output, record.topic, give_up, sleep):
                return None
        return [Outcome(kind, output, True) for kind, output, _ in outputs]

    async def _shrink(self, kind: OutputKind, output: Detection | DecodeFailure, topic: str,
                      give_up: Callable[[], bool], sleep: Callable[[float], Awaitable[None]]) -> bool:
        """Write a refused output through :data:`SHRINK_STEPS`, counting the step that was taken; when
        even the minimal record is refused, block (no commit) until it is taken. False: given up."""
        record = None
        for step in SHRINK_STEPS:
            record = self._shrunk_record(kind, output, topic, step)
            rejected = await self.produce([record], give_up, sleep)
            if rejected is None:
                return False
            if not rejected:
                self._shrunk(kind, step)
                return True
            log.warning("record refused by the broker as too large; shrinking", kind=kind, step=step, topic=topic,
                        value_bytes=len(record.value), key_bytes=len(record.key or b""), error=rejected[0][1])
        assert record is not None
        return await self._blocked_until_taken(kind, record, give_up, sleep)

    def _shrunk_record(self, kind: OutputKind, output: Detection | DecodeFailure, topic: str, step: str) -> OutRecord:
        if isinstance(output, Detection):
            return incident_record(shrunk_incident(output.incident, step), topic, self.settings.cloudevents_source)
        return shrunk_dead_letter(output, topic, self.settings.dead_letter_max_bytes, step)

    async def _blocked_until_taken(self, kind: OutputKind, record: OutRecord, give_up: Callable[[], bool],
                                   sleep: Callable[[float], Awaitable[None]]) -> bool:
        """Retry the minimal ``record`` with backoff, saying so on ``/readyz`` and ``logsig_delivery_blocked``."""
        self._blocked = (f"topic {record.topic} refuses even a minimal {kind} ({len(record.value)} bytes) as too "
                         "large: raise its max.message.bytes; offsets are not committed")
        log.error("delivery blocked; offsets are not committed", reason=self._blocked)
        self._set_blocked(1)
        next_delay = backoff_delays(self.settings.retry_backoff_max_seconds)
        try:
            while not give_up():
                await sleep(next_delay())
                rejected = await self.produce([record], give_up, sleep)
                if rejected is None:
                    return False
                if not rejected:
                    self._shrunk(kind, "minimal")
                    log.info("delivery unblocked", topic=record.topic)
                    return True
            return False
        finally:
            self._blocked = None
            self._set_blocked(0)

    def _shrunk(self, kind: OutputKind, step: str) -> None:
        if self._metrics is not None:
            self._metrics.outputs_shrunk.labels(kind=kind, step=step).inc()

    def _set_blocked(self, value: int) -> None:
        if self._metrics is not None:
            self._metrics.delivery_blocked.set(value)

    async def produce(self, records: list[OutRecord], give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> list[tuple[OutRecord, str]] | None:
        """Produce ``records`` until each is acknowledged or rejected (see the module docstring).

        Returns the rejected records with the error's name, or None if ``give_up()`` became true
        first (then nothing may be committed).
        """
        pending, rejected = records, []
        next_delay = backoff_delays(self.settings.retry_backoff_max_seconds)
        self._sending_since = time.monotonic()
        while pending:
            report = await self.send_all(pending)
            rejected.extend(report.rejected)
            pending = report.retry
            if not pending:
                break
            self._failing = f"Kafka sink retrying {len(pending)} records against the broker"
            if give_up():
                self._failing = self._sending_since = None
                return None
            delay = next_delay()
            log.warning("delivery failed; retrying", records=len(pending), retry_in_seconds=delay,
                        producer_restart=report.broken)
            await sleep(delay)
            if report.broken:
                await self.reset()
        self._failing = self._sending_since = None
        return rejected

    async def stop(self) -> None:
        """Flush and close."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()


