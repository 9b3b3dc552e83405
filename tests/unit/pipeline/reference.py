"""The pipeline as it was before batches: every record decoded, assembled and matched in turn.

Kept as the reference the batch-first pipeline is compared with (``test_differential.py``): it
differs from :class:`logsig.pipeline.Pipeline` only in :meth:`ReferencePipeline.process`, the former
``Pipeline.process`` loop, verbatim (``bench/bench_hot_path.py`` runs it as the baseline too).
"""

from __future__ import annotations

from collections.abc import Sequence

from logsig.batch import RecordBatch
from logsig.decode import decode_record
from logsig.pipeline import Pipeline, StepResult
from logsig.records import LogEvent, RawRecord


class ReferencePipeline(Pipeline):
    """Record by record: decode, feed the assembler, flush idle groups, match the whole list."""

    def process_batch(self, batch: RecordBatch, now: float) -> StepResult:
        """The former ``Pipeline.process`` over ``batch.records()``."""
        return self.process(batch.records(), now)

    def process(self, records: Sequence[RawRecord], now: float) -> StepResult:
        """The former ``Pipeline.process``, verbatim."""
        result = StepResult()
        ready: list[LogEvent] = []
        for record in records:
            decoded = decode_record(record, self.settings)
            if decoded.failure is not None:
                result.failures.append(self.redactor.failure(decoded.failure))
            result.truncated += int(decoded.truncated)
            for event in decoded.events:
                ready.extend(self.assembler.feed(event, now))
        ready.extend(self.assembler.flush_idle(now))
        self._match(ready, result)
        return result
