"""Commit offsets: one past the last delivered record, capped by held groups, assigned only."""

from logsig.daemon.offsets import OffsetTracker, committable, next_offsets
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


class TestOffsetTracker:
    def test_committable_is_one_past_the_delivered_batch(self) -> None:
        """A delivered batch with nothing held commits one past its last record per partition."""
        tracker = OffsetTracker()
        tracker.delivered(next_offsets([_record(3), _record(1, partition=1)]), {})
        assert {("t", 0): 4, ("t", 1): 2} == tracker.committable({("t", 0), ("t", 1)})

    def test_held_record_caps_the_commit(self) -> None:
        """A record held after the batch caps its partition at that record's offset."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10}, {("t", 0): 6})
        assert {("t", 0): 6} == tracker.committable({("t", 0)})

    def test_held_is_the_latest_delivered_batch(self) -> None:
        """Once a later batch emitted the held record and was delivered, the cap is lifted."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10}, {("t", 0): 6})
        tracker.delivered({("t", 0): 20}, {})
        assert {("t", 0): 20} == tracker.committable({("t", 0)})

    def test_position_never_moves_back(self) -> None:
        """A batch with lower offsets does not lower the delivered position."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10}, {})
        tracker.delivered({("t", 0): 4}, {})
        assert {("t", 0): 10} == tracker.committable({("t", 0)})

    def test_changed_leaves_out_what_was_committed(self) -> None:
        """Offsets already committed are not offered again; new positions are."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10, ("t", 1): 3}, {})
        tracker.committed({("t", 0): 10})
        assert {("t", 1): 3} == tracker.changed({("t", 0), ("t", 1)})

    def test_unassigned_partitions_are_left_out(self) -> None:
        """Only the partitions asked for are offered."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10, ("t", 1): 3}, {})
        assert {("t", 1): 3} == tracker.changed({("t", 1)})

    def test_revoked_partitions_are_forgotten(self) -> None:
        """A revoked partition has nothing to commit, even if it comes back."""
        tracker = OffsetTracker()
        tracker.delivered({("t", 0): 10}, {("t", 0): 2})
        tracker.committed({("t", 0): 2})
        tracker.revoked([("t", 0)])
        assert {} == tracker.changed({("t", 0)})
