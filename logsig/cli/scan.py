"""``logsig scan``: the pipeline over files or stdin, incidents to stdout (see :mod:`logsig.scan`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logsig.cli.common import add_cache_arg, with_catalog_args
from logsig.severity import SEVERITIES

FORMATS = ("json", "text")


def add_parser(sub: Any, add_catalog_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``scan`` sub-command to ``sub``."""
    scan = sub.add_parser("scan", help="run the pipeline over files or stdin, incidents to stdout",
                          description="Run the daemon's pipeline over files (.gz and .zst too) or stdin; "
                                      "incidents go to stdout, a summary to stderr.")
    scan.add_argument("files", nargs="*", default=[], help="input files, one record per line (- for stdin)")
    scan.add_argument("--config", type=Path, help="settings YAML file (decode and matching sections)")
    scan.add_argument("--format", choices=FORMATS, default="json",
                      help="json: one incident event per line (default); text: a few readable lines each")
    scan.add_argument("--report", type=Path, metavar="FILE.html",
                      help="also write a self-contained HTML report (timeline, top signatures and pods, "
                           "incident groups, unclassified templates)")
    scan.add_argument("--fail-on", choices=SEVERITIES, metavar="SEVERITY",
                      help=f"exit 1 when an incident at or above SEVERITY ({', '.join(SEVERITIES)}) was found")
    scan.add_argument("--since", metavar="TIME",
                      help="keep incidents logged at or after TIME (ISO 8601, or a duration before now: 30m, 2h, 7d)")
    scan.add_argument("--until", metavar="TIME", help="keep incidents logged before TIME (same forms)")
    scan.add_argument("--unclassified", type=_positive, nargs="?", const=20, metavar="N",
                      help="write the N (default 20) most frequent templates of the unclassified incidents "
                           "(only a generic signature named them) instead of the incidents")
    scan.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="show a progress bar on stderr (bytes of total, rate, lines and incidents so far); "
                           "default: when stderr is a terminal")
    add_catalog_args(scan)
    add_cache_arg(scan)


def _positive(text: str) -> int:
    """A whole number of 1 or more, for argparse (whose message names the option)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of 1 or more: {text!r}")
    return int(text)


def _check_writable(path: Path) -> None:
    """Raises ConfigError before any scanning when ``path`` could not be written (no such directory, a
    directory itself, or no write permission), so a long scan never ends in a failed report."""
    from logsig.errors import ConfigError

    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir() or not directory.is_dir() or not os.access(directory, os.W_OK) or (
            path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"--report {path}: cannot write there (check that the directory exists and is writable)")


def cmd_scan(args: argparse.Namespace) -> int:
    """Scan; exit 0, 1 when ``--fail-on`` found incidents, 2 when an input cannot be read to its end
    (named on stderr after the incidents and the summary of everything that could be read)."""
    from logsig.config import load_settings
    from logsig.daemon.reload import settle_heap
    from logsig.group.stage import GroupStage
    from logsig.matchers.catalog.loader import load_catalog
    from logsig.matchers.engine.engine import Engine
    from logsig.pipeline import Pipeline
    from logsig.redact import Redactor
    from logsig.scan import ScanOptions, TimeWindow, parse_time, scan
    from logsig.sinks.report import ReportCollector, render

    settings = with_catalog_args(load_settings(args.config), args)
    if args.report is not None:
        _check_writable(args.report)
    window = TimeWindow(parse_time(args.since) if args.since else None,
                        parse_time(args.until) if args.until else None)
    options = ScanOptions(format=args.format, window=window, fail_on=args.fail_on, unclassified=args.unclassified,
                          progress=args.progress)
    catalog = load_catalog(settings.catalog.paths, builtin=settings.catalog.builtin)
    for warning in catalog.warnings:
        print(f"logsig: warning: {warning}", file=sys.stderr)
    engine = Engine(catalog.signatures, max_message_bytes=settings.matching.max_message_bytes,
                    cache=settings.catalog.compile_cache())
    settle_heap()
    pipeline = Pipeline(engine, settings.decode, redactor=Redactor(settings.redaction), locale=settings.locale)
    report = ReportCollector(inputs=list(args.files)) if args.report else None
    try:
        summary = scan(pipeline, args.files, sys.stdout.buffer, sys.stderr, options,
                       observers=[report] if report is not None else [], grouping=GroupStage(settings.grouping))
        if report is not None:
            args.report.write_text(render(report), encoding="utf-8")
            print(f"report written to {args.report}", file=sys.stderr)
    except OSError as error:
        print(f"logsig: {error}", file=sys.stderr)
        return 2
    if summary.unreadable:
        return 2
    return 1 if args.fail_on is not None and summary.at_or_above(args.fail_on) else 0
