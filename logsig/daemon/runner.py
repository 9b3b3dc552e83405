"""The daemon: Kafka source -> pipeline -> Kafka sink (+ Alertmanager), with telemetry.

Delivery semantics (at least once, no loss):

1. a batch from ``getmany`` is decoded, matched and enriched (:class:`logsig.pipeline.Pipeline`);
2. its incidents and dead letters are produced with the idempotent producer (acks=all) and every
   acknowledgement is awaited, retrying with backoff while the broker is away;
3. only then are the batch's offsets committed, capped below any record still held in an open
   multi-line group (:func:`logsig.daemon.offsets.committable`).

A redelivered record yields an incident with the same ``event_id``, so consumers can deduplicate.
SIGTERM/SIGINT stop fetching, finish and commit the batch in hand, flush open multi-line groups,
commit, close and exit 0. On partition revocation the revoked partitions' open groups are flushed,
delivered and committed before the partitions move. SIGHUP reloads the catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import structlog
from prometheus_client import CollectorRegistry

from logsig.backoff import retry_forever
from logsig.config import Settings
from logsig.daemon.http import HttpServer
from logsig.daemon.offsets import committable, next_offsets
from logsig.daemon.reload import CatalogWatcher
from logsig.errors import LogsigError
from logsig.incident import Incident
from logsig.log import configure_logging
from logsig.pipeline import Pipeline, StepResult
from logsig.records import TP, RawRecord
from logsig.sinks.kafka.records import dead_letter_record, incident_record
from logsig.sinks.kafka.sink import KafkaSink, OutRecord
from logsig.sources.kafka import KafkaSource
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.daemon")
LAG_INTERVAL_SECONDS = 1.0


class Daemon:
    """One logsig replica. ``stop`` ends it gracefully; ``registry`` holds its metrics."""

    def __init__(self, settings: Settings, registry: CollectorRegistry | None = None) -> None:
        self.settings = settings
        self.registry = registry or CollectorRegistry()
        self.metrics = Metrics(self.registry, settings.metrics.source_labels,
                               settings.metrics.max_label_sets_per_signature)
        self.stop_event = asyncio.Event()
        self.watcher = CatalogWatcher(settings.catalog, settings.matching.max_message_bytes)
        self.pipeline = Pipeline(self.watcher.load_initial(self.metrics), settings.decode)
        self.source = KafkaSource(settings.kafka, self._on_revoked, self._on_assigned)
        self.sink = KafkaSink(settings.kafka)
        self.http = HttpServer(self.registry, self.not_ready_reason, settings.http.host, settings.http.port)
        self.alertmanager = _alertmanager(settings, self.metrics)
        self._lock = asyncio.Lock()
        self._delivered: dict[TP, int] = {}
        self._started = False
        self._last_lag = 0.0
        self.metrics.init_topics(settings.kafka.topics)
        self.metrics.init_sinks(["kafka"] + (["alertmanager"] if self.alertmanager else []))

    def not_ready_reason(self) -> str | None:
        """None when ready (catalog loaded, partitions assigned), else why not."""
        if not self._started:
            return "not connected to Kafka"
        if not self.source.assignment():
            return "no partitions assigned"
        return None

    async def run(self) -> None:
        """Serve until :attr:`stop_event` is set, then drain and close."""
        try:
            await self.http.start()
        except OSError as error:
            raise LogsigError(f"cannot listen on {self.http.host}:{self.http.port}: {error.strerror or error} "
                              "(set http.port)") from error
        log.info("http endpoint listening", host=self.http.host, port=self.http.port)
        if self.alertmanager is not None:
            await self.alertmanager.start()
        try:
            if await self._connect():
                self._started = True
                log.info("consuming", topics=self.settings.kafka.topics, group_id=self.settings.kafka.group_id)
                await self._loop()
                await self._drain()
        finally:
            await self._close()

    async def _connect(self) -> bool:
        kafka = self.settings.kafka
        stopping, backoff = self.stop_event.is_set, kafka.retry_backoff_max_seconds

        async def outputs_exist() -> None:
            await self.sink.require_topics([kafka.output_topic, kafka.dead_letter_topic])

        return (await retry_forever(self.sink.start, "connecting the producer", backoff, stopping, self._sleep)
                and await retry_forever(outputs_exist, "checking the output topics", backoff, stopping, self._sleep)
                and await retry_forever(self.source.start, "joining the consumer group", backoff, stopping,
                                        self._sleep))

    async def _loop(self) -> None:
        while not self.stop_event.is_set():
            records = await self.source.poll()
            async with self._lock:
                if records:
                    self._count_consumed(records)
                    step = self.pipeline.process(records, time.monotonic())
                else:
                    step = self.pipeline.flush_idle(time.monotonic())
                if not await self._deliver(step):
                    return
                self._mark_delivered(next_offsets(records))
                await self._commit()
            await self._housekeeping()

    async def _drain(self) -> None:
        async with self._lock:
            if await self._deliver(self.pipeline.flush_all(), draining=True):
                await self._commit()
        log.info("drained; stopping")

    async def _close(self) -> None:
        if self.alertmanager is not None:
            await self.alertmanager.stop()
        await self.source.stop()
        await self.sink.stop()
        await self.http.stop()

    def _count_consumed(self, records: list[RawRecord]) -> None:
        for record in records:
            topic = record.origin.topic or ""
            self.metrics.records_consumed.labels(topic=topic).inc()
            self.metrics.bytes_consumed.labels(topic=topic).inc(len(record.value or b""))
        last = records[-1].origin.timestamp_ms
        if last is not None:
            self.metrics.last_record.set(last / 1000)

    def _records_of(self, step: StepResult) -> list[OutRecord]:
        kafka = self.settings.kafka
        out = [incident_record(d.incident, kafka.output_topic) for d in step.detections]
        out.extend(dead_letter_record(f, kafka.dead_letter_topic, kafka.dead_letter_max_bytes)
                   for f in step.failures)
        return out

    async def _deliver(self, step: StepResult, draining: bool = False) -> bool:
        """Produce the step's output until acknowledged. False if given up (stopping): commit nothing."""
        records = self._records_of(step)
        deadline = time.monotonic() + self.settings.shutdown_timeout_seconds

        def give_up() -> bool:
            return (self.stop_event.is_set() and not draining) or (draining and time.monotonic() > deadline)

        rejected = await self.sink.deliver(records, give_up, self._sleep)
        if rejected is None:
            log.error("gave up delivering; offsets not committed, records will be re-read", records=len(records))
            return False
        lost = {id(record) for record, _ in rejected}
        for record, error in rejected:
            log.error("record rejected by the broker; dropped", topic=record.topic, value_bytes=len(record.value),
                      error=error)
            self.metrics.incidents_dropped.labels(sink="kafka", reason="record_too_large").inc()
        self._account(step, [id(r) not in lost for r in records[: len(step.detections)]])
        return True

    def _account(self, step: StepResult, delivered: list[bool]) -> None:
        now = time.time()
        m = self.metrics
        m.truncated.inc(step.truncated)
        for failure in step.failures:
            m.records_failed.labels(reason=failure.reason).inc()
            m.dead_letters.labels(reason=failure.reason).inc()
        for detection, ok in zip(step.detections, delivered, strict=True):
            for match in detection.matches:
                m.count_match(match.signature.id, detection.event.source)
            if not ok:
                continue
            m.incidents.labels(sink="kafka").inc()
            ts = detection.event.origin.timestamp_ms
            if ts is not None:
                m.latency.observe(max(0.0, now - ts / 1000))
            if self.alertmanager is not None:
                self.alertmanager.offer(detection.incident)
        m.add_phase_two(self.pipeline.engine.phase_two_seconds)

    def _mark_delivered(self, offsets: dict[TP, int]) -> None:
        for tp, offset in offsets.items():
            self._delivered[tp] = max(self._delivered.get(tp, 0), offset)

    async def _commit(self, only: set[TP] | None = None) -> None:
        assigned = self.source.assignment() if only is None else only
        offsets = committable(self._delivered, self.pipeline.held_offsets(), assigned)
        await self.source.commit(offsets)

    async def _on_revoked(self, revoked: set[TP]) -> None:
        async with self._lock:
            step = self.pipeline.flush_partitions(revoked)
            if await self._deliver(step, draining=True):
                await self._commit(only=revoked)
            for tp in revoked:
                self._delivered.pop(tp, None)
                self.metrics.forget_partition(*tp)
        log.info("partitions revoked", partitions=sorted(revoked))

    async def _on_assigned(self, assigned: set[TP]) -> None:
        self.metrics.partitions.set(len(self.source.assignment()))
        log.info("partitions assigned", partitions=sorted(assigned))

    async def _housekeeping(self) -> None:
        now = time.monotonic()
        if now - self._last_lag < LAG_INTERVAL_SECONDS:
            return
        self._last_lag = now
        for (topic, partition), lag in (await self.source.lag()).items():
            self.metrics.lag.labels(topic=topic, partition=str(partition)).set(lag)
        self.metrics.partitions.set(len(self.source.assignment()))
        engine = self.watcher.poll(self.metrics)
        if engine is not None:
            self.pipeline.replace_engine(engine)
            self.metrics.reset_phase_two()

    def request_reload(self) -> None:
        """Reload the catalog at the next housekeeping (SIGHUP)."""
        self.watcher.force()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_event.wait(), timeout=seconds)


def _alertmanager(settings: Settings, metrics: Metrics) -> _AlertSink | None:
    if not settings.alertmanager.enabled:
        return None
    from logsig.sinks.alertmanager import AlertmanagerSink

    sink: _AlertSink = AlertmanagerSink(settings.alertmanager, metrics)
    return sink


class _AlertSink(Protocol):
    """What the runner needs of the Alertmanager sink (see :mod:`logsig.sinks.alertmanager`)."""

    async def start(self) -> None: ...
    def offer(self, incident: Incident) -> None: ...
    async def stop(self) -> None: ...


async def serve(settings: Settings, install_signals: bool = True) -> Daemon:
    """Run a daemon until SIGTERM/SIGINT; returns it after a clean stop."""
    daemon = Daemon(settings)
    if install_signals:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, _stopper(daemon, sig))
        loop.add_signal_handler(signal.SIGHUP, daemon.request_reload)
    await daemon.run()
    return daemon


def _stopper(daemon: Daemon, sig: signal.Signals) -> Callable[[], None]:
    def stop() -> None:
        log.info("signal received; draining", signal=sig.name)
        daemon.stop_event.set()
    return stop


def _exit_early(signum: int, _: object) -> None:
    """SIGTERM/SIGINT before the event loop runs: nothing consumed yet, so stop with code 0."""
    log.info("signal received before start; exiting", signal=signal.Signals(signum).name)
    raise SystemExit(0)


def run_daemon(settings: Settings) -> int:
    """``logsig run``: configure logging, serve, exit 0 after a graceful stop.

    Raises:
        LogsigError: the catalog does not load (CatalogError) or the HTTP port cannot be bound.
    """
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_early)
    configure_logging(settings.logging.level, settings.logging.format)
    log.info("starting", catalog_paths=[str(Path(p)) for p in settings.catalog.paths])
    asyncio.run(serve(settings))
    log.info("stopped")
    return 0
