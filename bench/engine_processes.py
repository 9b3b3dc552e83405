"""Whole-process comparison: ``logsig scan`` vs Google's mtail on the same file and patterns.

For each catalog size the stream is written to a file, the catalog to a JSON file for
``logsig scan FILE --catalog PATH --no-builtin`` and to an mtail program with one counter per
pattern (``counter sig_N`` / ``/regex/ { sig_N++ }``). mtail's regexes are RE2 syntax: the
catalog regex with named groups made plain (mtail turns names into variables) and ``\\Z``
written ``\\z``; Go's ``\\d`` and ``\\w`` are ASCII, which if anything favours mtail.
mtail (Debian package ``mtail``) runs with ``--one_shot``: read the file once, print the
counters, exit. Both wall times include start-up and catalog compile. mtail's counters are
compared with the lines logsig's engine matches per signature on the same file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from gen_catalog import catalog

from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature

_NAMED = re.compile(r"\(\?P<\w+>")


def mtail_program(sigs: Sequence[Signature]) -> str:
    """An mtail program counting the lines each signature's regex matches."""
    parts = []
    for index, sig in enumerate(sigs):
        regex = _NAMED.sub("(?:", sig.regex).replace("\\Z", "\\z").replace("/", "\\/")
        parts.append(f"counter sig_{index}\n/{regex}/ {{\n  sig_{index}++\n}}\n")
    return "\n".join(parts)


_COUNTER = re.compile(r"^sig_(\d+)\{[^}]*\} (\d+)$", re.MULTILINE)


def _timed_run(command: list[str], timeout: float) -> tuple[float | None, str, str]:
    """Wall seconds of ``command`` (None on timeout or failure), its stdout and stderr's tail."""
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    tail = done.stderr.decode(errors="replace")[-300:]
    return (seconds if done.returncode == 0 else None), done.stdout.decode(errors="replace"), tail


def _counts_differ(sigs: Sequence[Signature], lines: Sequence[str], mtail_out: str) -> int:
    """Signatures whose mtail count differs from the lines the engine matches."""
    engine = Engine(list(sigs))
    ours = Counter(m.signature.id for row in engine.match_batch(list(lines)) for m in row)
    theirs = {int(i): int(n) for i, n in _COUNTER.findall(mtail_out)}
    return sum(1 for i, sig in enumerate(sigs) if ours[sig.id] != theirs.get(i, 0))


def _write_inputs(folder: Path, stream: Sequence[str],
                  sigs: Sequence[Signature]) -> tuple[Path, Path, Path]:
    size = len(sigs)
    log = folder / "stream.log"
    if not log.exists():
        log.write_text("\n".join(stream) + "\n", encoding="utf-8")
    records = folder / f"catalog-{size}.json"
    records.write_text(json.dumps([sig.to_record() for sig in sigs]), encoding="utf-8")
    progs = folder / f"mtail-{size}"
    progs.mkdir(exist_ok=True)
    (progs / "catalog.mtail").write_text(mtail_program(sigs), encoding="utf-8")
    return log, records, progs


def run_processes(stream: Sequence[str], sizes: Sequence[int], timeout: float) -> None:
    """Time ``logsig scan`` and mtail per catalog size and print lines/s and the ratio."""
    mtail = shutil.which("mtail")
    print(f"\nwhole processes on {len(stream):,} lines (wall time incl. start-up and compile)")
    print(f"{'sigs':>6} {'logsig scan l/s':>16} {'mtail l/s':>12} {'mtail s / scan s':>17} "
          f"{'counts differ':>14}")
    with tempfile.TemporaryDirectory(prefix="logsig-bench-") as tmp:
        folder = Path(tmp)
        for size in sizes:
            sigs = catalog(size)
            log, records, progs = _write_inputs(folder, stream, sigs)
            scan_s, _, scan_err = _timed_run(
                [sys.executable, "-m", "logsig", "scan", str(log), "--catalog", str(records),
                 "--no-builtin"], timeout)
            mtail_s, mtail_out, mtail_err = (None, "", "mtail not installed") if mtail is None else _timed_run(
                [mtail, "--one_shot", "--one_shot_format", "prometheus", "--logtostderr",
                 "--max_regexp_length", "100000", "--progs", str(progs), "--logs", str(log)],
                timeout)
            differ = _counts_differ(sigs, stream, mtail_out) if mtail_s else None
            _print_row(size, len(stream), scan_s, mtail_s, differ)
            for name, seconds, err in (("logsig scan", scan_s, scan_err),
                                       ("mtail", mtail_s, mtail_err)):
                if seconds is None:
                    print(f"       {name}: {err.strip().splitlines()[-1] if err.strip() else '?'}")


def _print_row(size: int, lines: int, scan_s: float | None, mtail_s: float | None,
               differ: int | None) -> None:
    scan = f"{lines / scan_s:,.0f}" if scan_s else "failed"
    other = f"{lines / mtail_s:,.0f}" if mtail_s else "failed"
    ratio = f"{mtail_s / scan_s:.1f}" if scan_s and mtail_s else "-"
    print(f"{size:>6} {scan:>16} {other:>12} {ratio:>17} {'-' if differ is None else differ:>14}")
