"""Traceback lines: prefixes, kinds and the final exception line."""

from __future__ import annotations

import pytest

from logsig.assemble.traceback import Kind, classify, final_exception, is_exception_line, split_line


class TestSplitLine:
    @pytest.mark.parametrize(
        ("text", "proc", "body"),
        [
            (
                '(VllmWorker rank=5 pid=3073) ERROR 04-09 05:39:54 [core.py:390]   File "x"',
                "(VllmWorker rank=5 pid=3073)",
                '  File "x"',
            ),
            (
                "ERROR 08-05 16:51:50 async_llm_engine.py:56] Traceback (most recent call last):",
                "",
                "Traceback (most recent call last):",
            ),
            ('[rank0]:   File "train.py", line 1', "[rank0]:", '  File "train.py", line 1'),
            ("[llama-cpp] | Traceback (most recent call last):", "[llama-cpp] |", "Traceback (most recent call last):"),
            ("2025-03-08 02:04:48,693 - __main__ - INFO -     x = 1", "", "    x = 1"),
            (
                "2024-04-27 10:13:05 | ERROR | stderr | Traceback (most recent call last):",
                "",
                "Traceback (most recent call last):",
            ),
            ("Oct 16 02:07:00 RuntimeError: test failed", "", "RuntimeError: test failed"),
            ("RuntimeError: plain", "", "RuntimeError: plain"),
        ],
    )
    def test_prefixes_are_split_off(self, text: str, proc: str, body: str) -> None:
        """Each known prefix is removed and the process tag is named."""
        line = split_line(text)
        assert (proc, body) == (line.proc, line.body)

    def test_identity_ignores_the_clock(self) -> None:
        """Two lines of one logging record stamped a millisecond apart share an identity."""
        first = split_line("2025-03-08 02:04:48,693 - __main__ - INFO - a")
        second = split_line("2025-03-08 02:04:48,694 - __main__ - INFO - b")
        assert first.identity == second.identity


class TestClassify:
    @pytest.mark.parametrize(
        ("body", "kind"),
        [
            ("Traceback (most recent call last):", Kind.START),
            ("Scheduler hit an exception: Traceback (most recent call last):", Kind.START),
            ('  File "a.py", line 1, in f', Kind.FRAME),
            ('File "a.py", line 1, in f', Kind.FRAME),
            ("    ~~~~^^^^", Kind.FRAME),
            ("During handling of the above exception, another exception occurred:", Kind.CHAIN),
            ("The above exception was the direct cause of the following exception:", Kind.CHAIN),
            ("", Kind.BLANK),
            ("ValueError: x", Kind.OTHER),
        ],
    )
    def test_kinds(self, body: str, kind: Kind) -> None:
        """Each line of a traceback is recognised."""
        assert kind == classify(body)


class TestFinalException:
    def test_last_exception_of_a_chain(self) -> None:
        """The exception after the last frames wins; message tails do not."""
        lines = [
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "KeyError: 'x'",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            '  File "b.py", line 2, in g',
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CUDA kernel errors might be asynchronously reported at some other API call",
        ]
        assert "RuntimeError: CUDA error: an illegal memory access was encountered" == final_exception(lines)

    def test_no_exception_line(self) -> None:
        """A traceback cut before its exception has none."""
        assert None is final_exception(["Traceback (most recent call last):", '  File "a.py"'])

    def test_interleaved_line_before_the_exception(self) -> None:
        """A line of other output between the frames and the exception line is not the exception."""
        lines = [
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "[TensorRT-LLM] TensorRT-LLM version: 0.9.0",
            "RuntimeError: CUDA error: out of memory",
        ]
        assert "RuntimeError: CUDA error: out of memory" == final_exception(lines)

    def test_line_without_an_exception_shape_stands_alone(self) -> None:
        """With no exception-shaped line after it, the first line after the frames is the exception."""
        lines = ["Traceback (most recent call last):", '  File "a.py", line 1, in f', "[rank0] failed: bad", ""]
        assert "[rank0] failed: bad" == final_exception(lines)


class TestIsExceptionLine:
    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            ("KeyError: 'x'", True),
            ("AssertionError", True),
            ("torch.OutOfMemoryError: CUDA out of memory.", True),
            ("ray.exceptions.RayTaskError(ValueError): ray::f()", True),
            ("[TensorRT-LLM] TensorRT-LLM version: 0.9.0", False),
            ("INFO 12-01 10:00:00 [core.py:1] Loading weights", False),
        ],
    )
    def test_shapes(self, body: str, expected: bool) -> None:
        """Exception lines are told from other output by their shape."""
        assert expected == is_exception_line(body)
