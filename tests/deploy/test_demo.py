"""What ``make demo`` prints for an incident."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy" / "local"))
from demo import _around

LINE = ("F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error "
        "Internal: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to "
        "cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered")


class TestAround:
    def test_a_long_line_is_shown_where_it_matched(self) -> None:
        """The matched text of a line longer than the width is in what is printed, after an ellipsis."""
        start = LINE.index("CUDA_ERROR_ECC_UNCORRECTABLE")
        shown = _around(LINE, [start, start + 28])
        assert (True, True, 163) == (shown.startswith("..."), "CUDA_ERROR_ECC_UNCORRECTABLE" in shown, len(shown))

    def test_a_short_line_is_shown_whole(self) -> None:
        """A line within the width is printed unchanged."""
        assert "RuntimeError: NCCL Error 2: unhandled system error" == _around(
            "RuntimeError: NCCL Error 2: unhandled system error", [0, 10])
