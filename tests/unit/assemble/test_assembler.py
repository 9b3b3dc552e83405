"""Assembler: tracebacks into one event per stream, partial lines joined, bounded state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from logsig.assemble import Assembler
from logsig.decode import DecodeSettings
from logsig.records import LogEvent, Origin, Source

HEAD = "(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] "
PROC = "(EngineCore_0 pid=1810465) "
FRAME = '  File "/opt/vllm/v1/worker/gpu_worker.py", line 180, in init_device'
SOURCE_LINE = "    raise ValueError("
ERROR = (
    "ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired "
    "GPU memory utilization (0.9, 125.75 GiB)."
)
TRACEBACK = ["Traceback (most recent call last):", FRAME, SOURCE_LINE, ERROR]
T0 = datetime(2025, 9, 3, 11, 3, 37, tzinfo=UTC)


def event(
    text: str,
    offset: int,
    pod: str | None = "vllm-0",
    stream: str = "stdout",
    partition: int = 0,
    partial: bool = False,
    seconds: float = 0.0,
) -> LogEvent:
    """A decoded line of ``pod`` at Kafka ``offset``."""
    origin = Origin(topic="logs", partition=partition, offset=offset)
    source = Source(namespace="ml", pod=pod, container="vllm" if pod else None, stream=stream)
    return LogEvent(
        message=text,
        origin=origin,
        source=source,
        timestamp=T0 + timedelta(seconds=seconds),
        line=text,
        partial=partial,
    )


def settings(**multiline: object) -> DecodeSettings:
    """Decode settings with the given multi-line bounds."""
    return DecodeSettings.model_validate({"multiline": multiline})


def feed_all(assembler: Assembler, events: list[LogEvent], now: float = 0.0) -> list[LogEvent]:
    """Feed ``events`` at ``now`` and return everything emitted, in order."""
    out: list[LogEvent] = []
    for item in events:
        out.extend(assembler.feed(item, now))
    return out


def lines_of(texts: list[str], start: int = 0, **kwargs: object) -> list[LogEvent]:
    """Consecutive events for ``texts`` from offset ``start``."""
    return [event(text, start + n, **kwargs) for n, text in enumerate(texts)]  # type: ignore[arg-type]


class TestPassThrough:
    def test_single_lines_pass_straight_through(self) -> None:
        """A line that starts no traceback is returned at once, unchanged."""
        line = event("INFO 09-03 11:03:37 [core.py:1] ready", 0)
        assert [line] == Assembler(DecodeSettings()).feed(line, 0.0)

    def test_disabled_assembly_passes_traceback_lines_one_by_one(self) -> None:
        """With ``enabled: false`` every line is its own event."""
        events = lines_of(TRACEBACK)
        assert events == feed_all(Assembler(settings(enabled=False)), events)


class TestTracebacks:
    def test_bare_traceback_becomes_one_event(self) -> None:
        """The lines of a traceback give one event when the next unrelated line arrives."""
        assembler = Assembler(DecodeSettings())
        out = feed_all(assembler, [*lines_of(TRACEBACK), event("INFO next", 4)])
        assert ["\n".join(TRACEBACK), "INFO next"] == [e.message for e in out]
        assert (ERROR, tuple(TRACEBACK)) == (out[0].line, out[0].context)
        assert [0, 1, 2, 3] == [o.offset for o in out[0].covered_origins]
        assert 0 == out[0].origin.offset

    def test_vllm_prefixes_are_removed(self) -> None:
        """Every line's vLLM process tag and header are stripped from the assembled text."""
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, lines_of([HEAD + text for text in TRACEBACK]))
        out = assembler.flush_all()
        assert ["\n".join(TRACEBACK)] == [e.message for e in out]

    def test_torch_rank_prefix_is_removed(self) -> None:
        """``[rank0]:`` prefixed traceback lines are assembled without the prefix."""
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, lines_of([f"[rank0]: {text}" for text in TRACEBACK]))
        assert [ERROR] == [e.line for e in assembler.flush_all()]

    def test_chained_traceback_stays_one_event_with_the_last_exception(self) -> None:
        """``During handling of the above exception`` joins both tracebacks; the last error wins."""
        chained = [
            *TRACEBACK,
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            '  File "/opt/vllm/v1/engine/core.py", line 701, in run_engine_core',
            "    raise RuntimeError('Engine core initialization failed.')",
            "RuntimeError: Engine core initialization failed.",
        ]
        assembler = Assembler(DecodeSettings())
        out = feed_all(assembler, [*lines_of(chained), event("INFO after", 20)])
        assert ("\n".join(chained), "RuntimeError: Engine core initialization failed.") == (
            out[0].message,
            out[0].line,
        )

    def test_caret_lines_are_kept(self) -> None:
        """Python 3.11 ``^^^^`` lines belong to the traceback."""
        carets = [TRACEBACK[0], FRAME, SOURCE_LINE, "          ^^^^^^^^^^^^^^^^", ERROR]
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, lines_of(carets))
        assert [tuple(carets)] == [e.context for e in assembler.flush_all()]

    def test_two_pods_interleaved_give_two_whole_tracebacks(self) -> None:
        """Lines of two pods' tracebacks interleaved are assembled per pod."""
        a = lines_of(TRACEBACK, 0, pod="vllm-a")
        b = lines_of([HEAD + text for text in TRACEBACK], 10, pod="vllm-b")
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, [x for pair in zip(a, b, strict=True) for x in pair])
        out = assembler.flush_all()
        assert [("vllm-a", ERROR), ("vllm-b", ERROR)] == [(e.source.pod, e.line) for e in out]

    def test_line_interleaved_before_the_exception_is_not_the_exception(self) -> None:
        """Another program's line between the frames and the exception line does not become match.line."""
        texts = [*TRACEBACK[:3], "[TensorRT-LLM] TensorRT-LLM version: 0.9.0", ERROR]
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, lines_of(texts))
        assert [(ERROR, tuple(texts))] == [(e.line, e.context) for e in assembler.flush_all()]

    def test_unshaped_line_after_the_frames_then_other_output(self) -> None:
        """A line without an exception's shape after the frames is the exception when no shaped one follows."""
        texts = [*TRACEBACK[:3], "worker crashed", "INFO 09-03 11:03:38 [a.py:2] ok"]
        assembler = Assembler(DecodeSettings())
        out = [*feed_all(assembler, lines_of(texts)), *assembler.flush_all()]
        assert ["worker crashed", texts[-1]] == [e.line for e in out]

    def test_processes_of_one_container_are_assembled_apart(self) -> None:
        """Two vLLM workers printing tracebacks at once give one event each."""
        one = [f"(VllmWorker rank=0 pid=10) ERROR 09-03 11:03:37 [x.py:1] {t}" for t in TRACEBACK]
        two = [f"(VllmWorker rank=1 pid=11) ERROR 09-03 11:03:37 [x.py:1] {t}" for t in TRACEBACK]
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, lines_of([x for pair in zip(one, two, strict=True) for x in pair]))
        assert [tuple(TRACEBACK)] * 2 == [e.context for e in assembler.flush_all()]

    def test_multi_line_exception_message_with_the_same_header_is_kept(self) -> None:
        """vLLM-prefixed lines after the exception line with the same header stay in the event."""
        tail = ["RuntimeError: CUDA error: an illegal memory access was encountered", "For debugging"]
        texts = [HEAD + t for t in [*TRACEBACK[:3], *tail]]
        assembler = Assembler(DecodeSettings())
        after = event(PROC + "INFO 09-03 11:03:38 [a.py:2] ok", 9)
        out = feed_all(assembler, [*lines_of(texts), after])
        assert [(tail[0], 5), (after.message, 0)] == [(e.line, len(e.context)) for e in out]

    def test_header_on_the_first_line_only_does_not_swallow_later_lines(self) -> None:
        """After an SGLang traceback, the next SGLang line of the same second is its own event."""
        head = "[2025-03-29 18:18:34 TP0] "
        texts = [head + "Scheduler hit an exception: " + TRACEBACK[0], *TRACEBACK[1:]]
        after = event(head + "Load weight end.", 9)
        out = feed_all(Assembler(DecodeSettings()), [*lines_of(texts), after])
        assert [ERROR, after.message] == [e.line for e in out]

    def test_traceback_inside_one_message_gets_its_final_line(self) -> None:
        """A message that already holds a whole traceback reports its exception line."""
        text = "Method Prefill encountered an error.\n" + "\n".join(TRACEBACK)
        out = Assembler(DecodeSettings()).feed(event(text, 0), 0.0)
        assert [ERROR] == [e.line for e in out]


class TestDuplicates:
    def test_vllm_v1_second_bare_copy_is_dropped(self) -> None:
        """The prefixed traceback on stdout and its bare copy on stderr give one event."""
        prefixed = lines_of([HEAD + t for t in TRACEBACK], 0)
        outer = [
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
            "    self.run()",
            *TRACEBACK[1:],
        ]
        bare = lines_of([PROC + "Process EngineCore_0:"] + [PROC + t for t in outer], 10)
        bare = [e.__class__(**{**_fields(e), "source": _stream(e, "stderr")}) for e in bare]
        assembler = Assembler(DecodeSettings())
        out = feed_all(assembler, prefixed + bare) + assembler.flush_all()
        assert [PROC + "Process EngineCore_0:", ERROR] == [e.line for e in out]

    def test_same_error_after_the_window_is_reported_again(self) -> None:
        """An identical traceback a minute later is a new event."""
        assembler = Assembler(DecodeSettings())
        first = lines_of(TRACEBACK, 0)
        second = [event(t, 10 + n, seconds=60.0) for n, t in enumerate(TRACEBACK)]
        feed_all(assembler, first)
        out = assembler.flush_all() + feed_all(assembler, second, now=60.0) + assembler.flush_all()
        assert [ERROR, ERROR] == [e.line for e in out]


class TestBounds:
    def test_idle_group_is_emitted_after_the_timeout(self) -> None:
        """An open traceback stays held before the idle timeout and is emitted at it."""
        assembler = Assembler(settings(idle_timeout_seconds=2.0))
        feed_all(assembler, lines_of(TRACEBACK), now=10.0)
        assert ([], [ERROR]) == (
            assembler.flush_idle(11.9),
            [e.line for e in assembler.flush_idle(12.0)],
        )

    def test_max_lines_emits_and_carries_on(self) -> None:
        """A traceback longer than ``max_lines`` is emitted in bounded parts, flagged truncated."""
        frames = [f'  File "f{n}.py", line {n}, in f' for n in range(7)]
        assembler = Assembler(settings(max_lines=4))
        out = feed_all(assembler, lines_of([TRACEBACK[0], *frames, ERROR])) + assembler.flush_all()
        assert [4, 4, 1] == [len(e.context) for e in out]
        assert ([True, True, False], ERROR) == ([e.truncated for e in out], out[-1].line)

    def test_max_bytes_emits_the_group(self) -> None:
        """A group reaching ``max_bytes`` is emitted at once."""
        big = "  " + "x" * 2000
        assembler = Assembler(settings(max_bytes=1024))
        out = feed_all(assembler, lines_of([TRACEBACK[0], big]))
        assert [(TRACEBACK[0], big)] == [e.context for e in out]

    def test_open_groups_never_exceed_the_bound(self) -> None:
        """Opening more groups than ``max_open_groups`` emits the one idle the longest."""
        assembler = Assembler(settings(max_open_groups=2))
        out: list[LogEvent] = []
        for n in range(5):
            out += assembler.feed(event(TRACEBACK[0], n, pod=f"pod-{n}"), float(n))
        assert (["pod-0", "pod-1", "pod-2"], 2) == (
            [e.source.pod for e in out],
            len(assembler.flush_all()),
        )


class TestOffsets:
    def test_held_offsets_name_the_lowest_open_record_per_partition(self) -> None:
        """Records in an open group are reported per partition until the group is emitted."""
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, [event(TRACEBACK[0], 5, partition=0), event(FRAME, 9, partition=1)])
        feed_all(assembler, [event(TRACEBACK[0], 3, pod="other", partition=1)])
        assert {("logs", 0): 5, ("logs", 1): 3} == assembler.held_offsets()
        assembler.flush_all()
        assert {} == assembler.held_offsets()

    def test_flush_partitions_emits_only_groups_of_those_partitions(self) -> None:
        """On revocation, only the groups holding records of revoked partitions are emitted."""
        assembler = Assembler(DecodeSettings())
        feed_all(assembler, [event(TRACEBACK[0], 1, pod="a", partition=0)])
        feed_all(assembler, [event(TRACEBACK[0], 2, pod="b", partition=1)])
        out = assembler.flush_partitions({("logs", 1)})
        assert (["b"], {("logs", 0): 1}) == ([e.source.pod for e in out], assembler.held_offsets())


class TestPartialLines:
    def test_cri_fragments_are_joined_with_the_final_part(self) -> None:
        """``P`` fragments and the ``F`` line give one event covering all three records."""
        assembler = Assembler(DecodeSettings())
        parts = [event("a" * 5, 0, partial=True), event("b" * 5, 1, partial=True), event("c", 2)]
        out = feed_all(assembler, parts)
        assert [("aaaaabbbbbc", (0, 1, 2))] == [(e.message, tuple(o.offset for o in e.covered_origins)) for e in out]

    def test_fragments_are_held_until_complete(self) -> None:
        """While the last part has not arrived, its records are held."""
        assembler = Assembler(DecodeSettings())
        assert [] == assembler.feed(event("part", 4, partial=True), 0.0)
        assert {("logs", 0): 4} == assembler.held_offsets()

    def test_joined_fragments_can_start_a_traceback(self) -> None:
        """A traceback whose first line was split is still assembled."""
        assembler = Assembler(DecodeSettings())
        events = [event("Traceback (most recent ", 0, partial=True), event("call last):", 1)]
        feed_all(assembler, [*events, *lines_of(TRACEBACK[1:], 2)])
        assert [tuple(TRACEBACK)] == [e.context for e in assembler.flush_all()]

    def test_last_part_of_an_overlong_line_is_kept(self) -> None:
        """Parts past ``max_record_bytes`` keep the line's tail: the failure at its end survives."""
        assembler = Assembler(DecodeSettings(max_record_bytes=4096))
        parts = [event("x" * 1000, i, partial=True) for i in range(20)] + [event("CUDA out of memory", 20)]
        joined = feed_all(assembler, parts)[0]
        assert (True, True) == (joined.message.endswith("x CUDA out of memory"[2:]), len(joined.message) <= 4096)

    def test_fragments_are_joined_even_when_assembly_is_disabled(self) -> None:
        """Partial lines are always joined."""
        assembler = Assembler(settings(enabled=False))
        out = feed_all(assembler, [event("x", 0, partial=True), event("y", 1)])
        assert ["xy"] == [e.message for e in out]


def _fields(item: LogEvent) -> dict[str, object]:
    """The dataclass fields of ``item`` as a dict."""
    return {name: getattr(item, name) for name in item.__dataclass_fields__}


def _stream(item: LogEvent, stream: str) -> Source:
    """``item``'s source on another stream."""
    source = item.source
    return Source(namespace=source.namespace, pod=source.pod, container=source.container, stream=stream)


class TestOtherOutputAfterTracebacks:
    def test_pytorch_hint_lines_join_the_traceback(self) -> None:
        """PyTorch's CUDA hint lines after the exception line are part of the traceback's event."""
        hints = ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                 "below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                 "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
        texts = [*TRACEBACK[:3], "RuntimeError: CUDA error: out of memory", *hints]
        assembler = Assembler(DecodeSettings())
        out = [*feed_all(assembler, lines_of(texts)), *assembler.flush_all()]
        assert [("RuntimeError: CUDA error: out of memory", tuple(texts))] == [(e.line, e.context) for e in out]

    def test_nccl_and_uvicorn_lines_do_not_join_an_unprefixed_traceback(self) -> None:
        """An NCCL INFO or uvicorn access line after the frames ends the traceback instead of becoming its line."""
        nccl = "gpu-node-3:1234:5678 [2] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC"
        access = 'INFO:     127.0.0.1:53430 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
        lines = []
        for other in (nccl, access):
            assembler = Assembler(DecodeSettings())
            out = [*feed_all(assembler, lines_of([*TRACEBACK[:3], other])), *assembler.flush_all()]
            lines.append([e.line for e in out])
        assert [[SOURCE_LINE, nccl], [SOURCE_LINE, access]] == lines
