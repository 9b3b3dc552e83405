"""structlog set-up: JSON lines to stderr, or console rendering when stderr is a terminal.

Library loggers (aiokafka, aiohttp) go through the same renderer at WARNING and above, and a
:class:`RepeatFilter` lets the same message through at most once per interval, adding how many
were suppressed: a broker outage makes aiokafka log the same connection error many times a
second, which would drown the daemon's own lines. :class:`QuietFilter` drops aiokafka messages
that are expected and said better by logsig itself: the coordinator lookup failing with
``GroupCoordinatorNotAvailableError`` while a fresh broker creates ``__consumer_offsets`` (aiokafka
retries it; logged at error on every first start), and a subscribed topic missing from the cluster
metadata (logsig's own warning names it, with backoff, and ``/readyz`` and
``logsig_input_topics_missing`` show it).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import Any, Literal

import structlog

from logsig.redact import Redactor

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class RepeatFilter(logging.Filter):
    """Passes a (logger, message template) at most once per ``interval_seconds``; the next one
    that passes carries ``suppressed``, the count dropped meanwhile. ``clock`` is injectable."""

    def __init__(self, interval_seconds: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval_seconds = interval_seconds
        self._clock = clock
        self._seen: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = self._clock()
        last, dropped = self._seen.get(key, (float("-inf"), 0))
        if now - last < self.interval_seconds:
            self._seen[key] = (last, dropped + 1)
            return False
        if len(self._seen) > 1000:
            self._seen.clear()
        self._seen[key] = (now, 0)
        if dropped:
            record.msg = f"{record.msg} (repeated {dropped} times in {self.interval_seconds:.0f}s)"
        return True


QUIET: tuple[tuple[str, str, str], ...] = (
    ("aiokafka.consumer.group_coordinator", "Group Coordinator Request failed", "GroupCoordinatorNotAvailable"),
    ("aiokafka.cluster", "Topic %s not found in cluster metadata", ""),
    ("aiokafka.coordinator.assignors.", "No partition metadata for topic", ""),
)
"""(logger name prefix, message template prefix, text its first argument must contain), as in
aiokafka 0.12-0.14 (consumer/group_coordinator.py, cluster.py, coordinator/assignors/*.py)."""


class QuietFilter(logging.Filter):
    """Drops the library records listed in :data:`QUIET`."""

    def filter(self, record: logging.LogRecord) -> bool:
        argument = str(record.args[0]) if isinstance(record.args, tuple) and record.args else ""
        for name, template, needle in QUIET:
            if record.name.startswith(name) and str(record.msg).startswith(template) and needle in argument:
                return False
        return True


class Redacting:
    """A structlog processor masking secrets in every text value of a log event (exceptions included,
    so it runs after ``format_exc_info``)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def __call__(self, _: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in event.items():
            if isinstance(value, str):
                event[key] = self.redactor.text(value)
            elif isinstance(value, (list, tuple)):
                event[key] = [self.redactor.text(v) if isinstance(v, str) else v for v in value]
        return event


def configure_logging(level: str = "info", fmt: Literal["auto", "json", "console"] = "auto",
                      redactor: Redactor | None = None) -> None:
    """Configure structlog (and the stdlib loggers of aiokafka/aiohttp) to write to stderr, every
    text value masked by ``redactor`` (default: the default kinds of :mod:`logsig.redact`)."""
    console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer() if console else structlog.processors.JSONRenderer()
    )
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
        Redacting(redactor or Redactor()),
    ]
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        foreign_pre_chain=[structlog.stdlib.add_logger_name, *processors],
    ))
    handler.addFilter(QuietFilter())
    handler.addFilter(RepeatFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(_LEVELS[level], logging.WARNING))
