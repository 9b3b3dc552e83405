"""The unclassified view: generic-tier detections tracked by template, specific ones ignored."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from logsig.decode.settings import DecodeSettings
from logsig.discovery.unclassified import Unclassified
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import GENERIC_PRIORITY, Signature
from logsig.pipeline import Detection, Pipeline
from logsig.records import Origin, RawRecord

GENERIC = Signature(id="generic/t", signature="s", regex=r"\w+Error: ", priority=GENERIC_PRIORITY)
SPECIFIC = Signature(id="t/keyerror", signature="s", regex=r"KeyError: 'layers")
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T0 = 1_764_500_000


def _detections(*values: str | tuple[str, int]) -> list[Detection]:
    """Detections of Kafka records (a value, or a value and its record time in seconds past T0)."""
    pipeline = Pipeline(Engine([GENERIC, SPECIFIC]), DecodeSettings(), clock=lambda: NOW)
    records = []
    for offset, value in enumerate(values):
        text, seconds = value if isinstance(value, tuple) else (value, 0)
        origin = Origin(topic="logs", partition=0, offset=offset, timestamp_ms=(T0 + seconds) * 1000)
        records.append(RawRecord(value=text.encode(), origin=origin))
    return pipeline.process(records, 0.0).detections


def _record(pod: str, seconds: int, text: str) -> tuple[str, int]:
    """A Fluent Bit record of ``text`` from ``pod``, produced ``seconds`` after T0."""
    record = {"log": text, "kubernetes": {"pod_name": pod, "namespace_name": "ml"}}
    return json.dumps(record), seconds


class TestUnclassified:
    """Unclassified.observe and view."""

    def test_burst_on_three_pods_is_one_template(self) -> None:
        """One unknown failure on three pods is one template with its count, pods, times and signature."""
        view = Unclassified()
        counts = view.observe(_detections(_record("vllm-0", 0, "ValueError: rank 1 failed"),
                                          _record("vllm-1", 5, "ValueError: rank 2 failed"),
                                          _record("vllm-2", 9, "ValueError: rank 3 failed")))
        top = view.view()["templates"]
        assert {"generic": 3} == counts
        assert [("ValueError: rank <NUM> failed", 3, 3, ["vllm-0", "vllm-1", "vllm-2"], "generic/t",
                 "2025-11-30T10:53:20+00:00", "2025-11-30T10:53:29+00:00")] == [
            (t["template"], t["count"], t["count_min"], t["pods"], t["signature_id"], t["first_seen"], t["last_seen"])
            for t in top]

    def test_specific_detections_are_not_unclassified(self) -> None:
        """A line a specific signature names is neither counted nor tracked."""
        view = Unclassified()
        counts = view.observe(_detections("KeyError: 'layers.0.mlp.down_proj.weight_scale'"))
        assert ({}, 0) == (dict(counts), view.view()["total"])

    def test_view_is_bounded_and_ranked(self) -> None:
        """A view with capacity 2 tracks two templates, the most frequent first, and honours the limit."""
        view = Unclassified(capacity=2)
        view.observe(_detections("AError: x", "BError: y", "BError: y", "CError: z", "CError: z", "CError: z"))
        whole, one = view.view(), view.view(limit=1)
        assert (6, 2, 2) == (whole["total"], whole["tracked"], whole["capacity"])
        assert ["CError: z"] == [t["template"] for t in one["templates"]]

    def test_get_by_fingerprint(self) -> None:
        """get() answers a tracked template by its fingerprint and None otherwise."""
        view = Unclassified()
        detection = _detections("OSError: [Errno 24] Too many open files")[0]
        view.observe([detection])
        found = view.get(detection.incident.fingerprint)
        assert found is not None
        assert ("OSError: [Errno <NUM>] Too many open files", None) == (found["template"], view.get("0" * 16))
