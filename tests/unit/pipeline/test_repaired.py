"""A record with a byte that is not UTF-8 through the pipeline: matched, flagged and counted, nothing lost."""

from __future__ import annotations

from logsig.decode.settings import DecodeSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord
from logsig.telemetry import step_processed
from logsig.testing import fresh_metrics

OOM = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       b"79.15 GiB of which 1.2 MiB is free. Process 4711 (\xe9) has 78 GiB memory in use.")


class TestRepairedRecord:
    """One OOM line with a Latin-1 byte, and one binary value, in one batch."""

    def test_incident_is_raised_flagged_and_counted(self) -> None:
        """The OOM line raises its incident with match.repaired; the binary value is a dead letter; both are counted."""
        pipeline = Pipeline(Engine(load_catalog().signatures), DecodeSettings())
        records = [RawRecord(OOM, Origin(topic="logs", partition=0, offset=0)),
                   RawRecord(b"\xff\xfe\x00\x81 not text", Origin(topic="logs", partition=0, offset=1))]
        step = pipeline.process(records, 0.0)
        metrics = fresh_metrics()
        step_processed(metrics, step, {})
        sample = metrics.registry.get_sample_value
        assert (["cuda/torch-oom"], [True], ["not_utf8"], 1.0, 1.0) == (
            [d.incident.signature.id for d in step.detections], [d.incident.match.repaired for d in step.detections],
            [f.reason for f in step.failures], sample("logsig_records_repaired_total"),
            sample("logsig_records_failed_total", {"reason": "not_utf8"}))
