"""logsig top: one frame from a /status document, rates from two, and the error for a dead endpoint."""

import pytest
from rich.console import Console

from logsig.cli import main
from logsig.cli.top import frame

STATUS = {
    "version": "0.1.0", "group_id": "logsig", "ready": True, "reason": None, "missing_topics": [],
    "partitions": ["logs[0]", "logs[1]"], "lag": {"logs[0]": 40, "logs[1]": 2},
    "totals": {"records": 1000, "lines": 30, "incidents": 4, "dead_letters": 1},
    "groups": [{"key": "a", "signature_id": "llm/vllm-cuda-oom-during-prefill", "category": "resource_error",
                "stream": "ml/vllm-0", "count": 20, "first_seen": "1970-01-01T00:01:40+00:00",
                "last_seen": "1970-01-01T00:03:10+00:00", "line": "x"},
               {"key": "b", "signature_id": "nccl/watchdog-timeout", "category": "network_error",
                "stream": "ml/vllm-1", "count": 10, "first_seen": "1970-01-01T00:01:40+00:00",
                "last_seen": "1970-01-01T00:03:20+00:00", "line": "y"}],
}


def shown(*args: object, **kwargs: object) -> str:
    """The text of ``frame(*args, **kwargs)`` on a 120-column console."""
    console = Console(width=120, record=True, color_system=None)
    console.print(frame(*args, **kwargs))  # type: ignore[arg-type]
    return console.export_text()


class TestFrame:
    def test_one_frame_shows_state_partitions_lag_totals_and_groups(self) -> None:
        """Readiness, partition count, total lag, totals and each group's line are shown."""
        text = shown(STATUS, wall=200.0)
        rows = [line for line in text.splitlines() if "ml/vllm-" in line]
        assert (True, True, True) == ("ready" in text, "partitions 2  lag 42 records" in text,
                                      "records 1,000  lines 30  incident events 4  dead letters 1" in text)
        assert (["llm/vllm-cuda-oom-during-prefill", "ml/vllm-0", "20", "10s", "ago"],
                ["nccl/watchdog-timeout", "ml/vllm-1", "10", "0s", "ago"]) == tuple(
            [cell for cell in row.replace("│", " ").replace("┃", " ").split()] for row in rows)

    def test_rates_come_from_the_previous_poll(self) -> None:
        """With the poll 10 s before, records/s, lines/s and each group's lines/s are shown."""
        before = {**STATUS, "totals": {**STATUS["totals"], "records": 500, "lines": 10},  # type: ignore[dict-item]
                  "groups": [{**STATUS["groups"][0], "count": 5}]}  # type: ignore[index]
        text = shown(STATUS, before, 10.0, wall=200.0)
        assert (True, True, True) == ("records 1,000 (50.0/s)  lines 30 (2.0/s)" in text,
                                      " 1.5 " in text.split("ml/vllm-0")[1].splitlines()[0],
                                      " 1.0 " in text.split("ml/vllm-1")[1].splitlines()[0])

    def test_not_ready_shows_the_reason_and_missing_topics(self) -> None:
        """A daemon that is not ready shows why, and the missing input topics."""
        status = {**STATUS, "ready": False, "reason": "input topics do not exist: logs", "missing_topics": ["logs"]}
        text = shown(status, wall=200.0)
        assert (True, True) == ("not ready: input topics do not exist: logs" in text,
                                "topics missing: logs" in text)


class TestCommand:
    def test_unreachable_endpoint_is_exit_2_naming_it(self, capsys: pytest.CaptureFixture[str]) -> None:
        """No daemon at the URL: exit 2 and the /status URL in the message."""
        assert 2 == main(["top", "--once", "--url", "http://127.0.0.1:9"])
        assert capsys.readouterr().err.startswith("logsig: cannot read http://127.0.0.1:9/status: ")

    def test_without_a_terminal_frames_follow_one_another(
            self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        """Piped, each poll prints a frame of its own (the second with rates, signature ids whole) until
        Ctrl-C, exit 0."""
        polls = iter([STATUS, STATUS])

        def poll(url: str) -> object:
            return next(polls, None) or (_ for _ in ()).throw(KeyboardInterrupt)

        monkeypatch.setattr("logsig.cli.top.fetch", poll)
        monkeypatch.setattr("logsig.cli.top.time.sleep", lambda seconds: None)
        assert 0 == main(["top", "--interval", "1"])
        out = capsys.readouterr().out
        assert (2, 1, 2) == (out.count("partitions 2  lag 42 records"), out.count("records 1,000 (0.0/s)"),
                             out.count("llm/vllm-cuda-oom-during-prefill"))

    def test_a_url_without_scheme_is_plain_http(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """--url localhost:9464 asks http://localhost:9464/status."""
        import io

        from logsig.cli import top
        asked: list[str] = []

        def urlopen(url: str, timeout: float) -> io.BytesIO:
            asked.append(url)
            return io.BytesIO(b'{"ready": true}')

        monkeypatch.setattr(top.urllib.request, "urlopen", urlopen)
        assert ({"ready": True}, ["http://localhost:9464/status"]) == (top.fetch("localhost:9464"), asked)
