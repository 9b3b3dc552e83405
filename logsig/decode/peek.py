"""A peek at shipper JSON maps: the log text of each map that surely decodes to one plain event.

A Fluent Bit, Fluentd or Docker record is a JSON map whose ``log`` key holds the line. Decoding it
(:func:`logsig.decode.envelopes.map_events`) parses the whole map with orjson and builds a Source
from its Kubernetes metadata; for most records that work is thrown away, since the line matches
nothing. :func:`peek` reads, for many values at once, only what decides how a map decodes, with a
msgspec decoder that checks the whole value's JSON syntax but builds nothing for the keys it is
not asked for (``kubernetes``, ``time``, ...). A value is *peeked* only when all of this holds,
so that the decoder makes of it exactly one event whose message is the returned text (after
:func:`logsig.decode.text.clean_line`, which :mod:`logsig.glance` then vets like any plain line):

- it starts with ``{``, is shorter than a Docker 16 KiB part (so it is never a Docker partial
  line, nor over any size bound of the settings) and its envelope is ``auto`` or ``json``;
- orjson would parse it: msgspec accepts it, it is UTF-8, and it holds no number that orjson may
  reject and msgspec does not (with an exponent, or of 300 digits: one Vectorscan scan finds them);
- its ``log`` is a string holding no newline but at its end (the ones ``clean_line`` strips);
- it has none of the keys that change the outcome: ``resourceLogs`` (an OTLP batch), ``object``
  (an OpenAI error body), a level key (``level``, ``severity_text``, ``severityText``,
  ``levelname``, ``severity``: an error level re-matches the line), ``logtag``; and its ``_p`` is
  not a string starting with ``P`` (a CRI partial line).

Everything else (the other keys, the Kubernetes metadata) only shapes the event's Source, which
matters for an event that matches or joins a multi-line group; the glance sends such records down
the full path.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence

import hyperscan
import msgspec
from msgspec import UNSET, Raw, UnsetType

DOCKER_SPLIT_BYTES = 16 * 1024
"""A value this long may hold a Docker 16 KiB part (:data:`logsig.decode.envelopes.DOCKER_SPLIT_BYTES`)."""
PEEK_ENVELOPES = frozenset({"auto", "json"})


class _Map(msgspec.Struct):
    """The keys of a shipper map that decide how it decodes (every other key is skipped, its syntax checked)."""

    log: str
    partial_tag: object = msgspec.field(default=None, name="_p")
    logtag: Raw | UnsetType = UNSET
    level: Raw | UnsetType = UNSET
    severity_text: Raw | UnsetType = UNSET
    severityText: Raw | UnsetType = UNSET
    levelname: Raw | UnsetType = UNSET
    severity: Raw | UnsetType = UNSET
    api_object: Raw | UnsetType = msgspec.field(default=UNSET, name="object")
    resourceLogs: Raw | UnsetType = UNSET


_DECODE = msgspec.json.Decoder(_Map).decode
_FAILS = (msgspec.MsgspecError, RecursionError)
_RISKY_NUMBERS = (rb"[0-9][eE]\+?[0-9]{3}[0-9]*[ \t\r\n]*[,}\]]", rb"[0-9]{200}")
"""Numbers orjson may reject when they overflow a double (``1e400``, 400 digits) and msgspec accepts:
one with an exponent of 3 digits or more (a number in a map is followed by blanks and ``,``, ``}`` or
``]``), or 200 digits in a row (with an exponent below 100, fewer cannot reach 1.8e308). Found also
inside strings: those values are just not peeked."""


def _database() -> hyperscan.Database:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=list(_RISKY_NUMBERS), ids=[0, 1], elements=2,
                     flags=[0, 0])
    return database


_NUMBERS = _database()


def _plain_map(found: _Map) -> bool:
    """Whether a decoded map has none of the keys that change its outcome (see the module docstring)."""
    tag = found.partial_tag
    if type(tag) is str and tag[:1] == "P":
        return False
    return (found.logtag is UNSET and found.level is UNSET and found.severity_text is UNSET
            and found.severityText is UNSET and found.levelname is UNSET and found.severity is UNSET
            and found.api_object is UNSET and found.resourceLogs is UNSET)


class Peeker:
    """Peeks at JSON values; owns the Vectorscan scratch space of the number check (one thread)."""

    def __init__(self) -> None:
        self._scratch = hyperscan.Scratch(_NUMBERS)

    def peek(self, values: Sequence[bytes], indices: Sequence[int], max_bytes: int, buffer: bytes) -> dict[int, bytes]:
        """``{index: UTF-8 log text}`` for each value of ``indices`` that surely decodes to one event
        with that text before ``clean_line`` (trailing newlines removed); the others are left out.

        max_bytes: the longest value decoded whole (``decode.max_value_bytes`` or less); buffer:
        ``values`` joined with ``\\n``."""
        out: dict[int, bytes] = {}
        longest = min(DOCKER_SPLIT_BYTES - 1, max_bytes)
        for index in indices:
            value = values[index]
            if len(value) > longest or value[:1] != b"{":
                continue
            try:
                found = _DECODE(value)
            except _FAILS:
                continue
            text = found.log.rstrip("\n")
            if "\n" not in text and _plain_map(found) and (value.isascii() or _utf8(value)):
                out[index] = text.encode()
        if out:
            self._drop_risky_numbers(values, buffer, out)
        return out

    def _drop_risky_numbers(self, values: Sequence[bytes], buffer: bytes, out: dict[int, bytes]) -> None:
        """Leave out the values holding a number orjson may reject (one scan of ``buffer``)."""
        risky: list[int] = []
        _NUMBERS.scan(buffer, scratch=self._scratch,
                      match_event_handler=lambda _i, _f, end, _fl, _c: risky.append(end))
        if risky:
            starts = list(itertools.accumulate((len(v) + 1 for v in values), initial=0))
            for end in risky:  # the match's last byte, ``end - 1``, lies in the value it concerns
                out.pop(bisect.bisect_right(starts, end - 1) - 1, None)


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
