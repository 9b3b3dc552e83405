"""The daemon: a source, the pipeline and sinks wired together, with telemetry.

Delivery semantics (at least once, no loss):

1. a batch from the source is decoded, matched and enriched (:class:`logsig.pipeline.Pipeline`,
   which builds record objects only for the records that need them);
2. its incidents and dead letters go to the first sink (Kafka: idempotent producer, acks=all),
   which returns one outcome per output once each is acknowledged or can never be written,
   retrying with backoff while the broker is away; later sinks (Alertmanager) are handed the
   incidents it delivered. This happens in the background (:mod:`logsig.daemon.delivery`): the
   next batch is fetched and processed meanwhile;
3. only once acknowledged may the batch's offsets be committed, capped below any record still
   held in an open multi-line group or counted in an incident group but not yet reported when the
   batch was processed (:class:`logsig.daemon.offsets.OffsetTracker`,
   :meth:`logsig.group.stage.GroupStage.held_offsets`); commits are batched (at most one every
   ``commit_interval_seconds``) and sent only when the offsets changed.

Between the pipeline and the sinks, the grouping stage (:mod:`logsig.group.stage`, clock
``time.monotonic()``) turns detections into group events. A redelivered record yields events with
the same ``event_id`` (docs/incident.md, "Delivery across a crash"), so consumers can deduplicate.
With ``kafka.delivery: exactly_once`` steps 2 and 3 are one Kafka transaction (the producer sends the
offsets, :mod:`logsig.sinks.kafka.transactional`), committed right after each delivery:
read_committed readers see each incident once; outputs of records behind an open multi-line group
wait for it (:mod:`logsig.daemon.defer`).
SIGTERM/SIGINT stop fetching, finish and commit the batch in hand, flush open multi-line groups,
commit, close and exit 0, all within ``shutdown_timeout_seconds`` whatever the broker does; past it,
or on a second signal, the drain is cut short (:mod:`logsig.daemon.shutdown`): logged with what was
not delivered or committed, exit 1, nothing committed past unacknowledged output. On partition
revocation the revoked partitions' open groups are flushed, delivered and committed (those
partitions only) before the partitions move. SIGHUP reloads the catalog.

:class:`Daemon` is given its parts (:func:`build_daemon` makes them from settings), so its rules are
unit-tested with the fakes of :mod:`logsig.testing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import cast

import structlog
from prometheus_client import CollectorRegistry

from logsig import __version__
from logsig.backoff import retry_forever
from logsig.config import Settings
from logsig.config_security import kafka_file_problems
from logsig.daemon.defer import Deferral
from logsig.daemon.delivery import Deliveries
from logsig.daemon.http import HttpServer, listen_error
from logsig.daemon.offsets import OffsetTracker
from logsig.daemon.reload import CatalogWatcher
from logsig.daemon.shutdown import StopDeadline
from logsig.daemon.status import Activity, TopicWatch
from logsig.discovery.unclassified import Unclassified
from logsig.errors import ConfigError, LogsigError
from logsig.group.settings import GroupSettings
from logsig.group.stage import GroupStage
from logsig.log import configure_logging
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline, StepResult
from logsig.records import TP
from logsig.redact import Redactor
from logsig.sinks import Outcome, Sink, delivered_step
from logsig.sinks.kafka.sink import KafkaSink
from logsig.sinks.kafka.transactional import TransactionalKafkaSink
from logsig.sources import Source
from logsig.sources.kafka import KafkaSource
from logsig.telemetry import Metrics, outcomes_accounted, records_consumed, step_processed, unclassified_seen

log = structlog.get_logger("logsig.daemon")
LAG_INTERVAL_SECONDS = 1.0
COMMIT_INTERVAL_SECONDS = 0.5
WARM_SLICE_SECONDS = 0.004
"""Longest stretch of phase-two compiles between two turns of the event loop (seconds)."""
WARM_RECHECK_SECONDS = 1.0


class Daemon:
    """One logsig replica: ``source`` -> ``pipeline`` -> ``sinks`` (the first gates commits).

    offsets: the commit bookkeeping; metrics: where events are counted; watcher: catalog reloads
    (None: never); http: the ``/metrics``, ``/healthz``, ``/readyz``, ``/unclassified`` server (None: none);
    grouping: the grouping stage (default: off, one event per line); unclassified: the top
    unclassified templates, fed with every delivered step (default: 1,000 templates);
    shutdown_timeout_seconds: the longest drain (on SIGTERM and on revocation);
    retry_backoff_max_seconds: the longest wait between connection attempts;
    summary_interval_seconds: how often the summary line is logged (:mod:`logsig.daemon.status`);
    commit_interval_seconds: commits are batched, at most one this often (and on drain and revocation);
    commit_each_delivery: commit right after each delivery instead (a transactional sink, whose
    commit ends the transaction its deliveries staged).
    :meth:`stop_event` set ends it gracefully.
    """

    def __init__(self, source: Source, pipeline: Pipeline, sinks: Sequence[Sink], offsets: OffsetTracker,
                 metrics: Metrics, *, watcher: CatalogWatcher | None = None, http: HttpServer | None = None,
                 grouping: GroupStage | None = None, unclassified: Unclassified | None = None,
                 shutdown_timeout_seconds: float = 20.0,
                 retry_backoff_max_seconds: float = 30.0, summary_interval_seconds: float = 60.0,
                 group_id: str = "", commit_interval_seconds: float = COMMIT_INTERVAL_SECONDS,
                 commit_each_delivery: bool = False) -> None:
        if not sinks:
            raise ValueError("a daemon needs at least one sink")
        self.source, self.pipeline, self.sinks = source, pipeline, tuple(sinks)
        self.offsets, self.metrics, self.watcher, self.http = offsets, metrics, watcher, http
        self.registry = metrics.registry
        self.grouping = grouping or GroupStage(GroupSettings(enabled=False))
        self.unclassified = unclassified or Unclassified()
        self._evicted = 0
        self.shutdown_timeout_seconds = shutdown_timeout_seconds
        self.retry_backoff_max_seconds = retry_backoff_max_seconds
        self.stop_event = asyncio.Event()
        self.stopping = StopDeadline(shutdown_timeout_seconds)
        self.cut_short: str | None = None
        """Why the drain was cut short (:meth:`run`), else None."""
        self._lock = asyncio.Lock()
        self._started = False
        self.commit_interval_seconds = commit_interval_seconds
        self._last_commit = float("-inf")
        after = self._commit_assigned if commit_each_delivery else None
        self.deliveries = Deliveries(self.sinks, self._account, self.offsets, self.stop_event.is_set, self._sleep,
                                     shutdown_timeout_seconds, after=after)
        self._batched_commits = not commit_each_delivery
        self.deferral: Deferral | None = None
        self._last_lag = float("-inf")
        self._lag: dict[TP, int] = {}
        self._waiting: str | None = None
        self._warming: str | None = "compiling the catalog's phase-two regexes"
        self.group_id = group_id
        self.topics = TopicWatch(source.missing_topics, metrics.topics_missing)
        self.outputs = TopicWatch(_output_check(self.sinks[0]), None, kind="output")
        self.activity = Activity(summary_interval_seconds)
        source.listen(self._on_revoked, self._on_assigned)
        metrics.init_sinks(sink.name for sink in self.sinks)

    def not_ready_reason(self) -> str | None:
        """None when ready (catalog loaded and its phase-two regexes compiled, partitions assigned),
        else why not: the last connection error (e.g. which output topics do not exist), the missing
        input topics, no partitions, or the compile still going on at start-up."""
        if not self._started:
            return self._waiting or "connecting to Kafka"
        if not self.source.assignment():
            if self.topics.missing:
                return f"input topics do not exist: {', '.join(self.topics.missing)}"
            return (f"no partitions assigned to this member of consumer group {self.group_id!r} (a rebalance in "
                    f"progress, or more replicas than partitions)")
        if self._warming is not None:
            return self._warming
        return _trouble(self.sinks[0]) or _trouble(self.source)

    def status(self) -> dict[str, object]:
        """What ``/status`` serves (``logsig top`` reads it): readiness, totals, lag, incident groups."""
        return {"version": __version__, "group_id": self.group_id, "ready": self.not_ready_reason() is None,
                "reason": self.not_ready_reason(), "missing_topics": self.missing_topics(),
                "partitions": sorted(f"{t}[{p}]" for t, p in self.source.assignment()),
                "lag": {f"{t}[{p}]": lag for (t, p), lag in sorted(self._lag.items())},
                "totals": vars(self.activity.totals).copy(), "groups": self.activity.top_groups()}

    def missing_topics(self) -> list[str]:
        """Input, output and dead-letter topics the cluster does not have, as last checked (sorted)."""
        return sorted(set(self.topics.missing) | set(getattr(self.sinks[0], "missing", [])))

    def _waiting_on(self, what: str) -> Callable[[BaseException], None]:
        def record(error: BaseException) -> None:
            self._waiting = f"{what}: {error}" if not isinstance(error, LogsigError) else str(error)
        return record

    async def run(self) -> None:
        """Serve until :attr:`stop_event` is set, then drain and close, all within the stop deadline
        (:meth:`request_stop`; :mod:`logsig.daemon.shutdown`). A drain cut short by it is logged with
        what was not delivered or committed, and kept in :attr:`cut_short`.

        Raises: LogsigError if the HTTP port cannot be bound.
        """
        try:
            async with self.stopping.bounded():
                await self._serve()
                await self._close()
        except TimeoutError:
            if not self.stopping.expired():
                await self._close()
                raise
            await self._abort()
        except BaseException:
            await self._close()
            raise

    def request_stop(self) -> None:
        """A stop signal: the first drains within ``shutdown_timeout_seconds``, a later one ends the drain now."""
        self.stopping.request()
        self.stop_event.set()

    async def _serve(self) -> None:
        await self._start_http()
        for sink in self.sinks[1:]:
            await sink.start()
        if await self._connect():
            self.deliveries.start()
            self._started = True
            log.info("consuming")
            warming = asyncio.create_task(self._warm(), name="logsig-warm")
            try:
                await self._loop()
                await self._drain()
            finally:
                warming.cancel()

    async def _abort(self) -> None:
        """The drain was cut short: log what was not delivered or committed, then close every part
        without waiting on the broker (each gets what is left of the abort time)."""
        assigned = self.source.assignment()
        self.cut_short = self.stopping.reason()
        log.error("drain cut short; stopping without it", reason=self.cut_short,
                  outputs_not_acknowledged=self.deliveries.pending_outputs,
                  committed_offsets=_tp_text(self.offsets.last_committed()),
                  acknowledged_not_committed=_tp_text(self.offsets.changed(assigned)),
                  note="records after the committed offsets are read again after a restart")
        end = asyncio.get_running_loop().time() + self.stopping.abort_seconds()
        for name, stop in self._parts():
            try:
                async with asyncio.timeout_at(end):
                    await _stopped(name, stop)
            except TimeoutError:
                log.warning("a part did not stop in time; left behind", part=name)

    async def _start_http(self) -> None:
        if self.http is None:
            return
        try:
            await self.http.start()
        except OSError as error:
            raise LogsigError(listen_error(self.http.host, self.http.port, error)) from error
        log.info("http endpoint listening", host=self.http.host, port=self.http.port)

    async def _connect(self) -> bool:
        stopping, backoff = self.stop_event.is_set, self.retry_backoff_max_seconds
        primary = self.sinks[0]
        starting = f"starting the {primary.name} sink"
        return (await retry_forever(primary.start, starting, backoff, stopping, self._sleep, self._waiting_on(starting))
                and await retry_forever(self.source.start, "joining the consumer group", backoff, stopping,
                                        self._sleep, self._waiting_on("joining the consumer group")))

    async def _loop(self) -> None:
        """Poll, process, hand over for delivery, commit when due; one turn of the event loop per batch.

        While the consumer has records buffered, ``poll`` returns without suspending, and neither
        the lock nor a queue with room does either: without the explicit yield the loop would run
        batch after batch while the producer's sender, the fetcher and the delivery worker wait (an
        acknowledgement then took as long as eight batches' processing, and the next fetch started
        only once the buffer was empty).
        """
        while not self.stop_event.is_set() and not self.deliveries.abandoned:
            batch = await self.source.poll()
            async with self._lock:
                now = time.monotonic()
                if len(batch):
                    records_consumed(self.metrics, batch)
                    self.activity.consumed(len(batch))
                    step = self.pipeline.process_batch(batch, now)
                else:
                    step = self.pipeline.flush_idle(now)
                await self.deliveries.send(self._outgoing(self.grouping.step(step, now)), batch.next_offsets(),
                                           self._held())
            if self._batched_commits and time.monotonic() - self._last_commit >= self.commit_interval_seconds:
                await self._commit(self.source.assignment())
            await self._housekeeping()
            await asyncio.sleep(0)

    async def _warm(self) -> None:
        """Compile the engine's phase-two regexes in slices of :data:`WARM_SLICE_SECONDS` between
        batches, so a failure's first occurrence does not wait for its signature's compile; again
        for each engine a reload brings (its unchanged signatures are already compiled). Not ready
        (``/readyz``) until the first engine is done: about 2 s of CPU at 1,400 signatures."""
        warmed: weakref.ref[Engine] | None = None
        while True:
            engine = self.pipeline.engine
            if warmed is not None and warmed() is engine:
                await asyncio.sleep(WARM_RECHECK_SECONDS)
            elif engine.warm(WARM_SLICE_SECONDS):
                warmed = weakref.ref(engine)
                self._warming = None
                log.debug("phase two compiled", signatures=len(engine.signatures))
            else:
                await asyncio.sleep(0)
            del engine

    async def _drain(self) -> None:
        async with self._lock:
            await self._settle(self.grouping.flush(self.pipeline.flush_all(), now=time.monotonic()))
            if not self.deliveries.abandoned:
                await self._commit(self.source.assignment())
        log.info("drained; stopping")

    async def _settle(self, step: StepResult) -> None:
        """Deliver what is in flight, then ``step`` (a flush), and wait for every acknowledgement."""
        await self.deliveries.settled()
        await self.deliveries.send(self._outgoing(step), {}, self._held(), draining=True)
        await self.deliveries.settled()

    async def _close(self) -> None:
        """Stop every part, each even when another fails to stop (e.g. aiokafka's consumer raises
        CancelledError from ``stop`` while the broker is unreachable): an error is logged."""
        for name, stop in self._parts():
            await _stopped(name, stop)

    def _parts(self) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
        """The parts to stop, in order: delivery, later sinks, source, first sink, http."""
        parts: list[tuple[str, Callable[[], Awaitable[None]]]] = [("delivery", self.deliveries.stop)]
        parts += [(f"{sink.name} sink", sink.stop) for sink in self.sinks[1:]]
        parts += [("source", self.source.stop), (f"{self.sinks[0].name} sink", self.sinks[0].stop)]
        if self.http is not None:
            parts.append(("http", self.http.stop))
        return parts

    def _account(self, step: StepResult, outcomes: list[Outcome]) -> None:
        """Telemetry of a delivered step: counters, unclassified templates, the activity summary."""
        step_processed(self.metrics, step, self.pipeline.engine.phase_two_seconds)
        unclassified_seen(self.metrics, self.unclassified.observe(step.matched))
        outcomes_accounted(self.metrics, outcomes, self.sinks[0].name, time.time())
        self.activity.delivered(delivered_step(step, outcomes), step.matched,
                                sum(1 for o in outcomes if o.kind == "dead_letter" and o.delivered))

    async def _commit_assigned(self) -> None:
        await self._commit(self.source.assignment())

    async def _commit(self, partitions: set[TP]) -> None:
        """Commit what changed and may be committed for ``partitions``."""
        self._last_commit = time.monotonic()
        offsets = self.offsets.changed(partitions)
        if offsets and await self.source.commit(offsets):
            self.offsets.committed(offsets)

    async def _on_revoked(self, revoked: set[TP]) -> None:
        async with self._lock:
            await self._settle(self.grouping.flush(self.pipeline.flush_partitions(revoked), revoked,
                                                   now=time.monotonic()))
            if not self.deliveries.abandoned:
                await self._commit(revoked)
            self.offsets.revoked(revoked)
            for tp in revoked:
                self.metrics.forget_partition(*tp)
        log.info("partitions revoked", partitions=sorted(revoked))

    def _held(self) -> dict[TP, int]:
        return self.grouping.held_offsets(self.pipeline.held_offsets())

    def _outgoing(self, step: StepResult) -> StepResult:
        """``step`` less the outputs behind an open multi-line group, plus those it released (exactly once)."""
        return step if self.deferral is None else self.deferral.take(step, self.pipeline.held_offsets())

    async def _on_assigned(self, assigned: set[TP]) -> None:
        self.metrics.partitions.set(len(self.source.assignment()))
        self.topics.recheck()
        log.info("partitions assigned", partitions=sorted(assigned))

    async def _housekeeping(self) -> None:
        now = time.monotonic()
        if now - self._last_lag < LAG_INTERVAL_SECONDS:
            return
        self._last_lag = now
        self._lag = await self.source.lag()
        for (topic, partition), lag in self._lag.items():
            self.metrics.lag.labels(topic=topic, partition=str(partition)).set(lag)
        self.metrics.partitions.set(len(self.source.assignment()))
        self.metrics.add_redactions(self.pipeline.redactor.counts)
        self.metrics.groups_open.set(self.grouping.open_groups())
        self.metrics.groups_evicted.inc(self.grouping.evicted() - self._evicted)
        self._evicted = self.grouping.evicted()
        await self.topics.poll()
        await self.outputs.poll()
        self.activity.tick(self._lag, len(self.source.assignment()))
        engine = self.watcher.poll(self.metrics) if self.watcher is not None else None
        if engine is not None:
            self.pipeline.replace_engine(engine)
            self.metrics.reset_phase_two()

    def request_reload(self) -> None:
        """Reload the catalog at the next housekeeping (SIGHUP)."""
        if self.watcher is not None:
            self.watcher.force()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_event.wait(), timeout=seconds)


def _output_check(sink: Sink) -> Callable[[], Awaitable[list[str]]]:
    """``sink.missing_topics`` for a sink that can tell (the Kafka sink), else a check finding none."""
    check = getattr(sink, "missing_topics", None)
    if callable(check):
        return cast(Callable[[], Awaitable[list[str]]], check)

    async def none() -> list[str]:
        return []
    return none


async def _stopped(name: str, stop: Callable[[], Awaitable[None]]) -> None:
    """Await ``stop``; log what it raises instead, unless this task itself is being cancelled."""
    try:
        await stop()
    except asyncio.CancelledError as error:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        log.warning("stopping a part raised; going on", part=name, error=repr(error))
    except Exception as error:
        log.warning("stopping a part raised; going on", part=name, error=f"{type(error).__name__}: {error}")


def _tp_text(offsets: dict[TP, int]) -> dict[str, int]:
    """``{"topic[partition]": offset}``, sorted."""
    return {f"{t}[{p}]": o for (t, p), o in sorted(offsets.items())}


def _trouble(part: object) -> str | None:
    """``part.trouble()`` (a source's or sink's reason it cannot work now) for parts that tell one."""
    trouble = getattr(part, "trouble", None)
    return trouble() if callable(trouble) else None


def _kafka_sink(settings: Settings, metrics: Metrics) -> KafkaSink:
    """The idempotent sink, or the transactional one with ``kafka.delivery: exactly_once``."""
    if settings.kafka.delivery == "exactly_once":
        return TransactionalKafkaSink(settings.kafka, metrics, give_up_after_seconds=settings.shutdown_timeout_seconds)
    return KafkaSink(settings.kafka, metrics)


def build_daemon(settings: Settings, registry: CollectorRegistry | None = None,
                 redactor: Redactor | None = None) -> Daemon:
    """A daemon made from ``settings``: Kafka source and sink, Alertmanager when enabled, HTTP;
    ``redactor`` (default: from ``settings.redaction``) masks secrets in what the pipeline emits.

    Raises: CatalogError listing every problem when the catalog does not load.
    """
    metrics = Metrics(registry or CollectorRegistry(), settings.metrics.source_labels,
                      settings.metrics.max_label_sets_per_signature)
    watcher = CatalogWatcher(settings.catalog, settings.matching.max_message_bytes)
    pipeline = Pipeline(watcher.load_initial(metrics), settings.decode,
                        redactor=redactor or Redactor(settings.redaction), locale=settings.locale)
    kafka_sink = _kafka_sink(settings, metrics)
    sinks: list[Sink] = [kafka_sink]
    if settings.alertmanager.enabled:
        from logsig.sinks.alertmanager import AlertmanagerSink

        sinks.append(AlertmanagerSink(settings.alertmanager, metrics))
    metrics.init_topics(settings.kafka.topics)
    transactional = kafka_sink if isinstance(kafka_sink, TransactionalKafkaSink) else None
    source = KafkaSource(settings.kafka, commit_via=transactional.commit if transactional else None)
    unclassified = Unclassified(settings.discovery.top_k, settings.discovery.max_pods)
    daemon = Daemon(source, pipeline, sinks, OffsetTracker(), metrics, watcher=watcher,
                    grouping=GroupStage(settings.grouping), unclassified=unclassified,
                    shutdown_timeout_seconds=settings.shutdown_timeout_seconds,
                    retry_backoff_max_seconds=settings.kafka.retry_backoff_max_seconds,
                    summary_interval_seconds=settings.logging.summary_interval_seconds,
                    group_id=settings.kafka.group_id, commit_each_delivery=transactional is not None)
    daemon.http = HttpServer(metrics.registry, daemon.not_ready_reason, settings.http.host, settings.http.port,
                             status=daemon.status, unclassified=unclassified)
    if transactional is not None:
        transactional.stopping = daemon.stop_event.is_set
        daemon.deferral = Deferral()
    log.info("configured", topics=settings.kafka.topics, group_id=settings.kafka.group_id)
    return daemon


async def serve(settings: Settings, install_signals: bool = True, redactor: Redactor | None = None) -> Daemon:
    """Run a daemon until SIGTERM/SIGINT; returns it after a clean stop."""
    daemon = build_daemon(settings, redactor=redactor)
    if install_signals:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, _stopper(daemon, sig))
        loop.add_signal_handler(signal.SIGHUP, daemon.request_reload)
    await daemon.run()
    return daemon


def _stopper(daemon: Daemon, sig: signal.Signals) -> Callable[[], None]:
    def stop() -> None:
        if daemon.stopping.requests == 0:
            log.info("signal received; draining", signal=sig.name,
                     shutdown_timeout_seconds=daemon.stopping.timeout_seconds)
        else:
            log.warning("signal received again; stopping now", signal=sig.name)
        daemon.request_stop()
    return stop


def _exit_early(signum: int, _: object) -> None:
    """SIGTERM/SIGINT before the event loop runs: nothing consumed yet, so stop with code 0."""
    log.info("signal received before start; exiting", signal=signal.Signals(signum).name)
    raise SystemExit(0)


def run_daemon(settings: Settings) -> int:
    """``logsig run``: configure logging, serve; exit 0 after a graceful stop, 1 when the drain was cut
    short (by ``shutdown_timeout_seconds`` or a second signal; logged with what was not delivered).

    Raises:
        LogsigError: the catalog does not load (CatalogError), the HTTP port cannot be bound, or
            a TLS file is unreadable or does not load (ConfigError).
    """
    problems = kafka_file_problems(settings.kafka)
    if problems:
        raise ConfigError("invalid settings: kafka: " + "; ".join(problems))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_early)
    redactor = Redactor(settings.redaction)
    configure_logging(settings.logging.level, settings.logging.format, redactor)
    log.info("starting", catalog_paths=[str(Path(p)) for p in settings.catalog.paths])
    daemon = asyncio.run(serve(settings, redactor=redactor))
    if daemon.cut_short is not None:
        log.error("stopped without finishing the drain", reason=daemon.cut_short)
        return 1
    log.info("stopped")
    return 0
