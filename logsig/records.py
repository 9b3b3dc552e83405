"""Small frozen types passed between the pipeline's stages.

source -> :class:`RawRecord` -> decode -> :class:`LogEvent` (or :class:`DecodeFailure`)
-> match -> ``logsig.matchers.engine.engine.Match`` -> enrich -> ``logsig.incident.Incident``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

TP = tuple[str, int]
"""A Kafka (topic, partition)."""


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a record came from.

    For Kafka: ``topic``, ``partition``, ``offset`` and ``timestamp_ms`` (the record timestamp,
    milliseconds since the Unix epoch) and ``key``. For a file: ``file`` and ``line_number``
    (1-based). Unused fields are None.
    """

    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp_ms: int | None = None
    key: str | None = None
    file: str | None = None
    line_number: int | None = None


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record value as a source delivered it, before decoding.

    value: the record's bytes (None for a Kafka tombstone); headers: Kafka headers in order.
    """

    value: bytes | None
    origin: Origin
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class Source:
    """Kubernetes / OpenTelemetry coordinates of a log line, as far as the record carries them.

    labels: the pod labels with keys exactly as the shipper wrote them (dotted
    ``app.kubernetes.io/name`` or de-dotted ``app_kubernetes_io/name``); not part of the hash.
    image: the container image as the shipper reports it (``vllm/vllm-openai:v0.6.3``), or None.
    """

    cluster: str | None = None
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    node: str | None = None
    stream: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    image: str | None = None


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One decoded log message, ready for matching.

    message: the text to match (ANSI colour codes removed; for an assembled multi-line event,
    the whole text joined with ``\\n``); line: the key line that ``match.line`` reports (the
    final exception line of a traceback, else the message); context: the lines of a
    multi-line event (bounded), empty for a single line; origin: the record the event came
    from (the first record of a multi-line event); origins: every record it covers, in order
    (empty for an event from a single record: then it covers ``origin`` only); partial: the
    record is a fragment of a longer line (CRI ``P`` tag, Docker json-file ``log`` without its
    trailing newline) that the multi-line assembler joins with the next fragments; position: the
    event's 0-based place among the events its record decoded to (an OTLP batch or NDJSON value
    holds several), so two equal lines of one record stay two events; repaired: bytes of the text
    that were not UTF-8 were decoded as U+FFFD (of any record, for a multi-line event).
    """

    message: str
    origin: Origin
    source: Source = field(default_factory=Source)
    timestamp: datetime | None = None
    level: str | None = None
    line: str | None = None
    context: tuple[str, ...] = ()
    truncated: bool = False
    origins: tuple[Origin, ...] = ()
    partial: bool = False
    position: int = 0
    repaired: bool = False

    @property
    def covered_origins(self) -> tuple[Origin, ...]:
        """Every record this event covers, in order: ``origins``, or ``(origin,)`` if empty."""
        return self.origins or (self.origin,)


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    """A record that could not be decoded; goes to the dead-letter topic.

    reason: one of :data:`FAILURE_REASONS` (a bounded set, used as a metric label).
    """

    reason: str
    detail: str
    record: RawRecord


FAILURE_REASONS: tuple[str, ...] = (
    "empty_value",
    "not_utf8",
    "invalid_json",
    "json_not_object",
    "no_message_field",
    "invalid_msgpack",
    "invalid_otlp",
    "too_large",
    "too_many_events",
    "decode_error",
)
"""Bounded reasons for ``logsig_records_failed_total{reason}`` and dead-letter headers."""
