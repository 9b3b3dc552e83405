"""logsig scan: compressed inputs, text format, --fail-on, --since/--until, progress in bytes."""

import gzip
import io
import json
import os
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import zstandard
from tqdm import tqdm

from logsig.cli import main
from logsig.decode.settings import DecodeSettings
from logsig.errors import ConfigError
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.scan import Scanner, ScanOptions, TimeWindow, _progress, parse_time, scan
from logsig.sources.lines import open_input

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.25 GiB of which 1.16 GiB is free.")
XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus."


def record(message: str, when: str, pod: str = "vllm-0") -> str:
    """A Fluent Bit record of ``message`` logged at ``when`` by pod ``pod`` in namespace ml."""
    return json.dumps({"log": message, "time": when, "kubernetes": {"pod_name": pod, "namespace_name": "ml"}})


LINES = "\n".join(["INFO all good", record(OOM, "2024-08-14T16:06:55Z"),
                   record(OOM, "2024-08-14T18:00:00Z", "vllm-1")]) + "\n"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    """``data`` written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_bytes(data)
    return path


def scanned(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]], str]:
    """Exit code, incidents (JSON lines on stdout) and stderr of ``logsig scan ARGS``."""
    code = main(["scan", *args])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


class TestCompressedInputs:
    @pytest.mark.parametrize("name,pack", [("in.log.gz", gzip.compress),
                                           ("in.log.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
                                           ("no-extension", gzip.compress)])
    def test_compressed_file_gives_the_plain_files_incidents(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, pack: object) -> None:
        """gzip and zstd inputs (recognised by magic bytes) give the same events as the plain file (two groups,
        each opened and resolved)."""
        plain = scanned(capsys, str(write(tmp_path, "in.log", LINES.encode())))[1]
        packed = scanned(capsys, str(write(tmp_path, name, pack(LINES.encode()))))[1]  # type: ignore[operator]
        def seen(incidents: list[dict[str, object]]) -> list[tuple[object, ...]]:
            return [(i["signature"]["id"], i["source"]["pod"], i["source"]["line_number"])  # type: ignore[index]
                    for i in incidents]
        assert (seen(plain), 4) == (seen(packed), len(packed))

    def test_corrupt_gzip_names_the_file(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file with gzip's magic but no gzip stream exits 2 naming the file after the summary."""
        path = write(tmp_path, "bad.gz", b"\x1f\x8b" + b"garbage" * 8)
        code, _, err = scanned(capsys, str(path))
        assert (2, f"logsig: {path}: corrupt compressed input: Unknown compression method") == (
            code, err.splitlines()[-1])

    def test_truncated_gzip_scans_every_line_that_decompressed(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A gzip file cut short gives the incidents of every line zlib decompresses from it, the summary,
        then the error naming it and exit 2; the other file's incidents are kept."""
        data = "".join(f"INFO step {n} of the warm-up, padding the line out a bit\n{OOM} req-{n}\n"
                       for n in range(400)).encode()
        cut = gzip.compress(data)[:1500]
        readable = zlib.decompressobj(wbits=31).decompress(cut)
        trunc = write(tmp_path, "trunc.gz", cut)
        plain = write(tmp_path, "plain.log", (OOM + "\n").encode())
        code, incidents, err = scanned(capsys, "--format", "json", str(trunc), str(plain))
        files = [(i["source"]["file"], i["source"]["line_number"]) for i in incidents  # type: ignore[index]
                 if i["status"] == "opened"]
        expected_lines = [n for n, text in enumerate(readable.split(b"\n"), start=1) if OOM.encode() in text]
        assert (2, (str(trunc), expected_lines[0]), (str(plain), 1), True,
                f"logsig: {trunc}: corrupt compressed input: Compressed file ended before the end-of-stream "
                "marker was reached") == (
            code, files[0], files[-1], f"scanned {len(readable.splitlines()) + 1} records" in err, err.splitlines()[-1])

    def test_gzip_on_stdin_is_decompressed(self, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
        """gzip data piped to ``scan -`` gives the incidents of the plain lines."""
        read_end, write_end = os.pipe()
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(gzip.compress(LINES.encode()))
        with os.fdopen(read_end, "rb") as stdin:
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(stdin))
            code, incidents, _ = scanned(capsys, "-")
        assert (0, [2, 3, 2, 3]) == (code, [i["source"]["line_number"] for i in incidents])  # type: ignore[index]


class TestBlankLines:
    def test_a_blank_line_is_not_an_undecodable_record(self, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
        """Blank lines between lines are counted neither as undecodable records nor as events."""
        path = write(tmp_path, "gaps.log", f"INFO start\n\n{OOM}\n\n".encode())
        code, _, err = scanned(capsys, str(path))
        assert (0, "scanned 4 records (2 events)", False) == (
            code, err.split(" in ")[0], "undecodable records" in err)


class TestByteOrderMark:
    def test_a_leading_bom_is_not_part_of_the_first_line(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file saved with a UTF-8 byte order mark gives the events of the same file without it."""
        line = (OOM + "\n").encode()
        plain = scanned(capsys, str(write(tmp_path, "plain.log", line)))[1]
        marked = scanned(capsys, str(write(tmp_path, "bom.log", b"\xef\xbb\xbf" + line)))[1]
        def lines(incidents: list[dict[str, object]]) -> list[object]:
            return [i["match"]["line"] for i in incidents]  # type: ignore[index]
        assert ([OOM, OOM], lines(plain)) == (lines(marked), [OOM, OOM])


class TestTextFormat:
    def test_text_shows_severity_signature_pod_line_and_top_workaround(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        """--format text writes the readable block of each incident (per-line events)."""
        monkeypatch.setenv("LOGSIG_GROUPING__ENABLED", "false")
        path = write(tmp_path, "in.log", (record(OOM, "2024-08-14T16:06:55Z") + "\n").encode())
        assert 0 == main(["scan", "--format", "text", str(path)])
        top = load_catalog().by_id()["cuda/torch-oom"].workarounds
        best = max(top, key=lambda w: w.success_rate)
        assert (f"\n[error] cuda/torch-oom  ml/vllm-0  2024-08-14T16:06:55+00:00\n"
                f"  line: {OOM}\n  try first ({best.success_rate:.0%}): {(best.how or best.action)[:160]}\n"
                ) == capsys.readouterr().out


class TestFailOn:
    def test_incident_at_the_threshold_fails(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--fail-on warning exits 1 for OOM (warning) incidents and says so on stderr."""
        code, _, err = scanned(capsys, "--fail-on", "warning", str(write(tmp_path, "in.log", LINES.encode())))
        assert (1, "--fail-on warning: 2 incidents at or above it; failing\n") == (code, err.splitlines(True)[-1])

    def test_incidents_below_the_threshold_pass(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--fail-on critical exits 0 when only warnings were found (two groups, opened and resolved)."""
        code, incidents, _ = scanned(capsys, "--fail-on", "critical", str(write(tmp_path, "in.log", LINES.encode())))
        assert (0, 4) == (code, len(incidents))

    def test_hardware_fault_is_critical(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An Xid 79 line (hardware_error) fails --fail-on critical."""
        path = write(tmp_path, "in.log", (record(XID, "2024-08-14T16:06:55Z") + "\n").encode())
        assert 1 == scanned(capsys, "--fail-on", "critical", str(path))[0]


class TestTimeWindow:
    def test_since_and_until_keep_the_incidents_logged_between(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--since/--until keep [since, until) on log time; the rest is counted as left out."""
        path = write(tmp_path, "in.log", LINES.encode())
        code, incidents, err = scanned(capsys, "--since", "2024-08-14T17:00:00Z", "--until", "2024-08-14T19:00:00",
                                       str(path))
        assert (0, [("opened", "vllm-1"), ("resolved", "vllm-1")]) == (
            code, [(i["status"], i["source"]["pod"]) for i in incidents])  # type: ignore[index]
        assert "left out (log time outside --since/--until, or none): 1 incidents\n" in err

    def test_incidents_without_log_time_are_left_out_of_a_window(self) -> None:
        """A window holds no incident without a log time; an open window holds every one."""
        window = TimeWindow(since=datetime(2024, 1, 1, tzinfo=UTC))
        assert (False, True) == (window.holds(None), TimeWindow().holds(None))

    def test_durations_count_back_from_now(self) -> None:
        """30m, 2h and 7d are that long before now; a zone-less ISO time is UTC."""
        now = datetime(2024, 8, 14, 12, 0, tzinfo=UTC)
        assert [datetime(2024, 8, 14, 11, 30, tzinfo=UTC), datetime(2024, 8, 14, 10, 0, tzinfo=UTC),
                datetime(2024, 8, 7, 12, 0, tzinfo=UTC), datetime(2024, 8, 14, 9, 0, tzinfo=UTC)] == [
            parse_time("30m", now), parse_time("2h", now), parse_time("7d", now), parse_time("2024-08-14T09:00")]

    def test_a_bad_time_is_named(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An unparsable --since exits 2 quoting it and the accepted forms."""
        with pytest.raises(ConfigError, match="not a time: 'yesterday'"):
            parse_time("yesterday")
        assert 2 == main(["scan", "--since", "yesterday", "-"])
        assert "not a time: 'yesterday'" in capsys.readouterr().err


    def test_plain_lines_are_windowed_by_their_leading_time(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Plain lines that start with an ISO time are kept or left out by it, like shipper records."""
        path = write(tmp_path, "in.log", f"2024-08-14T16:06:55Z {XID}\n2024-08-14T18:00:00Z {XID}\n".encode())
        code, incidents, _ = scanned(capsys, "--since", "2024-08-14T17:00:00Z", str(path))
        assert (0, [2]) == (code, sorted({i["source"]["line_number"] for i in incidents}))  # type: ignore[index]

    def test_vllm_headers_without_a_year_are_windowed(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """vLLM's ``ERROR MM-DD HH:MM:SS`` lines take the current year: one an hour old is within
        --since 7d, one thirty days old is not."""
        now = datetime.now(UTC)
        lines = [f"ERROR {(now - age):%m-%d %H:%M:%S} [core.py:1] {XID}" for age in (timedelta(hours=1),
                                                                                    timedelta(days=30))]
        path = write(tmp_path, "in.log", ("\n".join(lines) + "\n").encode())
        code, incidents, _ = scanned(capsys, "--since", "7d", str(path))
        assert (0, [1]) == (code, sorted({i["source"]["line_number"] for i in incidents}))  # type: ignore[index]

    def test_torch_rank_headers_without_a_year_are_windowed(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """PyTorch's ``[rank0]:[E1201 17:41:12.000000 ...]`` lines take the current year: one an hour old
        is within --since 2h, one thirty days old is not."""
        now = datetime.now(UTC)
        lines = [f"[rank0]:[E{(now - age):%m%d %H:%M:%S}.000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
                 "caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
                 "NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out."
                 for age in (timedelta(hours=1), timedelta(days=30))]
        path = write(tmp_path, "in.log", ("\n".join(lines) + "\n").encode())
        code, incidents, _ = scanned(capsys, "--since", "2h", str(path))
        assert (0, [1]) == (code, sorted({i["source"]["line_number"] for i in incidents}))  # type: ignore[index]

    def test_since_not_before_until_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--since at or after --until exits 2 naming both, before reading any input."""
        assert 2 == main(["scan", "--since", "2024-08-14T19:00:00Z", "--until", "2024-08-14T17:00:00Z", "-"])
        assert "--since 2024-08-14T19:00:00+00:00 is not before --until 2024-08-14T17:00:00+00:00" in (
            capsys.readouterr().err)


class TestReportPath:
    def test_an_unwritable_report_path_is_refused_before_scanning(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--report into a missing directory exits 2 naming the path, and no incident is written."""
        path = write(tmp_path, "in.log", LINES.encode())
        target = tmp_path / "missing" / "report.html"
        assert 2 == main(["scan", "--report", str(target), str(path)])
        out, err = capsys.readouterr()
        assert ("", f"logsig: --report {target}: cannot write there") == (out, err.split(" (check")[0])


class TestProgress:
    def test_files_give_a_total_in_bytes(self, tmp_path: Path) -> None:
        """With files only, the bar's total is their size on disk; with stdin there is none."""
        a, b = write(tmp_path, "a", b"x\n" * 10), write(tmp_path, "b", b"y\n" * 5)
        with _progress([str(a), str(b)], io.StringIO()) as files, _progress(["-"], io.StringIO()) as stdin:
            assert (30, None) == (files.total, stdin.total)

    def test_progress_counts_compressed_bytes_read(self, tmp_path: Path) -> None:
        """Scanning a gzip file advances the bar by the file's size on disk, reaching 100 %."""
        path = write(tmp_path, "in.gz", gzip.compress(LINES.encode() * 50))
        pipeline = Pipeline(Engine(load_catalog().signatures), DecodeSettings())
        scanner = Scanner(pipeline, io.BytesIO(), ScanOptions())
        with tqdm(total=path.stat().st_size, file=io.StringIO()) as bar, open_input(str(path)) as source:
            scanner.input(source, bar)
            assert (path.stat().st_size, 150) == (bar.n, scanner.summary.records)


class Terminal(io.StringIO):
    """A stderr that says it is a terminal (tqdm then draws its bar into it)."""

    def isatty(self) -> bool:
        """Always a terminal."""
        return True


class TestProgressChoice:
    """Whether ``logsig scan`` draws a progress bar, and what the bar says."""

    def _scan(self, tmp_path: Path, err: io.StringIO, progress: bool | None) -> tuple[bytes, str]:
        path = write(tmp_path, "in.log", LINES.encode() * 20)
        pipeline = Pipeline(Engine(load_catalog().signatures), DecodeSettings())
        out = io.BytesIO()
        summary = scan(pipeline, [str(path)], out, err, ScanOptions(progress=progress))
        assert 0 < summary.incidents
        return out.getvalue(), err.getvalue()

    def test_terminal_shows_bytes_lines_and_incidents_and_stdout_stays_clean(self, tmp_path: Path) -> None:
        """On a terminal the bar ends at 100 % with the lines and incidents so far; stdout holds only incident JSON."""
        out, err = self._scan(tmp_path, Terminal(), None)
        summary = next(line for line in err.splitlines() if line.startswith("scanned "))
        incidents = int(summary.split(": ")[1].split(" incidents")[0])
        bar = err.split("\r")[-1].split("\n")[0]
        assert (True, True, f"{incidents:,} incidents]") == (
            bar.startswith("100%|"), all(line.startswith(b'{"schema_version"') for line in out.splitlines()),
            bar.rsplit(", ", 1)[1])

    def test_no_progress_on_a_terminal_writes_only_the_summary(self, tmp_path: Path) -> None:
        """--no-progress draws nothing: stderr starts with the summary line."""
        _, err = self._scan(tmp_path, Terminal(), False)
        assert (False, True) == ("\r" in err, err.startswith("scanned "))

    def test_progress_when_stderr_is_not_a_terminal(self, tmp_path: Path) -> None:
        """--progress draws the bar into a pipe or file too; without it a non-terminal gets none."""
        _, forced = self._scan(tmp_path, io.StringIO(), True)
        _, default = self._scan(tmp_path, io.StringIO(), None)
        assert (True, False) == ("100%|" in forced, "100%|" in default)

    def test_a_terminal_reporting_no_size_gets_80_columns(self) -> None:
        """A fresh pty reports 0 x 0 (tqdm would then draw nothing): the bar takes 80 columns."""
        leader, follower = os.openpty()
        try:
            with os.fdopen(follower, "w", closefd=False) as err, _progress(["-"], err) as bar:
                assert (80, False) == (bar.ncols, bar.disable)
        finally:
            os.close(leader)
            os.close(follower)


class TestScanCatalogRules:
    @pytest.mark.parametrize(("changes", "where"), [
        ({"id": "SiteXid"}, "SiteXid: id: id is not <domain>/<slug>"),
        ({"category": None}, "site/xid-fell-off: category: missing"),
        ({"regex": r"\w"}, "site/xid-fell-off: regex: matches"),
    ])
    def test_a_catalog_check_refuses_is_refused_by_scan(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, object], where: str) -> None:
        """``catalog check`` exits 1 and ``scan --catalog`` exits 2 on the same record, both naming file, id and field."""
        record = {"id": "site/xid-fell-off", "signature": XID, "regex": "GPU has fallen off the bus",
                  "category": "hardware_error", "root_cause": "The GPU left the PCI bus.", **changes}
        catalog = write(tmp_path, "site.json", json.dumps({k: v for k, v in record.items() if v is not None}).encode())
        lines = write(tmp_path, "in.log", f"{XID}\n".encode())
        checked = main(["catalog", "check", str(catalog)])
        check_out = capsys.readouterr().out
        scanned_code = main(["scan", "--catalog", str(catalog), str(lines)])
        captured = capsys.readouterr()
        assert (1, 2, True, True, "") == (checked, scanned_code, f"{catalog}: {where}" in check_out,
                                          f"{catalog}: {where}" in captured.err, captured.out)

    def test_a_warning_is_printed_and_the_catalog_is_used(self, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
        """A record overriding a built-in id loads: scan exits 0, warns on stderr naming it, and matches with it."""
        record = {"id": "cuda/torch-oom", "signature": "widget exploded", "regex": "widget exploded",
                  "category": "runtime_error", "root_cause": "The widget exploded."}
        catalog = write(tmp_path, "site.json", json.dumps(record).encode())
        lines = write(tmp_path, "in.log", b"RuntimeError: widget exploded\n")
        code, incidents, err = scanned(capsys, "--catalog", str(catalog), str(lines))
        assert (0, ["cuda/torch-oom"], True) == (
            code, sorted({i["signature"]["id"] for i in incidents}),  # type: ignore[index]
            f"logsig: warning: {catalog}: cuda/torch-oom: overrides the built-in signature" in err)
