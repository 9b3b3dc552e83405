"""Offline mode: ``logsig scan [FILE ...|-]`` runs the daemon's pipeline over files or stdin.

Each input line is one record value, decoded exactly as the daemon decodes a Kafka record value;
``.gz`` and ``.zst`` files are decompressed (:func:`logsig.sources.lines.open_input`). Incidents go
to stdout as JSON lines (``--format json``) or as a few readable lines each (``--format text``);
a summary per signature goes to stderr. ``--since``/``--until`` keep the incidents whose log time
lies in ``[since, until)`` (incidents without a log time are then left out, and counted).
``--fail-on SEVERITY`` makes the exit code 1 when an incident at or above it was kept.
``--unclassified [N]`` writes, instead of the incidents, the N (default 20) most frequent templates
of the unclassified incidents (only a generic-tier signature named them;
:mod:`logsig.discovery.unclassified`): one JSON object per template, or a table with ``--format text``. Incidents
are grouped as the daemon groups them (:mod:`logsig.group.stage`), with log time as the clock: the
output is each group's opened/updated/resolved events, every group still open at the end of the
input resolved; with ``grouping.enabled: false`` it is one event per matching line. A progress
bar (tqdm) is shown on stderr when it is a terminal, or with ``progress=True`` (``--progress``),
never with ``progress=False`` (``--no-progress``): bytes read from disk of their total, rate,
percentage and ETA when every input is a file, else a running count of lines; and the lines and
incidents so far. stdout carries only the incidents; the summary is written to stderr at the end
either way.
"""

from __future__ import annotations

import io
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO, TextIO

from tqdm import tqdm

from logsig.discovery.unclassified import Unclassified
from logsig.errors import ConfigError
from logsig.group.stage import GroupStage
from logsig.pipeline import Pipeline, StepResult
from logsig.severity import at_least
from logsig.sinks.stdout import write_incidents, write_incidents_text, write_unclassified
from logsig.sources.lines import Input, line_batches, open_input

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[since, until)`` on log time (aware UTC datetimes; None: open on that side)."""

    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        """Raises ConfigError when ``since`` is not before ``until`` (the window would hold nothing)."""
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ConfigError(f"--since {self.since.isoformat()} is not before --until {self.until.isoformat()}: "
                              f"the window would hold no incident")

    @property
    def open(self) -> bool:
        """True when neither bound is set (every incident is kept)."""
        return self.since is None and self.until is None

    def holds(self, moment: datetime | None) -> bool:
        """Whether an incident logged at ``moment`` is kept (no log time: only in an open window)."""
        if self.open:
            return True
        if moment is None:
            return False
        return (self.since is None or moment >= self.since) and (self.until is None or moment < self.until)


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """An ISO 8601 time (no zone: UTC) or a duration before ``now`` (``90s``, ``30m``, ``2h``, ``7d``).

    Raises:
        ConfigError: ``text`` is neither (the message quotes it).
    """
    unit = UNITS.get(text[-1:])
    if unit is not None and text[:-1].isdigit():
        return (now or datetime.now(UTC)) - timedelta(seconds=int(text[:-1]) * unit)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"not a time: {text!r} (use ISO 8601, e.g. 2024-08-14T16:00:00Z, or a duration "
                          f"before now: 90s, 30m, 2h, 7d)") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class ScanOptions:
    """How to write and select: ``format`` json or text, the time window, the ``fail_on`` severity,
    ``unclassified``: write the top N unclassified templates instead of the incidents (None: incidents),
    ``progress``: show the progress bar on stderr (None: when stderr is a terminal)."""

    format: str = "json"
    window: TimeWindow = TimeWindow()
    fail_on: str | None = None
    unclassified: int | None = None
    progress: bool | None = None


@dataclass
class ScanSummary:
    """Totals of one scan: records read, events matched, failures by reason, matches by signature."""

    records: int = 0
    events: int = 0
    incidents: int = 0
    groups: int = 0
    truncated: int = 0
    repaired: int = 0
    outside_window: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    primary: Counter[str] = field(default_factory=Counter)
    matches: Counter[str] = field(default_factory=Counter)
    severities: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    unreadable: list[str] = field(default_factory=list)
    """Why inputs could not be read to their end (cannot be opened, corrupt or truncated compressed data)."""

    def add(self, step: StepResult) -> None:
        """Add one step's counts."""
        self.events += step.events
        self.truncated += step.truncated
        self.repaired += step.repaired
        self.failures.update(f.reason for f in step.failures)
        self.groups += sum(1 for d in step.detections if d.incident.status == "opened")
        for detection in step.matched:
            self.incidents += 1
            self.primary[detection.incident.signature.id] += 1
            self.severities[detection.incident.severity] += 1
            self.matches.update(m.signature.id for m in detection.matches)

    def at_or_above(self, threshold: str) -> int:
        """Incidents whose severity is ``threshold`` or more urgent."""
        return sum(n for severity, n in self.severities.items() if at_least(severity, threshold))


Observer = Callable[[StepResult], None]
"""Called with each step's kept output (the HTML report collects through one)."""


class Scanner:
    """Runs inputs through ``pipeline`` and ``grouping`` (None: per-line events), writing to ``out``;
    ``observers`` see each kept step."""

    def __init__(self, pipeline: Pipeline, out: BinaryIO, options: ScanOptions,
                 observers: Sequence[Observer] = (), grouping: GroupStage | None = None) -> None:
        self.pipeline, self.out, self.options = pipeline, out, options
        self.grouping = grouping
        self.observers = list(observers)
        self.summary = ScanSummary()
        self._write = write_incidents_text if options.format == "text" else write_incidents
        self.unclassified: Unclassified | None = None
        if options.unclassified is not None:
            self.unclassified = Unclassified(max(options.unclassified, 1000))
            self._write = _nowhere

    def step(self, step: StepResult) -> None:
        """Keep the step's incidents inside the window, count, write and show them to the observers."""
        kept = [d for d in step.detections if self.options.window.holds(d.incident.log_timestamp)]
        self.summary.outside_window += len(step.detections) - len(kept)
        step.detections = kept
        if self.grouping is not None:
            step = self.grouping.step(step)
        self.emit(step)

    def emit(self, step: StepResult) -> None:
        """Count and write ``step``, and show it to the observers."""
        self.summary.add(step)
        self._write(step, self.out)
        if self.unclassified is not None:
            self.unclassified.observe(step.matched)
        for observe in self.observers:
            observe(step)

    def input(self, source: Input, progress: tqdm[Any]) -> None:
        """Scan one input; its open multi-line groups are flushed at its end, or where it is found corrupt.

        Raises: OSError from a corrupt compressed input, after every line read before the damage was scanned.
        """
        done = 0
        try:
            for batch in line_batches(source.stream, source.name):
                self.step(self.pipeline.process_batch(batch, time.monotonic()))
                self.summary.records += len(batch)
                progress.set_postfix_str(f"{self.summary.records:,} lines, {self.summary.incidents:,} incidents",
                                         refresh=False)
                if progress.total is None:
                    progress.update(len(batch))
                else:
                    progress.update(source.position() - done)
                    done = source.position()
        finally:
            self.step(self.pipeline.flush_all())


def _nowhere(step: StepResult, out: BinaryIO) -> None:
    """Write nothing (``--unclassified`` writes its view at the end instead)."""


def _progress(paths: Sequence[str], err: TextIO, show: bool | None = None) -> tqdm[Any]:
    """Bytes on disk with total and ETA when every input is a file, else a count of lines; shown
    when ``show``, or (None) when ``err`` is a terminal. A terminal that reports no width (a bare
    pty) is taken as 80 by 24, where tqdm would draw nothing."""
    disable = not err.isatty() if show is None else not show
    shape = _shape(err)
    if "-" in paths:
        return tqdm(unit=" lines", unit_scale=True, file=err, disable=disable, mininterval=0.5, **shape)
    total = sum(_size(path) for path in paths)
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, file=err, disable=disable,
                mininterval=0.5, **shape)


def _shape(err: TextIO) -> dict[str, Any]:
    """``ncols``/``nrows`` for tqdm when ``err`` is a terminal reporting no size; else none (tqdm asks)."""
    try:
        size = os.get_terminal_size(err.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return {}
    return {} if size.columns and size.lines else {"ncols": size.columns or 80, "nrows": size.lines or 24}


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def scan(pipeline: Pipeline, paths: Sequence[str], out: BinaryIO, err: TextIO,
         options: ScanOptions = ScanOptions(), observers: Sequence[Observer] = (),
         grouping: GroupStage | None = None) -> ScanSummary:
    """Scan ``paths`` (``-`` is stdin; none: stdin) and write the summary to ``err``.

    An input that cannot be opened, or is corrupt or truncated compressed data, does not stop the
    scan: what it gave is scanned, the other inputs too, and after the summary a ``logsig: ...``
    line on ``err`` names each such input (kept in :attr:`ScanSummary.unreadable`; the CLI exits 2).
    """
    scanner = Scanner(pipeline, out, options, observers, grouping)
    started = time.perf_counter()
    paths = list(paths) or ["-"]
    with _progress(paths, err, options.progress) as progress:
        for path in paths:
            try:
                with open_input(path) as source:
                    scanner.input(source, progress)
            except OSError as error:
                scanner.summary.unreadable.append(str(error))
    if grouping is not None:
        scanner.emit(grouping.flush(StepResult(), resolve=True))
    if scanner.unclassified is not None:
        write_unclassified(scanner.unclassified.view(options.unclassified), out, options.format)
    out.flush()
    scanner.summary.seconds = time.perf_counter() - started
    write_summary(scanner.summary, err, options)
    for problem in scanner.summary.unreadable:
        err.write(f"logsig: {problem}\n")
    return scanner.summary


def write_summary(summary: ScanSummary, err: TextIO, options: ScanOptions = ScanOptions()) -> None:
    """Human-readable summary: totals, then incidents per primary signature, most first."""
    rate = summary.records / summary.seconds if summary.seconds > 0 else 0.0
    err.write(f"scanned {summary.records} records ({summary.events} events) in {summary.seconds:.2f}s "
              f"({rate:,.0f} records/s): {summary.incidents} incidents in {summary.groups} groups\n")
    if summary.outside_window:
        err.write(f"left out (log time outside --since/--until, or none): {summary.outside_window} incidents\n")
    if summary.failures:
        failed = ", ".join(f"{reason}={n}" for reason, n in sorted(summary.failures.items()))
        err.write(f"undecodable records: {failed}\n")
    if summary.truncated:
        err.write(f"records or messages truncated for matching: {summary.truncated}\n")
    if summary.repaired:
        err.write(f"records with bytes that are not UTF-8, matched with U+FFFD in their place: {summary.repaired}\n")
    order = sorted(summary.matches, key=lambda s: (-summary.primary[s], -summary.matches[s], s))
    for sig_id in order:
        count = summary.primary[sig_id]
        also = summary.matches[sig_id] - count
        extra = f" (+{also} as also_matched)" if also > 0 else ""
        err.write(f"  {count:8d}  {sig_id}{extra}\n")
    if options.fail_on is not None:
        failing = summary.at_or_above(options.fail_on)
        verdict = "failing" if failing else "passing"
        err.write(f"--fail-on {options.fail_on}: {failing} incidents at or above it; {verdict}\n")
