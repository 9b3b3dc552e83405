"""The outcome of decoding one record."""

from __future__ import annotations

from dataclasses import dataclass

from logsig.records import FAILURE_REASONS, DecodeFailure, LogEvent, RawRecord


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """What one record decoded to.

    events: the log messages it holds, in order (several for an OTLP batch or an NDJSON value;
    none on failure, except ``too_many_events``: then the first ``max_events_per_record``);
    failure: why it could not be decoded whole (it then goes to the dead-letter topic), else None;
    truncated: some message text was longer than ``max_record_bytes`` and was cut for matching
    (the affected events also have ``truncated`` set);
    repaired: the text had bytes that are not UTF-8, decoded as U+FFFD (the events have ``repaired`` set).
    """

    events: tuple[LogEvent, ...] = ()
    failure: DecodeFailure | None = None
    truncated: bool = False
    repaired: bool = False


def failed(record: RawRecord, reason: str, detail: str) -> DecodeResult:
    """A result for a record that goes to the dead-letter topic.

    reason: one of :data:`~logsig.records.FAILURE_REASONS`; detail: a short human-readable
    explanation (at most 200 characters are kept).
    """
    if reason not in FAILURE_REASONS:
        raise ValueError(f"unknown decode failure reason {reason!r}")
    return DecodeResult(failure=DecodeFailure(reason=reason, detail=detail[:200], record=record))


def succeeded(events: tuple[LogEvent, ...]) -> DecodeResult:
    """A result holding ``events``; ``truncated`` is set when any of them was truncated."""
    if len(events) == 1:
        return DecodeResult(events, None, events[0].truncated)
    return DecodeResult(events, None, any(event.truncated for event in events))
