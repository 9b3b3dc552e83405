"""Exactly-once deferral: an output is handed to the sink only once every record it covers is below the hold."""

from logsig.daemon.defer import Deferral
from logsig.pipeline import Detection, StepResult
from logsig.records import DecodeFailure, LogEvent, Origin, RawRecord


def _detection(*offsets: int, partition: int = 0) -> Detection:
    origins = tuple(Origin(topic="in", partition=partition, offset=o) for o in offsets)
    event = LogEvent(message=f"line {offsets}", origin=origins[0], origins=origins if len(origins) > 1 else ())
    return Detection(incident=None, event=event, matches=())  # type: ignore[arg-type]


def _failure(offset: int) -> DecodeFailure:
    return DecodeFailure("invalid_json", "x", RawRecord(value=b"{", origin=Origin(topic="in", partition=0, offset=offset)))


def _offsets(step: StepResult) -> list[tuple[int | None, ...]]:
    return [tuple(o.offset for o in d.event.covered_origins) for d in step.detections]


class TestDeferral:
    def test_outputs_behind_the_hold_wait(self) -> None:
        """With a traceback held from offset 5, the line at 7 waits while the line at 3 goes now."""
        deferral = Deferral()
        step = deferral.take(StepResult(detections=[_detection(3), _detection(7)]), {("in", 0): 5})
        assert ([(3,)], 1) == (_offsets(step), len(deferral))

    def test_waiting_outputs_go_in_order_once_the_hold_is_gone(self) -> None:
        """When the group is emitted (no hold), the kept line follows it, each once, in arrival order."""
        deferral = Deferral()
        deferral.take(StepResult(detections=[_detection(7)]), {("in", 0): 5})
        step = deferral.take(StepResult(detections=[_detection(5, 6, 8)]), {})
        assert ([(7,), (5, 6, 8)], 0) == (_offsets(step), len(deferral))

    def test_a_group_spanning_past_another_hold_waits(self) -> None:
        """An emitted traceback covering a record after another open group's start waits for that group too."""
        deferral = Deferral()
        step = deferral.take(StepResult(detections=[_detection(2, 4, 9)]), {("in", 0): 6})
        assert ([], 1) == (_offsets(step), len(deferral))

    def test_other_partitions_are_not_held_back(self) -> None:
        """A hold on partition 0 keeps nothing of partition 1."""
        deferral = Deferral()
        step = deferral.take(StepResult(detections=[_detection(7, partition=1)]), {("in", 0): 5})
        assert [(7,)] == _offsets(step)

    def test_dead_letters_behind_the_hold_wait_too(self) -> None:
        """An undecodable record after the hold goes to the dead-letter topic only once the hold moves."""
        deferral = Deferral()
        first = deferral.take(StepResult(failures=[_failure(2), _failure(8)]), {("in", 0): 5})
        second = deferral.take(StepResult(), {})
        assert ([2], [8]) == ([f.record.origin.offset for f in first.failures],
                              [f.record.origin.offset for f in second.failures])
