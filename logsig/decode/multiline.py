"""Multi-line assembly (first version: every event passes straight through)."""

from __future__ import annotations

from logsig.decode.settings import DecodeSettings
from logsig.records import LogEvent


class Assembler:
    """Joins the lines of one traceback per stream into one event (pass-through for now)."""

    def __init__(self, settings: DecodeSettings) -> None:
        self._settings = settings

    def feed(self, event: LogEvent, now: float) -> list[LogEvent]:
        """Events ready to match, in order, after ``event`` arrived at monotonic ``now`` (s)."""
        return [event]

    def flush_idle(self, now: float) -> list[LogEvent]:
        """Events of groups idle past the timeout at monotonic ``now`` (seconds)."""
        return []

    def flush_all(self) -> list[LogEvent]:
        """Every held event (on shutdown)."""
        return []

    def flush_partitions(self, partitions: set[tuple[str, int]]) -> list[LogEvent]:
        """Events of groups holding records of ``partitions`` (topic, partition) on revocation."""
        return []

    def held_offsets(self) -> dict[tuple[str, int], int]:
        """Lowest Kafka offset held in an open group, per (topic, partition)."""
        return {}
