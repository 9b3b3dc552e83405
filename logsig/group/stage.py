"""The grouping stage between the pipeline and the sinks (pure: no I/O).

:meth:`GroupStage.step` turns a pipeline step into the step the sinks see: ``detections`` become the
group events due (:class:`logsig.group.grouper.Grouper`), and the per-line detections move to
``lines`` (still counted per signature in the metrics and produced to ``kafka.line_topic`` when set).
With ``grouping.enabled`` false the step passes unchanged: one event per matching line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from logsig.group.grouper import Grouper
from logsig.group.settings import GroupSettings
from logsig.pipeline import StepResult
from logsig.records import TP


class GroupStage:
    """Groups steps; ``grouper`` is None when grouping is off."""

    def __init__(self, settings: GroupSettings) -> None:
        self.grouper = Grouper(settings) if settings.enabled else None

    def step(self, step: StepResult, now: float | None = None) -> StepResult:
        """``step`` with its detections counted and the group events due at ``now`` as detections
        (``now`` None: log time, see :class:`Grouper`)."""
        if self.grouper is None:
            return step
        events = self.grouper.feed(step.detections, now) + self.grouper.tick(now)
        return replace(step, detections=events, lines=step.detections)

    def flush(self, step: StepResult, partitions: Iterable[TP] | None = None, resolve: bool = False,
              now: float | None = None) -> StepResult:
        """:meth:`step`, then the report of every group (``partitions`` None) or of those fed from
        ``partitions``: shutdown, revocation, or (``resolve``) the end of a scan."""
        if self.grouper is None:
            return step
        events = self.grouper.feed(step.detections, now) + self.grouper.flush(partitions, resolve)
        return replace(step, detections=events, lines=step.detections)

    def held_offsets(self, held: dict[TP, int]) -> dict[TP, int]:
        """``held`` (the pipeline's) lowered to the offsets of occurrences not yet reported."""
        out = dict(held)
        if self.grouper is not None:
            for tp, offset in self.grouper.held_offsets().items():
                out[tp] = min(out.get(tp, offset), offset)
        return out

    def open_groups(self) -> int:
        """Groups open now."""
        return 0 if self.grouper is None else len(self.grouper)

    def evicted(self) -> int:
        """Groups evicted so far."""
        return 0 if self.grouper is None else self.grouper.evicted
