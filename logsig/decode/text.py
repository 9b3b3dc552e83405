"""Line-level helpers: ANSI stripping, CRI lines, log levels and timestamps.

Sources of the rules: Kubernetes CRI log format (kubelet ``parseCRILog``:
``<RFC3339Nano> <stdout|stderr> <F|P>[:tags] <content>``), the vLLM / TGI / Triton / Ollama
(Go slog) / llama.cpp / uvicorn line headers listed in ``docs/record-formats.md`` §11, the Rust
``<date> <time> LEVEL target: message`` header of SGLang's model gateway, and ANSI SGR escapes
(``ESC [ ... m``) that vLLM, TGI, SGLang and llama.cpp print when colour is forced.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

_ANSI = re.compile(r"(?:\x1b|#033)\[[0-9;?]*[A-Za-z]")
"""SGR and cursor escapes: the ESC byte, or rsyslog's ``#033`` for it (``$EscapeControlCharactersOnReceive``)."""
_NESTED_HINT = re.compile(r'\\"|\\u00[0-9a-fA-F]{2}|\\n(?=\s|Traceback|During|The above|\\n)')
"""A JSON-escaped message inside a line: an escaped quote, a \\u00XX escape, or an escaped newline
before indentation or a traceback header (a Windows path such as ``C:\\new`` is not one)."""
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

_LINE_LEVEL = re.compile(
    r"(?:\([^()]*pid=\d+\) )?(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:"  # vLLM
    r"|\d{4}-\d\d-\d\dT[\d:.]+Z\s+(TRACE|DEBUG|INFO|WARN|ERROR) "  # TGI text
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})? +(TRACE|DEBUG|INFO|WARN|ERROR) +[\w:.\-]{1,80}: "  # Rust
    r"|time=\S+ level=([A-Z]+)\b"  # Ollama (Go slog)
    r"|([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ "  # Triton / glog
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ([IWE]) \d+ "  # Triton ISO8601
    r"|\[rank\d+\]:\[([IWEF])\d{4} "  # torch c10d
    r"|\d+\.\d\d\.\d{3}\.\d{3} ([IWED]) "  # llama.cpp with --log-prefix
    r"|(INFO|WARNING|ERROR|DEBUG|CRITICAL):\s{2}"  # uvicorn
    r"|(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL):(?: |[\w.]{1,80}:)"  # Go log / Python basicConfig
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.\-]{1,80} - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - "  # Python logging
    r"|(?:\[\d+\] |\([^()]*pid=\d+\) |\[rank\d+\]: ?)?(?:[\w.\-]+:\d+:\d+ )?\[\d+\] NCCL (INFO|TRACE) "  # NCCL
)
_COLLECTOR = re.compile(r"(DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL) +"
                        r"\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d) +")
"""A collector's severity and time before the record it ships (Google Cloud Logging's ``ERROR
2024-03-20T12:09:36.741697566Z <record>``: ``ERROR`` for every line of stderr)."""

_LEVELS: dict[str, str] = {
    "TRACE": "trace",
    "DEBUG": "debug",
    "D": "debug",
    "INFO": "info",
    "I": "info",
    "NOTICE": "info",
    "WARN": "warning",
    "WARNING": "warning",
    "W": "warning",
    "ERROR": "error",
    "ERR": "error",
    "E": "error",
    "CRITICAL": "critical",
    "FATAL": "critical",
    "F": "critical",
}
"""Level names and letters of the servers above, mapped to the bounded set logsig reports."""


class CriLine(NamedTuple):
    """One parsed CRI log line: ``time`` (RFC 3339 text), ``stream``, ``partial`` (tag ``P``)."""

    time: str
    stream: str
    partial: bool
    content: str


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (colour codes)."""
    if "\x1b" in text:
        return _ANSI.sub("", text)
    return text


def clean_line(text: str) -> str:
    """``text`` unescaped where it nests a JSON-escaped message (:func:`unescape_nested`), without
    ANSI escapes and without trailing ``\\r`` / ``\\n`` characters."""
    if "\\" in text:
        text = unescape_nested(text)
    if "\x1b" in text or "#033[" in text:
        text = _ANSI.sub("", text)
    return text.rstrip("\r\n")


def unescape_nested(text: str) -> str:
    """``text`` with JSON string escapes undone when it holds an escaped message (RFC 8259 §7).

    A Ray, Python or HTTP error is often logged by another process as a JSON string inside its
    own line (``"error": "Traceback (most recent call last):\\n  File \\"...\\"``, ``\\u001b[31m``);
    matching needs the message as its author printed it. Applied twice at most (doubly escaped
    text); a line with no hint of nesting (see ``_NESTED_HINT``) is returned unchanged.
    """
    for _ in range(2):
        if not _NESTED_HINT.search(text):
            break
        text = _ESCAPE.sub(_unescape_one, text)
    return text


def _unescape_one(match: re.Match[str]) -> str:
    code, simple = match.groups()
    if simple is not None:
        return _SIMPLE[simple]
    char = chr(int(code, 16))
    return char if not 0xD800 <= ord(char) <= 0xDFFF else "\ufffd"


def split_cri(text: str) -> CriLine | None:
    """Parse a CRI container-runtime line, or None when ``text`` is not one."""
    if len(text) < 24 or text[10] != "T" or not text[0].isdigit():
        return None
    parts = text.split(" ", 3)
    if len(parts) < 3 or parts[1] not in ("stdout", "stderr") or parts[2][:1] not in ("F", "P"):
        return None
    if len(parts[2]) > 1 and parts[2][1] != ":":
        return None
    content = parts[3] if len(parts) == 4 else ""
    return CriLine(parts[0], parts[1], parts[2][0] == "P", content)


def line_level(text: str) -> str | None:
    """The level a known server header at the start of ``text`` names, or None. Behind a collector's
    severity and time (``_COLLECTOR``) the record's own header names it, else the collector's severity."""
    outer = _COLLECTOR.match(text)
    if outer is not None:
        return _header_level(text[outer.end():]) or _LEVELS.get(outer.group(1))
    return _header_level(text)


def _header_level(text: str) -> str | None:
    found = _LINE_LEVEL.match(text)
    if found is None:
        return None
    return _LEVELS.get(found.group(found.lastindex or 0))


def normalise_level(value: object) -> str | None:
    """A level from a JSON field: a name or letter, or a pino number (10..60); else None."""
    if isinstance(value, str):
        return _LEVELS.get(value.upper())
    if isinstance(value, int) and not isinstance(value, bool):
        pino = {10: "trace", 20: "debug", 30: "info", 40: "warning", 50: "error", 60: "critical"}
        return pino.get(value)
    return None


def severity_level(number: object) -> str | None:
    """A level from an OTLP ``severityNumber`` (1-4 trace ... 21-24 fatal); else None."""
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 24:
        return None
    return ("trace", "debug", "info", "warning", "error", "critical")[(number - 1) // 4]


def parse_time(value: object) -> datetime | None:
    """A timestamp from a record field, or None when absent or unreadable.

    Accepts RFC 3339 / ISO 8601 text (nanoseconds truncated to microseconds) and numbers:
    epoch seconds (float or int), or milliseconds, microseconds or nanoseconds since the epoch
    as told by their magnitude, also as decimal strings (OTLP 64-bit integers). Naive
    datetimes are taken as UTC.
    """
    try:
        if isinstance(value, str):
            return _parse_text_time(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _from_epoch(float(value))
    except (ValueError, OverflowError, OSError):
        return None
    return None


_LEADING_TIME = re.compile(r"\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)[\]\s|]")


_LOGFMT_TIME = re.compile(r"time=\"?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)[\"\s]")
_MONTHS = {m: n for n, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), start=1)}
_YEARLESS = re.compile(
    r"(?:\([^()]*pid=\d+\) |\[rank\d+\]:)?"  # vLLM worker ``(VllmWorker pid=7) `` or torch ``[rank0]:`` prefix
    r"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?P<m1>\d\d)-(?P<d1>\d\d)"  # vLLM: INFO 11-28 10:05:01
    r"|\[?[IWEF](?P<m2>\d\d)(?P<d2>\d\d)"  # glog / torch c10: E1128 10:07:00.123456
    r"|(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(?P<d3>\d{1,2})"  # syslog: Nov 28 10:08:00
    r") (?P<hms>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d{1,9}))?[\s\]]")


def leading_time(text: str, reference: datetime | None = None) -> datetime | None:
    """The time a plain line starts with, or None. No zone: UTC.

    - ISO 8601 / RFC 3339: ``2026-12-01T13:40:50Z ...``, ``2024-01-04 11:10:35,894 ...``,
      ``[2025-11-01 16:50:36 TP1] ...``; logfmt ``time=2024-07-05T14:26:05.485+02:00 level=...``
      (Ollama, Go slog);
    - without a year: vLLM's ``INFO 11-28 10:05:01 [...]`` (also after a ``(VllmWorker pid=7)``
      prefix), glog / torch c10 ``E1128 10:07:00.5`` (also after a ``[rank0]:`` prefix),
      syslog ``Nov 28 10:08:00``. The year is ``reference``'s (the record's Kafka time; None: now),
      or the one before when that would put the line more than a day after ``reference``
      (a December line read in January), as syslog readers do (RFC 3164 has no year).
    """
    first = text[:1]
    if first in "[0123456789" and (found := _LEADING_TIME.match(text)) is not None:
        return parse_time(found.group(1).replace(",", "."))
    if first == "t" and (found := _LOGFMT_TIME.match(text)) is not None:
        return parse_time(found.group(1))
    if first in "DIWECFJMASOND[(" and (found := _YEARLESS.match(text)) is not None:
        return _with_year(found, reference or datetime.now(UTC))
    return None


def _with_year(found: re.Match[str], reference: datetime) -> datetime | None:
    month = int(found["m1"] or found["m2"] or 0) or _MONTHS[found["mon"]]
    day = int(found["d1"] or found["d2"] or found["d3"])
    hour, minute, second = map(int, found["hms"].split(":"))
    micro = int((found["frac"] or "0")[:6].ljust(6, "0"))
    for year in (reference.year, reference.year - 1):
        try:
            moment = datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
        except ValueError:
            return None
        if moment - reference <= timedelta(days=1):
            return moment
    return None


def _parse_text_time(text: str) -> datetime | None:
    """ISO 8601 text or a decimal epoch number."""
    if text[:1].isdigit() and text.isdigit():
        return _from_epoch(float(text))
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _from_epoch(number: float) -> datetime | None:
    """Epoch seconds, milliseconds, microseconds or nanoseconds, by magnitude."""
    if not 0 < number < 1e20:
        return None
    while number > 1e11:
        number /= 1000.0
    return datetime.fromtimestamp(number, UTC)


def kafka_time(timestamp_ms: int | None) -> datetime | None:
    """The Kafka record timestamp (milliseconds since the epoch) as a datetime, or None."""
    if timestamp_ms is None or timestamp_ms <= 0:
        return None
    try:
        return datetime.fromtimestamp(timestamp_ms / 1000.0, UTC)
    except (ValueError, OverflowError, OSError):
        return None


def truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes (at a character boundary).

    Returns (text, truncated).
    """
    if len(text) * 4 <= max_bytes:
        return text, False
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text, False
    return encoded[:max_bytes].decode("utf-8", "ignore"), True


CUT_MARK = "\n"
"""Joins the head and the tail of a cut text: a line break, so no regex matches across the cut."""


def keep_ends_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes keeping its head and its tail (half each,
    at character boundaries, joined by :data:`CUT_MARK`): a failure printed at the end of an
    overlong line is still matched. Returns (text, truncated)."""
    if len(text) * 4 <= max_bytes:
        return text, False
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text, False
    half = (max_bytes - len(CUT_MARK)) // 2
    head = encoded[:half].decode("utf-8", "ignore")
    tail = encoded[len(encoded) - (max_bytes - len(CUT_MARK) - half):].decode("utf-8", "ignore")
    return f"{head}{CUT_MARK}{tail}", True


MAX_REPLACED_SHARE = 0.1
"""At most this share of a line's characters may be U+FFFD replacements for it to count as text."""


def repaired_text(value: bytes) -> str | None:
    """``value`` decoded as UTF-8 with U+FFFD for each invalid byte sequence (Python's ``replace``
    handler, as the Unicode Standard §3.9 recommends), when it is text with a few bad bytes (a
    Latin-1 file name, a cut multi-byte character); None when it is not text at all: a NUL byte,
    or more than :data:`MAX_REPLACED_SHARE` of its characters replaced."""
    if b"\x00" in value:
        return None
    text = value.decode("utf-8", "replace")
    return text if text.count("\ufffd") <= MAX_REPLACED_SHARE * len(text) else None
