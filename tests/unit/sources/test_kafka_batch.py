"""The Kafka source's bound on the bytes of one batch after decompression."""

from logsig.batch import batch_of_records
from logsig.sources.kafka import within_bytes
from logsig.testing import make_record


class TestWithinBytes:
    def test_batch_within_the_bound_is_taken_whole(self) -> None:
        """Three 100-byte records under a 1,000-byte bound are all taken, nothing is sought back."""
        records = batch_of_records([make_record(b"x" * 100, i) for i in range(3)])
        assert (3, {}) == (len(within_bytes(records, 1000)[0]), within_bytes(records, 1000)[1])

    def test_records_past_the_bound_are_read_again(self) -> None:
        """Past the bound the rest is left out and each partition is sought back to its first record left out."""
        records = batch_of_records([make_record(b"x" * 400, 0), make_record(b"x" * 400, 1),
                                    make_record(b"x" * 400, 2), make_record(b"y" * 10, 5, partition=1)])
        taken, rewind = within_bytes(records, 1000)
        assert ([0, 1], {("logs", 0): 2, ("logs", 1): 5}) == ([r.origin.offset for r in taken.records()], rewind)

    def test_one_record_larger_than_the_bound_is_still_taken(self) -> None:
        """A single 24 MiB value is taken alone (then bounded by the decode stage), so the partition moves on."""
        records = batch_of_records([make_record(b"x" * (24 << 20), 0), make_record(b"y", 1)])
        taken, rewind = within_bytes(records, 1 << 20)
        assert ([0], {("logs", 0): 1}) == ([r.origin.offset for r in taken.records()], rewind)
