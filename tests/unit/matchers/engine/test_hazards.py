"""ReDoS: 64 KiB lines built to make a backtracking engine blow up cost about what benign lines do.

Each case pairs an adversarial line (the classic input for its regex shape: Python ``re`` needs
exponential or high-polynomial time on it) with a benign log line of the same length, so the
assertion is a ratio of CPU times, never a wall-clock limit. Linearity is checked too: four
times the text may cost at most about four times the time (a quadratic engine costs sixteen).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature

LENGTH = 65535
RUNS = 5
MAX_RATIO = 200.0
"""Adversarial / benign CPU time. Measured here: at most ~55 with google-re2 1.1.20251105 (RE2 keeps
more threads alive on ``a.a.a...`` than on text; ~30 with earlier releases); a quadratic engine
would be ~10,000 on 64 KiB, an exponential one would not finish."""
MAX_SCALE = 8.0
"""CPU time on 64 KiB / on 16 KiB; linear is 4."""
MEASURABLE_SECONDS = 1e-3
"""Below this a 64 KiB line cost only phase one's scan; the 64/16 KiB ratio of such times is noise."""


def _fill(text: str, length: int = LENGTH) -> str:
    return (text * (length // len(text) + 1))[:length]


_METRICS = "INFO 04-10 03:35:27 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.20 "
_LOGGERS = "INFO 04-10 03:35:27 [loggers.py:80] Avg prompt throughput: 13.0 tokens/s, Running: 0 reqs "
CASES = [
    pytest.param(r"(?P<tail>.*a){12}", _fill("a"), _fill(_METRICS), id="repeated-dot-star-matching"),
    pytest.param(r"(?P<tail>.*a){12}", "a" * 11 + _fill("x", LENGTH - 11), _fill(_LOGGERS),
                 id="repeated-dot-star-failing"),
    pytest.param(r"(a+)+$", _fill("a", LENGTH - 1) + "b", _fill(_METRICS), id="nested-plus"),
    pytest.param(r"(?P<w>\w+\s?)+$", _fill("word ", LENGTH - 1) + "!", _fill(_LOGGERS), id="word-runs"),
    pytest.param(r"CUDA.*error.*memory.*(?P<tail>failed)", _fill("CUDA error memory "),
                 _fill("INFO CUDA graph capture took 1.2 s; error rate 0; memory 12 GiB; "), id="dot-star-gaps"),
    pytest.param(r"(?P<x>(?:a|aa)+)c", _fill("a"), _fill(_METRICS), id="overlapping-alternatives"),
    pytest.param(r"^(?P<host>[\w.-]+)+:(?P<port>\d+)$", _fill("a.", LENGTH - 1) + "!",
                 _fill("INFO [api_server.py:166] serving on host0.example:8000 "), id="host-port"),
]


def _cpu_seconds(run: Callable[[], object]) -> float:
    """Least CPU time of :data:`RUNS` runs (other processes only ever add time)."""
    run()
    best = float("inf")
    for _ in range(RUNS):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return max(best, 1e-6)


class TestEngineOnHostileLines:
    @pytest.mark.parametrize(("regex", "adversarial", "benign"), CASES)
    def test_cost_is_bounded_by_a_benign_line(self, regex: str, adversarial: str, benign: str) -> None:
        """Matching the adversarial line costs at most MAX_RATIO times the benign line."""
        engine = Engine([Signature(id="t/redos", signature="s", regex=regex)])
        ratio = _cpu_seconds(lambda: engine.match(adversarial)) / _cpu_seconds(lambda: engine.match(benign))
        assert ratio <= MAX_RATIO, f"adversarial / benign = {ratio:.1f}"

    @pytest.mark.parametrize(("regex", "adversarial", "benign"), CASES)
    def test_cost_grows_linearly(self, regex: str, adversarial: str, benign: str) -> None:
        """Four times the adversarial text costs at most MAX_SCALE times the time (when measurable)."""
        engine = Engine([Signature(id="t/redos", signature="s", regex=regex)])
        quarter = adversarial[: LENGTH // 4]
        full = _cpu_seconds(lambda: engine.match(adversarial))
        scale = full / _cpu_seconds(lambda: engine.match(quarter))
        assert full < MEASURABLE_SECONDS or scale <= MAX_SCALE, f"64 KiB / 16 KiB = {scale:.1f}"


class TestPhaseTwoOnHostileLines:
    @pytest.mark.parametrize(("regex", "adversarial", "benign"), CASES)
    def test_phase_two_alone_is_bounded(self, regex: str, adversarial: str, benign: str) -> None:
        """Even a line phase one let through (a false candidate) cannot make phase two backtrack."""
        confirmer = Engine([Signature(id="t/redos", signature="s", regex=regex)]).compiled.confirmers[0]
        assert confirmer.compile_re2()
        bad, good = adversarial.encode(), benign.encode()
        ratio = (_cpu_seconds(lambda: confirmer.search(adversarial, bad))
                 / _cpu_seconds(lambda: confirmer.search(benign, good)))
        assert ratio <= MAX_RATIO, f"adversarial / benign = {ratio:.1f}"
