"""The sink stage: where incidents and dead letters go (Kafka, Alertmanager, stdout).

A :class:`Sink` takes a pipeline step (:class:`logsig.pipeline.StepResult`) and says, for each of
its outputs, what became of it (:class:`Outcome`). The daemon's first sink (Kafka) gates the
offset commits: only what it acknowledged may be committed past. Every later sink is handed the
incidents the first one delivered (so an alert never names an incident that is not on the topic).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from logsig.pipeline import Detection, StepResult
from logsig.records import DecodeFailure

OutputKind = Literal["incident", "dead_letter"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one output of a step.

    kind: ``incident`` (``output`` is a :class:`~logsig.pipeline.Detection`) or ``dead_letter``
    (``output`` is a :class:`~logsig.records.DecodeFailure`); delivered: acknowledged by the sink;
    reason: why not, when not delivered (e.g. ``record_too_large``), else None.
    """

    kind: OutputKind
    output: Detection | DecodeFailure
    delivered: bool
    reason: str | None = None


def delivered_step(step: StepResult, outcomes: list[Outcome]) -> StepResult:
    """The part of ``step`` whose incidents were delivered (what downstream sinks are given)."""
    ok = {id(o.output) for o in outcomes if o.delivered and o.kind == "incident"}
    return StepResult(detections=[d for d in step.detections if id(d) in ok])


class Sink(Protocol):
    """A destination for a step's incidents and dead letters."""

    name: str
    """The ``sink`` label of ``logsig_incidents_emitted_total`` and friends."""

    async def start(self) -> None:
        """Connect and check the destination exists. Raises on failure (the runner retries with backoff)."""

    async def deliver(self, step: StepResult, give_up: Callable[[], bool],
                      sleep: Callable[[float], Awaitable[None]]) -> list[Outcome] | None:
        """Deliver ``step``'s outputs; one outcome per output (incidents first, then dead letters).

        Returns None if ``give_up()`` became true before every output was acknowledged or
        rejected: then nothing of the step may be committed.
        """

    async def stop(self) -> None:
        """Flush and close."""
