"""Metrics as a scrape sees them."""

from datetime import UTC, datetime

from prometheus_client import CollectorRegistry

from logsig.enrich import build_incident
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Detection
from logsig.records import LogEvent, Origin, Source
from logsig.telemetry import Metrics, incident_delivered

ENGINE = Engine([load_catalog().by_id()["cuda/torch-oom"]])
SIG = Signature(id="t/oom", signature="s", regex="x", category="resource_error", domain="t")


def _value(registry: CollectorRegistry, name: str, labels: dict[str, str]) -> float | None:
    return registry.get_sample_value(name, labels)


class TestMetrics:
    def test_signatures_are_pre_initialised_to_zero(self) -> None:
        """Every loaded signature has a zero counter before its first match."""
        registry = CollectorRegistry()
        Metrics(registry).set_catalog([SIG], now=0)
        labels = {"signature_id": "t/oom", "category": "resource_error", "domain": "t", "cluster": "",
                  "namespace": ""}
        assert 0.0 == _value(registry, "logsig_signature_matches_total", labels)
        assert 1.0 == _value(registry, "logsig_catalog_signatures", {})

    def test_match_carries_source_labels(self) -> None:
        """cluster and namespace become labels by default."""
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        metrics.set_catalog([SIG], now=0)
        metrics.count_match("t/oom", Source(cluster="c1", namespace="ml", pod="p"))
        labels = {"signature_id": "t/oom", "category": "resource_error", "domain": "t", "cluster": "c1",
                  "namespace": "ml"}
        assert 1.0 == _value(registry, "logsig_signature_matches_total", labels)

    def test_label_sets_beyond_the_cap_become_other(self) -> None:
        """Past max_label_sets distinct sets, values are 'other' and the overflow is counted."""
        registry = CollectorRegistry()
        metrics = Metrics(registry, source_labels=["namespace"], max_label_sets=2)
        metrics.set_catalog([SIG], now=0)
        for ns in ("a", "b", "c", "d", "a"):
            metrics.count_match("t/oom", Source(namespace=ns))
        base = {"signature_id": "t/oom", "category": "resource_error", "domain": "t"}
        assert 2.0 == _value(registry, "logsig_signature_matches_total", {**base, "namespace": "a"})
        assert 2.0 == _value(registry, "logsig_signature_matches_total", {**base, "namespace": "other"})
        assert 2.0 == _value(registry, "logsig_label_overflow_total", {"signature_id": "t/oom"})

    def test_phase_two_seconds_are_exported_as_deltas(self) -> None:
        """Cumulative engine totals become counter increments, never double counted."""
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        metrics.add_phase_two({"t/oom": 0.5})
        metrics.add_phase_two({"t/oom": 0.75})
        assert 0.75 == _value(registry, "logsig_match_seconds_total", {"signature_id": "t/oom"})

    def test_failure_reasons_are_pre_initialised(self) -> None:
        """Each bounded failure reason starts at zero."""
        registry = CollectorRegistry()
        Metrics(registry)
        assert 0.0 == _value(registry, "logsig_records_failed_total", {"reason": "not_utf8"})

    def test_reload_drops_series_of_removed_signatures(self) -> None:
        """A signature gone from the new catalog no longer shows on /metrics."""
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        other = Signature(id="t/other", signature="s", regex="y", category="runtime_error", domain="t")
        metrics.set_catalog([SIG, other], now=0)
        metrics.count_match("t/other", Source(cluster="c", namespace="n"))
        metrics.set_catalog([SIG], now=1)
        names = {s.labels.get("signature_id") for f in registry.collect() for s in f.samples}
        assert "t/other" not in names
        assert "t/oom" in names

    def test_no_created_series(self) -> None:
        """Counters export no *_created samples."""
        registry = CollectorRegistry()
        Metrics(registry).set_catalog([SIG], now=0)
        assert [] == [s.name for f in registry.collect() for s in f.samples if s.name.endswith("_created")]


class TestLatency:
    """``logsig_processing_latency_seconds`` per event status."""

    @staticmethod
    def _detection(status: str | None) -> Detection:
        event = LogEvent(message="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                         origin=Origin(topic="logs", partition=0, offset=7, timestamp_ms=1_000_000))
        matches = ENGINE.match(event.message)
        incident = build_incident(event, matches, datetime(2026, 3, 1, tzinfo=UTC))
        return Detection(incident.model_copy(update={"status": status}), event, tuple(matches))

    def test_each_status_is_observed_under_its_own_label(self) -> None:
        """An opened event's latency is not mixed with an update's, and a per-line event is 'line'."""
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        incident_delivered(metrics, self._detection("opened"), "kafka", now=1_000.2)
        incident_delivered(metrics, self._detection("updated"), "kafka", now=1_009.0)
        incident_delivered(metrics, self._detection(None), "kafka", now=1_000.05)
        sums = {status: _value(registry, "logsig_processing_latency_seconds_sum", {"status": status})
                for status in ("opened", "updated", "resolved", "line")}
        assert {"opened": 0.2, "updated": 9.0, "resolved": 0.0, "line": 0.05} == {
            k: round(v or 0.0, 3) for k, v in sums.items()}
