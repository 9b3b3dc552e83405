"""Commit offsets: one past the last delivered record, capped by held groups, assigned only."""

from logsig.daemon.offsets import committable, next_offsets
from logsig.records import Origin, RawRecord


def _record(offset: int, partition: int = 0, value: bytes = b"x") -> RawRecord:
    return RawRecord(value=value, origin=Origin(topic="t", partition=partition, offset=offset, timestamp_ms=5),
                     key=b"k", headers=(("h", b"v"),))


class TestOffsets:
    def test_next_offsets_is_one_past_the_highest(self) -> None:
        """Each partition's next offset follows its highest record."""
        records = [_record(3), _record(9), _record(4), _record(1, partition=1)]
        assert {("t", 0): 10, ("t", 1): 2} == next_offsets(records)

    def test_committable_is_capped_by_held_groups(self) -> None:
        """A record held in an open multi-line group caps the commit at its offset."""
        delivered = {("t", 0): 10, ("t", 1): 5}
        assert {("t", 0): 6, ("t", 1): 5} == committable(delivered, {("t", 0): 6}, {("t", 0), ("t", 1)})

    def test_committable_skips_unassigned_partitions(self) -> None:
        """Offsets of partitions no longer assigned are not committed."""
        assert {} == committable({("t", 0): 10}, {}, {("t", 1)})
