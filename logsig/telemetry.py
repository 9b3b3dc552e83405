"""Prometheus metrics, and one function per event that counts it (and logs it when it is bad news).

Names follow the Prometheus naming practices (``logsig_<noun>_<unit>_total`` for counters, base
units). Every known label value is pre-initialised to 0 so the first increase is visible. The
registry is injected so tests can read samples with ``registry.get_sample_value``.

Events (module functions, called by the runner with a step's outcomes): :func:`records_consumed`,
:func:`step_processed`, :func:`unclassified_seen`, :func:`incident_delivered`, :func:`dead_letter_written`,
:func:`record_rejected`, and :func:`outcomes_accounted` for a whole step.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

from logsig import __version__
from logsig.batch import RecordBatch
from logsig.matchers.signature import Signature
from logsig.pipeline import Detection, StepResult
from logsig.records import FAILURE_REASONS, DecodeFailure, Source
from logsig.redact import KINDS
from logsig.sinks import Outcome

log = structlog.get_logger("logsig.telemetry")

OVERFLOW = "other"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
LATENCY_STATUSES = ("opened", "updated", "resolved", "line")
"""``status`` label values of ``logsig_processing_latency_seconds``: the event's ``status``, ``line`` when
null (grouping off). An ``opened`` event is sent as its first line is processed; ``updated`` and
``resolved`` ones report a group's latest occurrence at most ``grouping.update_interval_seconds``
after its previous report, so their latency includes that wait by design."""


class Metrics:
    """All of logsig's metrics on one registry.

    source_labels: the source fields added as labels to ``logsig_signature_matches_total``;
    max_label_sets: distinct source-label sets per signature before values become ``other``.
    """

    def __init__(self, registry: CollectorRegistry, source_labels: Sequence[str] = ("cluster", "namespace"),
                 max_label_sets: int = 200) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: half the lines, no use
        self.registry = registry
        self.source_labels = tuple(source_labels)
        self.max_label_sets = max_label_sets
        self._seen_sets: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        self._sig_labels: dict[str, tuple[str, str]] = {}
        r = registry
        self.matches = Counter("logsig_signature_matches", "Messages matched, per signature.",
                               ["signature_id", "category", "domain", *self.source_labels], registry=r)
        self.label_overflow = Counter("logsig_label_overflow", "Matches whose source labels were capped to 'other'.",
                                      ["signature_id"], registry=r)
        self.records_consumed = Counter("logsig_records_consumed", "Records read from a source.", ["topic"], registry=r)
        self.bytes_consumed = Counter("logsig_records_consumed_bytes", "Bytes of record values read.", ["topic"],
                                      registry=r)
        self.records_failed = Counter("logsig_records_failed", "Records that could not be decoded.", ["reason"],
                                      registry=r)
        self.records_repaired = Counter("logsig_records_repaired", "Records whose text had bytes that are not "
                                        "UTF-8, decoded as U+FFFD and matched.", registry=r)
        self.dead_letters = Counter("logsig_dead_letters", "Records written to the dead-letter topic.", ["reason"],
                                    registry=r)
        self.dead_letters_dropped = Counter("logsig_dead_letters_dropped",
                                            "Dead letters the sink could never write (too large for a request).",
                                            ["reason"], registry=r)
        self.incidents = Counter("logsig_incidents_emitted", "Incident events delivered, per sink.", ["sink"],
                                 registry=r)
        self.incidents_dropped = Counter("logsig_incidents_dropped", "Incident events a sink gave up on.",
                                         ["sink", "reason"], registry=r)
        self.outputs_shrunk = Counter("logsig_outputs_shrunk",
                                      "Outputs the broker refused as too large, written after a shrink step.",
                                      ["kind", "step"], registry=r)
        self.delivery_blocked = Gauge("logsig_delivery_blocked",
                                      "1 while the broker refuses even a minimal output: offsets are not committed.",
                                      registry=r)
        self.metadata_requests = Counter("logsig_kafka_metadata_requests",
                                         "Metadata requests the Kafka sink's producer sent.", registry=r)
        self.truncated = Counter("logsig_messages_truncated", "Messages matched on a bounded window.", registry=r)
        self.match_seconds = Counter("logsig_match_seconds", "Seconds spent in a signature's own regex (phase two).",
                                     ["signature_id"], registry=r)
        self.lag = Gauge("logsig_consumer_lag_records", "Records behind the partition's high watermark.",
                         ["topic", "partition"], registry=r)
        self.partitions = Gauge("logsig_partitions_assigned", "Partitions assigned to this replica.", registry=r)
        self.topics_missing = Gauge("logsig_input_topics_missing", "Subscribed input topics the cluster does not have.",
                                    registry=r)
        self.latency = Histogram("logsig_processing_latency_seconds",
                                 "Record timestamp to incident acknowledged by the sink (seconds), per event status "
                                 "(opened, updated, resolved; line: a per-line event).", ["status"],
                                 buckets=LATENCY_BUCKETS, registry=r)
        for status in LATENCY_STATUSES:
            self.latency.labels(status=status)
        self.unclassified = Counter("logsig_unclassified", "Matching lines only a generic-tier signature named "
                                    "(an unclassified failure), per domain of that signature.", ["domain"],
                                    registry=r)
        self.unclassified.labels(domain="generic")
        self.redactions = Counter("logsig_redactions", "Secrets masked before text left logsig, per kind.", ["kind"],
                                  registry=r)
        for kind in KINDS:
            self.redactions.labels(kind=kind)
        self._redactions_seen: dict[str, int] = {}
        self.groups_open = Gauge("logsig_groups_open", "Incident groups open in this replica.", registry=r)
        self.groups_evicted = Counter("logsig_groups_evicted", "Open incident groups evicted at grouping.max_groups.",
                                      registry=r)
        self.catalog_size = Gauge("logsig_catalog_signatures", "Signatures in the loaded catalog.", registry=r)
        self.reload_success = Gauge("logsig_catalog_reload_success", "1 if the last catalog (re)load succeeded.",
                                    registry=r)
        self.reload_time = Gauge("logsig_catalog_last_reload_timestamp_seconds",
                                 "Unix time of the last catalog (re)load attempt.", registry=r)
        self.reloads = Counter("logsig_catalog_reloads", "Catalog (re)loads by result.", ["result"], registry=r)
        self.last_record = Gauge("logsig_last_record_timestamp_seconds",
                                 "Timestamp of the last processed record (Unix seconds).", registry=r)
        build = Gauge("logsig_build_info", "Build information; the value is 1.", ["version"], registry=r)
        build.labels(version=__version__).set(1)
        for reason in FAILURE_REASONS:
            self.records_failed.labels(reason=reason)
            self.dead_letters.labels(reason=reason)
        for result in ("success", "failure"):
            self.reloads.labels(result=result)
        self._phase_two_seen: dict[str, float] = {}

    def init_sinks(self, sinks: Iterable[str]) -> None:
        """Pre-initialise the per-sink counters."""
        for sink in sinks:
            self.incidents.labels(sink=sink)
        self.incidents_dropped.labels(sink="kafka", reason="record_too_large")
        self.dead_letters_dropped.labels(reason="record_too_large")
        for kind in ("incident", "dead_letter"):
            for step in ("alone", "trimmed", "minimal"):
                self.outputs_shrunk.labels(kind=kind, step=step)

    def init_topics(self, topics: Iterable[str]) -> None:
        """Pre-initialise the per-topic counters."""
        for topic in topics:
            self.records_consumed.labels(topic=topic)
            self.bytes_consumed.labels(topic=topic)

    def set_catalog(self, signatures: Sequence[Signature], *, now: float) -> None:
        """Record a successful (re)load, pre-initialise every signature's counter to 0, and drop the
        series of signatures the new catalog no longer has."""
        self._forget_signatures(set(self._sig_labels) - {sig.id for sig in signatures})
        for sig in signatures:
            if self._sig_labels.get(sig.id) == (sig.category, sig.domain_name):
                continue  # its series exist already: a reload touches only what changed
            self._sig_labels[sig.id] = (sig.category, sig.domain_name)
            empty = ("",) * len(self.source_labels)
            self.matches.labels(sig.id, sig.category, sig.domain_name, *empty)
            self.match_seconds.labels(signature_id=sig.id)
        self.catalog_size.set(len(signatures))
        self.reload_success.set(1)
        self.reload_time.set(now)
        self.reloads.labels(result="success").inc()

    def _forget_signatures(self, removed: set[str]) -> None:
        for sig_id in removed:
            category, domain = self._sig_labels.pop(sig_id)
            for values in {("",) * len(self.source_labels), (OVERFLOW,) * len(self.source_labels),
                           *self._seen_sets.pop(sig_id, set())}:
                with contextlib.suppress(KeyError):
                    self.matches.remove(sig_id, category, domain, *values)
            for metric in (self.match_seconds, self.label_overflow):
                with contextlib.suppress(KeyError):
                    metric.remove(sig_id)
            self._phase_two_seen.pop(sig_id, None)

    def catalog_failed(self, *, now: float) -> None:
        """Record a failed catalog reload (the old catalog keeps running)."""
        self.reload_success.set(0)
        self.reload_time.set(now)
        self.reloads.labels(result="failure").inc()

    def count_match(self, signature_id: str, source: Source) -> None:
        """Count one match of ``signature_id`` from ``source``, capping distinct label sets."""
        category, domain = self._sig_labels.get(signature_id, ("", ""))
        values = tuple(getattr(source, name) or "" for name in self.source_labels)
        seen = self._seen_sets[signature_id]
        if values not in seen:
            if len(seen) >= self.max_label_sets:
                self.label_overflow.labels(signature_id=signature_id).inc()
                values = (OVERFLOW,) * len(values)
            else:
                seen.add(values)
        self.matches.labels(signature_id, category, domain, *values).inc()

    def add_phase_two(self, cumulative: Mapping[str, float]) -> None:
        """Export the engine's cumulative per-signature phase-two seconds as counter increments."""
        for sig_id, total in cumulative.items():
            delta = total - self._phase_two_seen.get(sig_id, 0.0)
            if delta > 0:
                self.match_seconds.labels(signature_id=sig_id).inc(delta)
                self._phase_two_seen[sig_id] = total

    def add_redactions(self, cumulative: Mapping[str, int]) -> None:
        """Export a redactor's cumulative counts per kind as counter increments."""
        for kind, total in cumulative.items():
            delta = total - self._redactions_seen.get(kind, 0)
            if delta > 0:
                self.redactions.labels(kind=kind).inc(delta)
                self._redactions_seen[kind] = total

    def forget_partition(self, topic: str, partition: int) -> None:
        """Drop the lag series of a partition this replica no longer owns."""
        with contextlib.suppress(KeyError):
            self.lag.remove(topic, str(partition))

    def reset_phase_two(self) -> None:
        """Forget the engine's totals (call when a new engine replaces the old one)."""
        self._phase_two_seen.clear()


def records_consumed(m: Metrics, batch: RecordBatch) -> None:
    """A batch was read: records and value bytes per topic (added once per run of the batch), and the
    last record's timestamp."""
    values = batch.values
    for run in batch.runs:
        part = values[run.start:run.end]
        size = sum(len(v or b"") for v in part) if None in part else sum(map(len, part))  # type: ignore[arg-type]
        topic = run.topic or ""
        m.records_consumed.labels(topic=topic).inc(run.end - run.start)
        m.bytes_consumed.labels(topic=topic).inc(size)
    if len(batch):
        last = batch.record(len(batch) - 1).origin.timestamp_ms
        if last is not None:
            m.last_record.set(last / 1000)


def step_processed(m: Metrics, step: StepResult, phase_two: Mapping[str, float]) -> None:
    """A step was decoded and matched: truncations, undecodable records, matches per signature and
    the engine's cumulative phase-two seconds (``phase_two``)."""
    m.truncated.inc(step.truncated)
    m.records_repaired.inc(step.repaired)
    for failure in step.failures:
        m.records_failed.labels(reason=failure.reason).inc()
    for detection in step.matched:
        for match in detection.matches:
            m.count_match(match.signature.id, detection.event.source)
    m.add_phase_two(phase_two)


def unclassified_seen(m: Metrics, domains: Mapping[str, int]) -> None:
    """Lines only a generic signature named (``Unclassified.observe``'s count per domain)."""
    for domain, count in domains.items():
        m.unclassified.labels(domain=domain).inc(count)


def incident_delivered(m: Metrics, detection: Detection, sink: str, now: float) -> None:
    """``sink`` acknowledged an incident at Unix time ``now`` (latency from the record timestamp, per
    event status: :data:`LATENCY_STATUSES`)."""
    m.incidents.labels(sink=sink).inc()
    ts = detection.event.origin.timestamp_ms
    if ts is not None:
        m.latency.labels(status=detection.incident.status or "line").observe(max(0.0, now - ts / 1000))


def dead_letter_written(m: Metrics, failure: DecodeFailure) -> None:
    """An undecodable record was written to the dead-letter topic."""
    m.dead_letters.labels(reason=failure.reason).inc()


def record_rejected(m: Metrics, outcome: Outcome, sink: str) -> None:
    """``sink`` can never take an output (it is dropped, the partition goes on): log and count it by kind."""
    log.error("record rejected by the sink; dropped", sink=sink, kind=outcome.kind, reason=outcome.reason)
    reason = outcome.reason or "rejected"
    if outcome.kind == "incident":
        m.incidents_dropped.labels(sink=sink, reason=reason).inc()
    else:
        m.dead_letters_dropped.labels(reason=reason).inc()


def outcomes_accounted(m: Metrics, outcomes: Sequence[Outcome], sink: str, now: float) -> None:
    """Every outcome of one delivery to ``sink`` at Unix time ``now``, as the events above."""
    for outcome in outcomes:
        if not outcome.delivered:
            record_rejected(m, outcome, sink)
        elif isinstance(outcome.output, Detection):
            incident_delivered(m, outcome.output, sink, now)
        else:
            dead_letter_written(m, outcome.output)
