"""Exactly-once behind a held multi-line group: outputs wait until every record they cover is committable.

Offsets are committed no further than the oldest record of an open multi-line group (the hold).
Records after it on the same partition are read again after a crash, so in ``exactly_once``
mode an output covering any of them is not written yet: :class:`Deferral` keeps it until the hold
moves past all its records (the group is emitted) or goes away (flush, revocation, shutdown), and
hands it to the sink in that step's transaction. Written outputs then cover only records below
the committed offset, and a record read again after a crash yields outputs that were never
written: each once. The delay is at most the group's ``decode.multiline.idle_timeout_seconds``.

Pure (no I/O). Kept outputs stay in arrival order; the pipeline's own order is preserved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from logsig.pipeline import Detection, StepResult
from logsig.records import TP, DecodeFailure, Origin


def _behind(origins: Iterable[Origin], held: Mapping[TP, int]) -> bool:
    """True if any of ``origins`` is at or after the hold of its partition."""
    for origin in origins:
        if origin.topic is None or origin.partition is None or origin.offset is None:
            continue
        cap = held.get((origin.topic, origin.partition))
        if cap is not None and origin.offset >= cap:
            return True
    return False


class Deferral:
    """Outputs (incidents, dead letters, per-line detections) waiting behind a hold."""

    def __init__(self) -> None:
        self._detections: list[Detection] = []
        self._failures: list[DecodeFailure] = []
        self._lines: list[Detection] = []

    def __len__(self) -> int:
        return len(self._detections) + len(self._failures) + len(self._lines)

    def take(self, step: StepResult, held: Mapping[TP, int]) -> StepResult:
        """``step`` with the outputs kept earlier added and those behind ``held`` (lowest held offset per
        partition, after ``step`` was processed) kept back for a later step."""
        detections, self._detections = _split(self._detections + step.detections, held)
        failures = self._failures + step.failures
        self._failures = [f for f in failures if _behind((f.record.origin,), held)]
        failures = [f for f in failures if not _behind((f.record.origin,), held)]
        lines = step.lines
        if step.lines is not None or self._lines:
            lines, self._lines = _split(self._lines + (step.lines or []), held)
        return replace(step, detections=detections, failures=failures, lines=lines)


def _split(outputs: list[Detection], held: Mapping[TP, int]) -> tuple[list[Detection], list[Detection]]:
    """(ready, still behind the hold), each in order."""
    behind = [_behind(d.event.covered_origins, held) for d in outputs]
    return ([d for d, b in zip(outputs, behind, strict=True) if not b],
            [d for d, b in zip(outputs, behind, strict=True) if b])
