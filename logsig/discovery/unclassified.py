"""The unclassified tier: incidents only a generic signature named, counted by template.

An incident is *unclassified* when its primary signature is in the generic tier
(:attr:`logsig.matchers.signature.Signature.tier`): the catalog knows the class of the failure
(a Python exception, an out-of-memory wording, an ERROR record) but not the failure. The
:class:`Unclassified` view keeps the most frequent of their templates in a bounded
:class:`~logsig.discovery.topk.TopK` keyed by fingerprint, for the daemon's ``/unclassified``
endpoint and ``logsig scan --unclassified``; ``logsig catalog draft --template`` turns one into a
signature skeleton. Pure: no I/O, no clock (times come from the incidents).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from logsig.discovery.topk import TemplateCount, TopK
from logsig.incident import Incident
from logsig.pipeline import Detection

__all__ = ["Unclassified", "seen_at", "template_json", "utc_iso"]


def seen_at(incident: Incident) -> float:
    """When the line was logged (Unix seconds): its log time, else the record time, else detection."""
    moment = incident.log_timestamp or incident.source.timestamp or incident.detected_at
    return moment.timestamp()


def utc_iso(seconds: float) -> str:
    """Unix ``seconds`` as ISO 8601 / RFC 3339 in UTC (``2026-01-01T00:00:00+00:00``): how every time
    the HTTP API (``/status``, ``/unclassified``) shows is written."""
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat()


def template_json(entry: TemplateCount) -> dict[str, Any]:
    """One template as JSON-ready data (times RFC 3339 UTC; ``count_min`` = ``count - error``)."""
    return {
        "fingerprint": entry.fingerprint,
        "template": entry.template,
        "count": entry.count,
        "count_min": entry.count - entry.error,
        "first_seen": utc_iso(entry.first_seen),
        "last_seen": utc_iso(entry.last_seen),
        "example": entry.example,
        "signature_id": entry.signature_id,
        "pods": list(entry.pods),
        "pods_truncated": entry.pods_truncated,
    }


class Unclassified:
    """The top unclassified templates: ``capacity`` tracked, ``max_pods`` pods each (see TopK)."""

    def __init__(self, capacity: int = 1000, max_pods: int = 8) -> None:
        self.topk = TopK(capacity, max_pods=max_pods)

    def observe(self, detections: Iterable[Detection]) -> Counter[str]:
        """Track the unclassified ``detections`` (one per matching line); their count per domain."""
        domains: Counter[str] = Counter()
        for detection in detections:
            incident = detection.incident
            if incident.tier != "generic":
                continue
            domains[incident.signature.domain] += 1
            self.topk.add(incident.fingerprint, incident.template, line=incident.match.line,
                          pod=incident.source.pod or "", seen_at=seen_at(incident),
                          signature_id=incident.signature.id)
        return domains

    def view(self, limit: int | None = None) -> dict[str, Any]:
        """``{"total", "tracked", "capacity", "templates": [...]}``, most frequent first, at most ``limit``."""
        return {
            "total": self.topk.total,
            "tracked": len(self.topk),
            "capacity": self.topk.capacity,
            "templates": [template_json(entry) for entry in self.topk.top(limit)],
        }

    def get(self, fingerprint: str) -> dict[str, Any] | None:
        """One tracked template by fingerprint, or None."""
        entry = self.topk.get(fingerprint)
        return None if entry is None else template_json(entry)
