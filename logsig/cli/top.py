"""``logsig top``: a live view of a running daemon, like ``vector top``.

It polls the daemon's ``/status`` (JSON, :meth:`logsig.daemon.runner.Daemon.status`) every
``--interval`` seconds and redraws, with rich's ``Live``: readiness and its reason, partitions,
lag, totals with their rates since the previous poll, and the incident groups by count with the
lines per second of each. ``--once`` prints one frame without rates and exits (for scripts).
Exit codes: 0 (Ctrl-C ends the live view), 2 when the endpoint cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any

import orjson
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

Status = dict[str, Any]
TIMEOUT_SECONDS = 5.0


def add_parser(sub: Any) -> None:
    """Add the ``top`` sub-command to ``sub``."""
    top = sub.add_parser("top", help="live view of a running daemon: incident groups, rates, lag",
                         description="Poll a daemon's /status and show its incident groups by count, rates and "
                                     "lag, refreshed in place (Ctrl-C ends it).")
    top.add_argument("--url", default="http://127.0.0.1:9464",
                     help="the daemon's HTTP endpoint (http.host:http.port; default http://127.0.0.1:9464)")
    top.add_argument("--interval", type=float, default=2.0, help="seconds between polls (default 2)")
    top.add_argument("--limit", type=int, default=20, help="incident groups shown (default 20)")
    top.add_argument("--once", action="store_true", help="print one frame and exit")


PIPED_WIDTH = 160
"""Columns of a frame printed to a pipe or file (rich's default of 80 cuts signature ids)."""


def fetch(url: str) -> Status:
    """The daemon's ``/status``. Raises OSError (with the URL) when it cannot be read or parsed."""
    base = url if "://" in url else f"http://{url}"  # "localhost:9464" means the daemon's plain HTTP port
    target = base.rstrip("/") + "/status"
    try:
        with urllib.request.urlopen(target, timeout=TIMEOUT_SECONDS) as response:
            status: Status = orjson.loads(response.read())
    except (urllib.error.URLError, OSError, orjson.JSONDecodeError) as error:
        reason = getattr(error, "reason", error)
        raise OSError(f"cannot read {target}: {reason}") from error
    return status


def _rate(now: Status, before: Status | None, key: str, seconds: float) -> str:
    if before is None or seconds <= 0:
        return ""
    return f" ({(now['totals'][key] - before['totals'][key]) / seconds:,.1f}/s)"


def _seconds(moment: str | float) -> float:
    """Unix seconds of a ``/status`` time: ISO 8601, or Unix seconds as older daemons served them."""
    return moment if isinstance(moment, int | float) else datetime.fromisoformat(moment).timestamp()


def _group_rates(now: Status, before: Status | None, seconds: float) -> dict[str, float]:
    if before is None or seconds <= 0:
        return {}
    counts = {g["key"]: g["count"] for g in before["groups"]}
    return {g["key"]: (g["count"] - counts.get(g["key"], 0)) / seconds for g in now["groups"]}


def frame(now: Status, before: Status | None = None, seconds: float = 0.0, limit: int = 20,
          wall: float | None = None) -> Group:
    """One screen: the header lines and the table of incident groups (rates when ``before`` is given)."""
    state = Text("ready", style="bold green") if now["ready"] else Text(f"not ready: {now['reason']}", style="bold red")
    totals = now["totals"]
    lag = sum(now["lag"].values())
    header = Text.assemble(
        "logsig ", now.get("version", ""), "  group ", now.get("group_id", ""), "  ", state, "\n",
        f"partitions {len(now['partitions'])}  lag {lag:,} records", "\n",
        f"records {totals['records']:,}{_rate(now, before, 'records', seconds)}  "
        f"lines {totals['lines']:,}{_rate(now, before, 'lines', seconds)}  "
        f"incident events {totals['incidents']:,}  dead letters {totals['dead_letters']:,}")
    if now.get("missing_topics"):
        header.append(f"\ntopics missing: {', '.join(now['missing_topics'])}", style="yellow")
    table = Table(expand=True)
    for column, justify in (("signature", "left"), ("stream", "left"), ("lines", "right"), ("lines/s", "right"),
                            ("last seen", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    rates, moment = _group_rates(now, before, seconds), time.time() if wall is None else wall
    for group in now["groups"][:limit]:
        rate, ago = rates.get(group["key"]), max(0.0, moment - _seconds(group["last_seen"]))
        table.add_row(group["signature_id"], group["stream"], f"{group['count']:,}",
                      "" if rate is None else f"{rate:,.1f}", f"{ago:.0f}s ago")
    return Group(header, table)


def cmd_top(args: argparse.Namespace) -> int:
    """Show the live view until Ctrl-C (or one frame with ``--once``); exit 2 naming the URL on failure.

    When standard output is not a terminal (a pipe, a file, ``watch``), frames are printed one after
    another every ``--interval`` seconds instead of being redrawn in place, as ``top -b`` does.
    """
    console = Console()
    if not console.is_terminal and console.width < PIPED_WIDTH:  # piped: no terminal width to fit, keep ids whole
        console = Console(width=PIPED_WIDTH)
    try:
        now = fetch(args.url)
        if args.once or not console.is_terminal:
            return _print_frames(console, args, now)
        with Live(frame(now, limit=args.limit), console=console, refresh_per_second=4) as live:
            while True:
                started = time.monotonic()
                time.sleep(args.interval)
                before, now = now, fetch(args.url)
                live.update(frame(now, before, time.monotonic() - started, args.limit))
    except OSError as error:
        print(f"logsig: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


def _print_frames(console: Console, args: argparse.Namespace, now: Status) -> int:
    """Print a frame, then (without ``--once``) one more every ``--interval`` seconds until Ctrl-C."""
    console.print(frame(now, limit=args.limit))
    while not args.once:
        started = time.monotonic()
        time.sleep(args.interval)
        before, now = now, fetch(args.url)
        console.print(frame(now, before, time.monotonic() - started, args.limit))
        sys.stdout.flush()
    return 0
