"""What a record says of itself silences it: advice lines, trace/debug/info records for the generic tier,
and child lines re-logged at ERROR that carry their own lower level (real lines from public reports)."""

from __future__ import annotations

import pytest

from logsig.decode.settings import DecodeSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord

ENGINE = Engine(load_catalog().signatures)

QUIET = [
    # https://github.com/huggingface/text-generation-inference/issues/814 (bitsandbytes' advice)
    "If you get `CUDA error: invalid device function` errors, the above might be the cause and the solution is to "
    "make sure only one ['libcudart.so', 'libcudart.so.11.0', 'libcudart.so.12.0'] in the paths that we search "
    "based on your env.",
    # https://github.com/lm-sys/FastChat/issues/2882 (a child's INFO line re-logged at ERROR)
    "2024-01-04 11:10:35 | ERROR | stderr | 2024-01-04 11:10:35,894  INFO worker.py:1636 -- Started a local Ray "
    "instance.",
    # https://github.com/sgl-project/sglang/issues/12496 (a warning that says how to silence it)
    "sglang-1  | [2025-11-01 16:50:36 TP1] Setup Custom allreduce failed with CUDART error: peer access is not "
    "supported between these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.",
    # https://github.com/kserve/kserve/issues/4512 (a zap record at INFO)
    '{"severity":"INFO","timestamp":"2025-06-08T19:40:18.657596141Z","caller":"logging/config.go:80",'
    '"message":"Unable to read vcs.revision from binary"}',
]

STILL_FAILURES = [
    # the same FastChat wrapper around a child's real failure
    ("2024-01-04 11:10:36 | ERROR | stderr | torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
     "2.00 GiB."),
    # a zap record at ERROR with the same kind of message: the generic tier still names it
    ('{"severity":"ERROR","timestamp":"2025-06-08T19:40:18.657596141Z","caller":"x.go:1",'
     '"message":"Unable to read the model from /mnt/models"}'),
    # a specific signature still fires on an INFO record (vLLM logs some failures at INFO)
    "INFO 08-14 16:06:55 [core.py:1349] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.96 GiB.",
]


def raised(line: str) -> list[str]:
    """Primary signature ids of the incidents ``line`` raises."""
    step = Pipeline(ENGINE, DecodeSettings()).process([RawRecord(line.encode(), Origin(file="t", line_number=1))], 0.0)
    return [d.incident.signature.id for d in step.detections]


class TestQuiet:
    @pytest.mark.parametrize("line", QUIET, ids=["advice", "relogged-info", "silence-hint", "zap-info"])
    def test_lines_that_say_they_are_no_failure_raise_nothing(self, line: str) -> None:
        """Each real line that says of itself it is advice, a warning or an info record raises no incident."""
        assert [] == raised(line)

    @pytest.mark.parametrize("line", STILL_FAILURES, ids=["relogged-oom", "zap-error", "info-oom"])
    def test_failures_in_the_same_shapes_still_raise(self, line: str) -> None:
        """The same wrappers around a failure, or an error level, still raise an incident."""
        assert 1 == len(raised(line))
