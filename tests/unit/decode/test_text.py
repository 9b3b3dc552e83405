"""Line helpers: ANSI stripping, CRI lines, levels, timestamps, UTF-8 truncation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from logsig.decode.text import (
    CriLine,
    clean_line,
    line_level,
    normalise_level,
    parse_time,
    severity_level,
    split_cri,
    truncate_utf8,
)


class TestCleanLine:
    def test_colour_codes_and_line_ends_are_removed(self) -> None:
        """SGR escapes and trailing carriage returns and newlines go."""
        assert "(APIServer pid=1) INFO ok" == clean_line("\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO ok\r\n")

    def test_other_text_is_kept(self) -> None:
        """Inner whitespace and brackets are not touched."""
        assert "  File [x] ;36m" == clean_line("  File [x] ;36m")


class TestSplitCri:
    def test_full_line(self) -> None:
        """containerd's ``F`` line splits into time, stream, tag and content."""
        line = "2025-05-04T12:23:00.123456789Z stdout F INFO 05-04 12:23:00 [a.py:1] x y"
        assert CriLine(
            "2025-05-04T12:23:00.123456789Z", "stdout", False, "INFO 05-04 12:23:00 [a.py:1] x y"
        ) == split_cri(line)

    def test_partial_tag_with_extra_tags(self) -> None:
        """A ``P`` tag (with kubelet's ``:``-separated extra tags) marks a fragment."""
        found = split_cri("2024-04-13T07:59:37.505201169-05:00 stderr P:x part")
        assert (True, "stderr", "part") == (found.partial, found.stream, found.content) if found else None

    def test_empty_content(self) -> None:
        """A CRI line with no content has an empty message."""
        found = split_cri("2025-05-04T12:23:00.123456789Z stdout F")
        assert "" == (found.content if found else None)

    @pytest.mark.parametrize(
        "line",
        ["INFO 05-04 12:23:00 [a.py:1] x", "2025-05-04T12:23:00Z other F x", "2025-05-04T12:23:00Z stdout X x"],
    )
    def test_other_lines_are_not_cri(self, line: str) -> None:
        """Lines without the CRI shape are left alone."""
        assert None is split_cri(line)


class TestLevels:
    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("(VllmWorker rank=5 pid=3073) ERROR 04-09 05:39:54 [core.py:390] x", "error"),
            ("WARNING 04-09 05:39:54 [core.py:390] x", "warning"),
            ("2025-04-16T17:58:51.532887Z  INFO shard-manager: text_generation_launcher: x", "info"),
            ('time=2024-08-28T18:43:24.392Z level=ERROR source=server.go:391 msg="x"', "error"),
            ("E0401 12:00:00.123456 1 model_repository_manager.cc:1234] x", "error"),
            ("2024-05-20T20:03:26Z W 3415 model_lifecycle.cc:441] x", "warning"),
            ("[rank1]:[E1103 23:14:03.342459398 ProcessGroupNCCL.cpp:2068] x", "error"),
            ("1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: x", "error"),
            ('INFO:     10.42.0.1:38914 - "POST /v1/chat/completions HTTP/1.1" 200 OK', "info"),
            ("2025-10-07 23:31:33 DEBUG sglang_router_rs::core::worker_manager: src/core/worker_manager.rs:1031: x", "debug"),
            ("[2025-09-28 17:07:10 TP0] Load weight end.", None),
            ("WARNING: failed to read int from file: open /sys/class/drm/card0/device/numa_node: x", "warning"),
            ("INFO:root:Loading model", "info"),
            ("2025-03-19 20:54:50,520 - lmdeploy - WARNING - supported_models.py:119 - x", "warning"),
            ("node-1:2200689:2200706 [3] NCCL INFO transport/net.cc:1133 -> 6", "info"),
            ("[0] NCCL INFO misc/socket.cc:80 -> 6", "info"),
            ("node-1:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: x", None),
        ],
    )
    def test_level_from_server_headers(self, line: str, expected: str | None) -> None:
        """Each server's header gives its level; SGLang lines have none."""
        assert expected == line_level(line)

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("ERROR 2024-03-20T12:09:36.741697566Z 2024-03-20T12:09:36Z I 58 server.cc:634]", "info"),
            ("ERROR 2024-03-20T12:09:36.741697566Z WARNING 04-09 05:39:54 [core.py:390] x", "warning"),
            ("ERROR 2024-03-20T12:09:36.741718541Z {}", "error"),
            ("INFO 2024-03-20T12:09:36Z E0401 12:00:00.123456 1 model_repository_manager.cc:1234] x", "error"),
        ],
    )
    def test_record_level_wins_over_a_collector_severity(self, line: str, expected: str) -> None:
        """Behind a collector's severity and time the record's own header names the level, else the collector's."""
        assert expected == line_level(line)

    @pytest.mark.parametrize(
        ("value", "expected"),
        [("WARN", "warning"), ("err", "error"), (50, "error"), (20, "debug"), (True, None), ("x", None)],
    )
    def test_level_from_json_fields(self, value: object, expected: str | None) -> None:
        """Names, letters and pino numbers map to the bounded level set."""
        assert expected == normalise_level(value)

    @pytest.mark.parametrize(
        ("number", "expected"), [(1, "trace"), (9, "info"), (17, "error"), (21, "critical"), (0, None), (25, None)]
    )
    def test_level_from_otlp_severity_numbers(self, number: int, expected: str | None) -> None:
        """OTLP severity number ranges map to level names."""
        assert expected == severity_level(number)


class TestParseTime:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (1746361380.5, datetime(2025, 5, 4, 12, 23, 0, 500000, tzinfo=UTC)),
            (1746361380500, datetime(2025, 5, 4, 12, 23, 0, 500000, tzinfo=UTC)),
            ("1746361380123456789", datetime(2025, 5, 4, 12, 23, 0, 123457, tzinfo=UTC)),
            ("2025-05-04T12:23:00.123456789Z", datetime(2025, 5, 4, 12, 23, 0, 123456, tzinfo=UTC)),
            (
                "2024-04-13T07:59:37.5-05:00",
                datetime(2024, 4, 13, 7, 59, 37, 500000, tzinfo=timezone(timedelta(hours=-5))),
            ),
            ("2025-05-04 12:23:00", datetime(2025, 5, 4, 12, 23, tzinfo=UTC)),
        ],
    )
    def test_known_forms(self, value: object, expected: datetime) -> None:
        """Epoch seconds, milliseconds, nanoseconds and RFC 3339 text are understood."""
        assert expected == parse_time(value)

    @pytest.mark.parametrize("value", ["yesterday", "", None, [], True, float("inf"), -5])
    def test_unreadable_values_give_none(self, value: object) -> None:
        """Values that are no time give None instead of raising."""
        assert None is parse_time(value)


class TestTruncate:
    def test_short_text_is_kept(self) -> None:
        """Text within the limit comes back unchanged."""
        assert ("abc", False) == truncate_utf8("abc", 1024)

    def test_cut_at_a_character_boundary(self) -> None:
        """A cut inside a 3-byte character drops the whole character."""
        assert ("€" * 341, True) == truncate_utf8("€" * 400, 1024)


class TestUnescapeNested:
    """A message JSON-escaped inside another line is matched as its author printed it."""

    def test_ray_error_inside_a_json_field(self) -> None:
        """Escaped newlines, quotes and colour codes inside a logged JSON string are undone."""
        line = (r'ERROR serve.py:12 {"error": "Traceback (most recent call last):\n  File \"/app/x.py\", '
                r'line 3\n\u001b[31mRuntimeError: CUDA error: out of memory\u001b[0m"}')
        expected = ('ERROR serve.py:12 {"error": "Traceback (most recent call last):\n  File "/app/x.py", '
                    'line 3\nRuntimeError: CUDA error: out of memory"}')
        assert expected == clean_line(line)

    def test_doubly_escaped(self) -> None:
        """Text escaped twice (a JSON string inside a JSON string) is undone twice."""
        assert 'msg="worker died: \\"OOM\\""' != clean_line(r'msg="worker died: \\\"OOM\\\""')
        assert 'msg="worker died: "OOM""' == clean_line(r'msg="worker died: \\\"OOM\\\""')

    @pytest.mark.parametrize("line", [
        r"Loading weights from C:\models\new\tokenizer.json",
        r"regex: ^\d+\s+\w+$ compiled",
        "plain line without backslashes",
    ])
    def test_lines_without_a_nested_message_are_kept(self, line: str) -> None:
        """Windows paths and regexes (no escaped quote, \\u00XX or escaped newline before indentation) stay."""
        assert line == clean_line(line)

    def test_rsyslog_escape_of_esc_is_stripped(self) -> None:
        """rsyslog writes ESC as ``#033``; its colour codes are removed like real ones."""
        assert "vllm[7]: ERROR 05-01 [core.py:1] boom" == clean_line("vllm[7]: #033[1;31mERROR 05-01 [core.py:1]#033[0m boom")


class TestLeadingTime:
    def test_plain_lines_starting_with_an_iso_time_carry_it(self) -> None:
        """RFC 3339 with a zone, a space-separated time with a comma fraction (Python logging), and a
        bracketed one (SGLang) are read; a non-date is not (a vLLM header without a year: below)."""
        from datetime import UTC, datetime, timedelta, timezone

        from logsig.decode.text import leading_time
        assert [datetime(2026, 12, 1, 13, 40, 50, tzinfo=UTC),
                datetime(2024, 1, 4, 11, 10, 35, 894000, tzinfo=UTC),
                datetime(2025, 11, 1, 16, 50, 36, tzinfo=UTC),
                datetime(2024, 8, 14, 16, 6, 55, 123000, tzinfo=timezone(timedelta(hours=2))),
                None] == [
            leading_time("2026-12-01T13:40:50Z NVRM: Xid (PCI:0000:3b:00): 79"),
            leading_time("2024-01-04 11:10:35,894  INFO worker.py:1636 -- Started a local Ray instance."),
            leading_time("[2025-11-01 16:50:36 TP1] Scheduler hit an exception"),
            leading_time("2024-08-14T16:06:55.123+02:00 torch.OutOfMemoryError: CUDA out of memory."),
            leading_time("2024-13-45T99:00:00Z not a time")]

    def test_headers_without_a_year_take_the_reference_year(self) -> None:
        """vLLM, glog / torch c10 and syslog headers get the reference's year (the one before when that
        would be more than a day ahead); logfmt ``time=`` is read; an impossible date is not."""
        from datetime import UTC, datetime

        from logsig.decode.text import leading_time
        reference = datetime(2026, 1, 2, 9, 0, tzinfo=UTC)
        assert [datetime(2026, 1, 1, 13, 40, 50, tzinfo=UTC),
                datetime(2025, 11, 28, 10, 7, 0, 513000, tzinfo=UTC),
                datetime(2025, 12, 3, 10, 8, tzinfo=UTC),
                datetime(2025, 11, 28, 10, 9, tzinfo=UTC),
                None] == [
            leading_time("INFO 01-01 13:40:50 [core.py:1] EngineCore failed to start.", reference),
            leading_time("[E1128 10:07:00.513000000 ProcessGroupNCCL.cpp:1] Watchdog caught collective", reference),
            leading_time("Dec  3 10:08:00 gpu-node-0 kernel: NVRM: Xid (PCI:0000:3b:00): 79", reference),
            leading_time('time=2025-11-28T10:09:00Z level=ERROR msg="llama runner terminated"', reference),
            leading_time("ERROR 02-30 10:00:00 [core.py:1] x", reference)]

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("(VllmWorker rank=5 pid=3073) ERROR 11-28 05:39:54 [core.py:390] x", (11, 28, 5, 39, 54, 0)),
            ("WARNING 11-28 05:39:54 [core.py:390] x", (11, 28, 5, 39, 54, 0)),
            ("2025-04-16T17:58:51.532887Z  INFO shard-manager: text_generation_launcher: x",
             (4, 16, 17, 58, 51, 532887)),
            ('time=2024-08-28T18:43:24.392Z level=ERROR source=server.go:391 msg="x"', (8, 28, 18, 43, 24, 392000)),
            ("E1128 12:00:00.123456 1 model_repository_manager.cc:1234] x", (11, 28, 12, 0, 0, 123456)),
            ("2024-05-20T20:03:26Z W 3415 model_lifecycle.cc:441] x", (5, 20, 20, 3, 26, 0)),
            ("[rank1]:[E1128 23:14:03.342459398 ProcessGroupNCCL.cpp:2068] x", (11, 28, 23, 14, 3, 342459)),
            ("[rank0]:[E1201 17:41:12.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
             "operation timeout", (12, 1, 17, 41, 12, 0)),
            ("2025-10-07 23:31:33 DEBUG sglang_router_rs::core::worker_manager: src/core/worker_manager.rs:1031: x",
             (10, 7, 23, 31, 33, 0)),
        ],
    )
    def test_every_header_with_a_level_and_a_clock_gives_its_time(
            self, line: str, expected: tuple[int, ...]) -> None:
        """Each header form whose level is parsed also gives its time, rank and worker prefixes included."""
        from datetime import UTC, datetime

        from logsig.decode.text import leading_time
        moment = leading_time(line, datetime(2026, 12, 2, 9, 0, tzinfo=UTC))
        assert expected == (None if moment is None else (moment.month, moment.day, moment.hour, moment.minute,
                                                          moment.second, moment.microsecond))
