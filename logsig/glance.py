"""A glance at a whole batch: which records need more than a glance.

Most records of an inference server's log are plain text lines that no signature can match. For
such a record the full path (decode, assemble, match) builds a RawRecord, an Origin, a LogEvent,
passes the event through the assembler unchanged and finds no match: it produces nothing and
changes no state. :func:`look` finds, for a whole batch at once, the records for which that is
not certain, and the pipeline runs only those through the full path.

A record is *plain* when the decoder would make of it exactly one event whose message is its
value, unchanged (so matching its value is matching its message) and which the assembler passes
straight through. :func:`look` proves a record plain by the absence, found with one Vectorscan
scan over the ``\\n``-joined batch, of everything that makes it otherwise; any doubt makes it
*special*:

- an empty or missing value, a value longer than ``decode.max_record_bytes``,
  ``decode.max_value_bytes`` or ``matching.max_message_bytes`` (cut, a dead letter, or matched on
  windows), a topic whose envelope is not ``auto``, ``text`` or ``cri``;
- a start that selects another decoder or a strip: ``{`` (after optional blanks), blanks then
  ``[`` or ``"``, ``\\n`` (an empty value, a value starting with one, or ending with one), ``[`` or
  ``"`` when the value parses as JSON, a byte that is not ASCII (msgpack map lead bytes, BOM);
- anywhere: bytes that are not UTF-8, ESC or rsyslog's ``#033[`` (colour codes removed), ``\\r``
  (stripped at the end), a JSON escape that may mark a nested message (backslash then ``"``,
  ``n`` or ``u00XX``: unescaped), `` stdout F`` and the like (a CRI runtime line), or
  ``Traceback (most recent call last):`` (opens a group).

A plain record still needs the full path when the prefilter names a candidate signature for it
(one scan of the engine's phase one over the same buffer; the engine then confirms it), when the
engine has signatures that are candidates everywhere, or when its stream holds an open multi-line
group when it arrives (:func:`walk` feeds the records in order and watches the assembler: while a
stream of the batch holds a group, each of its records is fed). Every other record is *skipped*:
it counts as one event and nothing else.

A JSON map of a topic whose envelope is ``auto`` or ``json`` that :mod:`logsig.decode.peek` shows
to decode to one event takes its log text's place in the buffer, and is then vetted as a plain
line with that text; its stream (its pod) is not known without decoding it, so while any group is
open it is fed.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import hyperscan
import orjson

from logsig.assemble.assembler import Assembler
from logsig.assemble.traceback import START_MARK
from logsig.batch import RecordBatch, StreamKey
from logsig.decode.peek import PEEK_ENVELOPES, Peeker
from logsig.matchers.engine.engine import Engine

PLAIN_ENVELOPES = frozenset({"auto", "text", "cri"})
SPECIAL, MAYBE_JSON = 0, 1
_COMMON: tuple[bytes, ...] = (
    rb"[\x1b\r]|#033\[",
    rb'\\(?:["n]|u00[0-9a-fA-F]{2})',
    START_MARK.replace("(", r"\(").replace(")", r"\)").encode(),
    rb"^\n",
    rb'^(?:[ \t]*\{|[ \t]+[\["])',
    rb" (?:stdout|stderr) [FP]",
    rb"^[\x80-\x8f\xde\xdf\xef]",
)
_JSON_ONE_LINE = rb'^[\["][^\n]*["\]][ \t]*$'
_JSON_ANY = rb'^[\["]'
"""Vectorscan patterns (multi-line: ``^`` is also after each ``\\n``) of what makes a record special.

No pattern matches across a ``\\n`` but ``^\\n``, whose ``\\n`` is the separator after an empty value (or
a value's own ``\\n``), so the last byte of every match lies in the record it concerns (a separator
counting as part of the record before it). A record the last pattern finds (``MAYBE_JSON``) is
special only when it parses as JSON (else the decoder takes it as a text line, unchanged); when no
value holds a ``\\n`` of its own, only values that end as JSON text ends are tried."""


def _database(last: bytes) -> hyperscan.Database:
    patterns = [*_COMMON, last]
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns),
                     flags=[hyperscan.HS_FLAG_MULTILINE] * len(patterns))
    return database


_ONE_LINE = _database(_JSON_ONE_LINE)
_ANY_LINES = _database(_JSON_ANY)
_MAYBE_JSON = len(_COMMON)


@dataclass
class Glance:
    """What :meth:`Looker.look` found: ``special`` and ``candidates`` (record indices, unordered), and
    the joined ``buffer`` of the values, a peeked JSON map's log text in place of its value
    (``one_line``: no value in it holds a newline of its own; else ``starts`` gives where each
    record starts in it), and ``peeked``: those texts by record (their stream is not known)."""

    special: set[int] = field(default_factory=set)
    candidates: set[int] = field(default_factory=set)
    buffer: bytes = b""
    one_line: bool = True
    starts: list[int] = field(default_factory=list)
    peeked: dict[int, bytes] = field(default_factory=dict)
    _found: dict[str, list[int]] = field(default_factory=dict)
    _sets: dict[str, set[int]] = field(default_factory=dict)

    def records_at(self, positions: Sequence[int]) -> list[int]:
        """The record each offset of ``buffer`` lies in (a separator counts for the record before it)."""
        if self.one_line:  # no value holds a newline: the record is the number of newlines before
            out = [0] * len(positions)
            count = previous = 0
            for i in sorted(range(len(positions)), key=positions.__getitem__):
                count += self.buffer.count(b"\n", previous, positions[i])
                previous = positions[i]
                out[i] = count
            return out
        return [bisect.bisect_right(self.starts, at) - 1 for at in positions]

    def containing(self, text: str) -> list[int]:
        """Indices (ascending) of the records whose value contains ``text``."""
        hits = self._found.get(text)
        if hits is None:
            needle, offsets, at = text.encode(), [], 0
            while (at := self.buffer.find(needle, at)) >= 0:
                offsets.append(at)
                at += 1
            hits = sorted(set(self.records_at(offsets)))
            self._found[text] = hits
        return hits

    def containing_set(self, text: str) -> set[int]:
        """:meth:`containing` as a set."""
        if text not in self._sets:
            self._sets[text] = set(self.containing(text))
        return self._sets[text]


class Looker:
    """Glances at batches; owns the Vectorscan scratch space of the glance databases (one thread)."""

    def __init__(self) -> None:
        self._scratch = hyperscan.Scratch(_ONE_LINE)
        self._scratch_any = hyperscan.Scratch(_ANY_LINES)
        self._peeker = Peeker()

    def look(self, batch: RecordBatch, engine: Engine, max_bytes: int, envelopes: Sequence[str]) -> Glance:
        """Special records and prefilter candidates of ``batch``.

        max_bytes: the longest value that is decoded whole and neither cut nor windowed;
        envelopes: the envelope of each run of the batch (``batch.runs``).
        """
        seen = Glance()
        if not batch.values:
            return seen
        data = _values(batch.values)
        buffer = b"\n".join(data)
        if any(e in PEEK_ENVELOPES for e in envelopes) and (buffer[:1] == b"{" or b"\n{" in buffer):
            seen.peeked = self._peek(batch, data, envelopes, max_bytes, buffer)
            if seen.peeked:
                data = list(data)
                for index, text in seen.peeked.items():
                    data[index] = text
                buffer = b"\n".join(data)
        _ruled_out(batch, data, max_bytes, envelopes, seen)
        seen.buffer, seen.one_line = buffer, buffer.count(b"\n") == len(data) - 1
        if not seen.one_line:
            seen.starts = _starts(data)
        hits = self._hits(buffer, seen.one_line)
        ends = engine.prefilter_ends(buffer)
        for (kind, _), index in zip(hits, seen.records_at([at for _, at in hits]), strict=True):
            if kind < _MAYBE_JSON or _is_json(data[index]):
                seen.special.add(index)
        if data[-1] == b"":
            seen.special.add(len(data) - 1)
        if not buffer.isascii():
            seen.special.update(_not_utf8(buffer, data))
        if engine.compiled.prefilter.always:
            seen.candidates = set(range(len(data)))
        else:  # a match ending at ``end`` counts for the text it ends in, or whose separator it ends at
            seen.candidates = set(seen.records_at(ends))
        return seen

    def _peek(self, batch: RecordBatch, data: list[bytes], envelopes: Sequence[str], max_bytes: int,
              buffer: bytes) -> dict[int, bytes]:
        """The log text of each JSON map of a run whose envelope may hold one (:mod:`logsig.decode.peek`)."""
        indices = [i for run, envelope in zip(batch.runs, envelopes, strict=True) if envelope in PEEK_ENVELOPES
                   for i in range(run.start, run.end) if data[i][:1] == b"{"]
        return self._peeker.peek(data, indices, max_bytes, buffer)

    def _hits(self, buffer: bytes, one_line: bool) -> list[tuple[int, int]]:
        """``(pattern id, offset of the match's last byte)`` of every glance match in ``buffer``."""
        hits: list[tuple[int, int]] = []
        if not buffer:
            return hits
        database, scratch = (_ONE_LINE, self._scratch) if one_line else (_ANY_LINES, self._scratch_any)
        database.scan(buffer, scratch=scratch,
                      match_event_handler=lambda i, _f, end, _fl, _c: hits.append((i, end - 1)))
        return hits


def _values(values: list[bytes | None]) -> list[bytes]:
    """The values as bytes (None as empty)."""
    return values if None not in values else [v or b"" for v in values]  # type: ignore[return-value]


def _ruled_out(batch: RecordBatch, data: list[bytes], max_bytes: int, envelopes: Sequence[str], seen: Glance) -> None:
    """Records whose envelope or length rule them out go to ``seen.special`` (``data``: the values,
    or the log texts of the peeked JSON maps)."""
    special = seen.special
    if max(map(len, data)) > max_bytes:
        special.update(i for i, v in enumerate(data) if len(v) > max_bytes)
    for run, envelope in zip(batch.runs, envelopes, strict=True):
        if envelope not in PLAIN_ENVELOPES:
            special.update(i for i in range(run.start, run.end) if i not in seen.peeked)


def _is_json(value: bytes) -> bool:
    """Whether ``value`` parses as JSON (what the decoder tries first for a value starting ``[`` or ``"``)."""
    if value.rstrip(b" \t\r\n")[-1:] not in (b"]", b'"'):
        return False  # JSON text starting so ends so; most log lines starting with "[" do not
    try:
        orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return True


def _not_utf8(buffer: bytes, data: list[bytes]) -> list[int]:
    """Indices of the values that are not UTF-8 (``buffer`` is them joined)."""
    try:
        buffer.decode("utf-8")
    except UnicodeDecodeError:
        return [i for i, v in enumerate(data) if not v.isascii() and _bad_utf8(v)]
    return []


def _bad_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _starts(data: list[bytes]) -> list[int]:
    """Where each value starts in the ``\\n``-joined buffer."""
    return list(map(operator.add, itertools.accumulate(map(len, data), initial=0), range(len(data))))


def walk(batch: RecordBatch, full: list[int], assembler: Assembler, seen: Glance) -> Iterator[int]:
    """The records to feed, in order: ``full`` (sorted), and, while a stream of the batch holds an open
    group in ``assembler`` (fed between the yields), each record of that stream that may join or close
    it (:meth:`~logsig.assemble.assembler.Assembler.watch`: any, or those naming the group's process)."""
    keys: list[StreamKey] = []
    known: set[StreamKey] = set()
    todo, size = iter(full), len(batch)
    index, at = next(todo, size), 0
    watching = assembler.watch()
    while True:
        if watching and not keys:
            keys = [key for run in batch.runs for key in batch.plain_stream_keys(run)]
            known = set(keys)
        watched = bool(watching) and not known.isdisjoint(watching)
        watched = watched or bool(watching and seen.peeked)
        at = _next_joining(keys, at, index, watching, seen) if watched else index
        if at >= size:
            return
        yield at
        if at == index:
            index = next(todo, size)
        at += 1
        watching = assembler.watch()


def _next_joining(keys: list[StreamKey], at: int, index: int, watching: dict[StreamKey, frozenset[str] | None],
                  seen: Glance) -> int:
    """The first record from ``at`` (and before ``index``) that may join or close a watched group."""
    anyone = {key for key, procs in watching.items() if procs is None}
    if anyone:
        peeked = seen.peeked
        while at < index and keys[at] not in anyone and at not in peeked and not _names(keys[at], at, watching, seen):
            at += 1
        return at
    found = index
    for key, procs in watching.items():
        for proc in procs or ():
            hits = seen.containing(proc)
            i = bisect.bisect_left(hits, at)
            while i < len(hits) and hits[i] < found and keys[hits[i]] != key and hits[i] not in seen.peeked:
                i += 1
            if i < len(hits) and hits[i] < found:
                found = hits[i]
    return found


def _names(key: StreamKey, at: int, watching: dict[StreamKey, frozenset[str] | None], seen: Glance) -> bool:
    """Whether record ``at`` of stream ``key`` names the process of one of its open tracebacks."""
    procs = watching.get(key)
    return bool(procs) and any(at in seen.containing_set(proc) for proc in procs or ())
