"""Open multi-line groups: fragments of one long line, and the lines of one traceback.

Both remember the records they cover (for ``origins`` and for the offsets the runner must
not commit yet) and when they last grew (for the idle timeout).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from enum import Enum

from logsig.assemble.traceback import Kind, Line, is_exception_line, is_frame_file
from logsig.decode.text import CUT_MARK, clean_line, keep_ends_utf8
from logsig.records import LogEvent, Origin

GroupKey = tuple[object, ...]


class Held:
    """Records held by an open group: their origins and the lowest offset per partition."""

    __slots__ = ("first", "key", "last_seen", "lowest", "origins", "repaired")

    def __init__(self, key: GroupKey, first: LogEvent, now: float) -> None:
        self.key = key
        self.first = first
        self.last_seen = now
        self.origins: list[Origin] = []
        self.lowest: dict[tuple[str, int], int] = {}
        self.repaired = False
        self.cover(first)

    def cover(self, event: LogEvent) -> None:
        """Remember every record ``event`` covers (and whether any had bytes repaired)."""
        self.repaired = self.repaired or event.repaired
        for origin in event.covered_origins:
            self.origins.append(origin)
            topic, partition, offset = origin.topic, origin.partition, origin.offset
            if topic is None or partition is None or offset is None:
                continue
            if offset < self.lowest.get((topic, partition), offset + 1):
                self.lowest[(topic, partition)] = offset


class Fragments(Held):
    """CRI ``P`` fragments / Docker 16 KiB parts of one line, waiting for the last part."""

    __slots__ = ("gap", "parts", "size", "tail", "tail_size", "truncated")

    def __init__(self, key: GroupKey, first: LogEvent, now: float) -> None:
        super().__init__(key, first, now)
        self.parts = [first.message]
        self.size = len(first.message)
        self.truncated = first.truncated
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.gap = False

    def add(self, event: LogEvent, now: float, max_bytes: int) -> None:
        """Append the next part; past ``max_bytes`` only the last ``max_bytes // 2`` are kept (a
        failure at the end of the line is still matched) and truncation is marked."""
        self.cover(event)
        self.last_seen = now
        if self.size < max_bytes:
            self.parts.append(event.message)
            self.size += len(event.message)
            return
        self.truncated = True
        self.tail.append(event.message)
        self.tail_size += len(event.message)
        while self.tail_size - len(self.tail[0]) >= max_bytes // 2:
            self.tail_size -= len(self.tail.popleft())
            self.gap = True

    def joined(self, max_bytes: int) -> LogEvent:
        """The whole line as one event (origin: the first part's), head and tail kept."""
        text = "".join(self.parts) + (CUT_MARK if self.gap else "") + "".join(self.tail)
        text, cut = keep_ends_utf8(clean_line(text), max_bytes)
        return replace(
            self.first,
            message=text,
            line=text,
            truncated=self.truncated or cut,
            origins=tuple(self.origins),
            partial=False,
            repaired=self.repaired,
        )


class State(Enum):
    """Where a traceback group is: in frames, past an exception line, past a line after the frames
    that may be the exception line or other output interleaved before it, or after a chain mark."""

    FRAMES = "frames"
    AFTER = "after"
    MAYBE = "maybe"
    CHAINED = "chained"


class Traceback(Held):
    """The lines of one traceback on one stream and process, prefixes removed."""

    __slots__ = (
        "exception",
        "identity",
        "last_frame",
        "lines",
        "prefix",
        "proc",
        "repeated",
        "size",
        "state",
        "stream",
    )

    def __init__(self, key: GroupKey, stream: GroupKey, line: Line, first: LogEvent, now: float) -> None:
        super().__init__(key, first, now)
        self.stream = stream
        self.prefix = line.prefix
        self.identity = line.identity
        self.repeated = False
        self.proc = line.proc
        self.lines = [line.body]
        self.size = len(line.body)
        self.state = State.FRAMES
        self.exception: str | None = None
        self.last_frame = ""

    def accepts(self, line: Line) -> bool:
        """Whether ``line`` continues this traceback.

        A line with exactly the prefix of the group's lines always does, once the second line
        showed the prefix repeated (vLLM writes the same header on every line of one record).
        A line without a prefix, or whose prefix (clock aside) is the outer part of the first
        line's (SGLang heads only the first line; Python ``logging`` stamps each line), does
        when it fits the traceback's shape: frames until the exception line, then blank
        lines, chain marks, a new ``Traceback`` after a chain mark, indented message lines,
        PyTorch's hint lines, or ``File`` lines (a line of other output interleaved before the
        frames went on). When the
        line after the frames has no exception's shape (``Name: message``), the next line may
        still be the exception line if it has one: that line of other output was interleaved.
        """
        if line.prefix and line.prefix == self.prefix and (self.repeated or len(self.lines) == 1):
            return True
        if line.prefix and not self.identity.startswith(line.identity):
            return False
        kind = line.kind
        if self.state is State.FRAMES:
            return kind is not Kind.START
        if self.state is State.AFTER:
            return kind in (Kind.BLANK, Kind.CHAIN, Kind.FRAME, Kind.NOTE)
        if self.state is State.MAYBE:
            return kind in (Kind.BLANK, Kind.CHAIN, Kind.FRAME, Kind.NOTE) or (
                kind is Kind.OTHER and is_exception_line(line.body))
        return kind in (Kind.BLANK, Kind.START)

    def add(self, line: Line, event: LogEvent, now: float) -> None:
        """Append ``line`` (already accepted) and follow the traceback's shape."""
        if not self.lines:
            self.first = event
        elif len(self.lines) == 1 and line.prefix and line.prefix == self.prefix:
            self.repeated = True
        self.cover(event)
        self.last_seen = now
        self.lines.append(line.body)
        self.size += len(line.body) + 1
        self._advance(line)

    def _advance(self, line: Line) -> None:
        """Update the state for one more line."""
        kind = line.kind
        if kind is Kind.START:
            self.state = State.FRAMES
        elif kind is Kind.CHAIN:
            self.state = State.CHAINED
        elif kind is Kind.FRAME and is_frame_file(line.body):
            self.state = State.FRAMES
            self.last_frame = line.body.strip()
        elif kind is Kind.OTHER and self.state is State.FRAMES:
            self.exception = line.body
            self.state = State.AFTER if is_exception_line(line.body) else State.MAYBE
        elif kind is Kind.OTHER and self.state is State.MAYBE:
            self.exception = line.body
            self.state = State.AFTER
        elif self.state is State.MAYBE:
            self.state = State.AFTER

    def full(self, max_lines: int, max_bytes: int) -> bool:
        """Whether the group reached its line or byte bound."""
        return len(self.lines) >= max_lines or self.size >= max_bytes

    def event(self, truncated: bool) -> LogEvent:
        """The assembled event: the text joined by newlines, the lines as context."""
        lines = self.lines
        while len(lines) > 1 and (not lines[-1] or lines[-1].isspace()):
            lines = lines[:-1]
        message = "\n".join(lines)
        last = self.exception or next((body for body in reversed(lines) if body.strip()), "")
        return replace(
            self.first,
            message=message,
            line=last,
            context=tuple(lines),
            level=self.first.level or "error",
            truncated=truncated or self.first.truncated,
            origins=tuple(self.origins),
            partial=False,
            repaired=self.repaired,
        )

    def dedupe_key(self) -> tuple[str, str, str]:
        """What makes two copies of one traceback the same: process, last frame, exception."""
        return (self.proc, self.last_frame, self.exception or "")

    def restart(self) -> None:
        """Empty the group after it was emitted at its bound; later lines carry it on."""
        self.lines, self.size, self.exception = [], 0, None
        self.origins, self.lowest, self.repaired = [], {}, False
