"""Offline mode: ``logsig scan [FILE ...|-]`` runs the daemon's pipeline over files or stdin.

Each input line is one record value, decoded exactly as the daemon decodes a Kafka record value.
Incident events go to stdout as JSON lines; a summary per signature goes to stderr. A progress
bar (tqdm) is shown on stderr when it is a terminal.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TextIO

from tqdm import tqdm

from logsig.pipeline import Pipeline, StepResult
from logsig.sinks.stdout import write_incidents
from logsig.sources.lines import line_chunks

CHUNK_LINES = 4096


@dataclass
class ScanSummary:
    """Totals of one scan: records read, events matched, failures by reason, matches by signature."""

    records: int = 0
    events: int = 0
    incidents: int = 0
    truncated: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    primary: Counter[str] = field(default_factory=Counter)
    matches: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, step: StepResult) -> None:
        """Add one step's counts."""
        self.events += step.events
        self.truncated += step.truncated
        self.failures.update(f.reason for f in step.failures)
        for detection in step.detections:
            self.incidents += 1
            self.primary[detection.incident.signature.id] += 1
            self.matches.update(m.signature.id for m in detection.matches)


def scan_stream(pipeline: Pipeline, stream: BinaryIO, name: str, out: BinaryIO,
                summary: ScanSummary, progress: tqdm[Any] | None = None) -> None:
    """Scan one input stream to ``out``, adding to ``summary``; open multi-line groups are flushed at its end."""
    for chunk in line_chunks(stream, name, CHUNK_LINES):
        step = pipeline.process(chunk, time.monotonic())
        summary.records += len(chunk)
        summary.add(step)
        write_incidents(step, out)
        if progress is not None:
            progress.update(len(chunk))
    step = pipeline.flush_all()
    summary.add(step)
    write_incidents(step, out)


def scan(pipeline: Pipeline, paths: Sequence[str], out: BinaryIO, err: TextIO) -> ScanSummary:
    """Scan ``paths`` (``-`` is stdin) and write the summary to ``err``.

    Raises:
        OSError: a file cannot be opened (the CLI reports it and exits 2).
    """
    summary = ScanSummary()
    started = time.perf_counter()
    show = err.isatty()
    with tqdm(unit=" lines", unit_scale=True, file=err, disable=not show, mininterval=0.5) as progress:
        for path in paths or ["-"]:
            if path == "-":
                scan_stream(pipeline, sys.stdin.buffer, "<stdin>", out, summary, progress)
                continue
            with open(path, "rb") as stream:
                scan_stream(pipeline, stream, path, out, summary, progress)
    out.flush()
    summary.seconds = time.perf_counter() - started
    write_summary(summary, err)
    return summary


def write_summary(summary: ScanSummary, err: TextIO) -> None:
    """Human-readable summary: totals, then incidents per primary signature, most first."""
    rate = summary.records / summary.seconds if summary.seconds > 0 else 0.0
    err.write(f"scanned {summary.records} records ({summary.events} events) in {summary.seconds:.2f}s "
              f"({rate:,.0f} records/s): {summary.incidents} incidents\n")
    if summary.failures:
        failed = ", ".join(f"{reason}={n}" for reason, n in sorted(summary.failures.items()))
        err.write(f"undecodable records: {failed}\n")
    if summary.truncated:
        err.write(f"records or messages truncated for matching: {summary.truncated}\n")
    order = sorted(summary.matches, key=lambda s: (-summary.primary[s], -summary.matches[s], s))
    for sig_id in order:
        count = summary.primary[sig_id]
        also = summary.matches[sig_id] - count
        extra = f" (+{also} as also_matched)" if also > 0 else ""
        err.write(f"  {count:8d}  {sig_id}{extra}\n")
