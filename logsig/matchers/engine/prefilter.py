"""Phase one: which signatures can match which messages, for a whole batch in one scan.

One Hyperscan (Vectorscan) block-mode database holds every signature's prefilter pattern
(:func:`logsig.matchers.regex.translate.translate`, byte patterns over UTF-8), compiled with
``HS_FLAG_MULTILINE``. A batch of messages is joined with ``\\n`` into one buffer and scanned
once; each reported match is assigned to the message its end offset falls in.

Why this is a superset of the true matches (phase two then confirms each candidate): a prefilter
pattern matches at least what the regex matches; string anchors are written as line anchors,
which hold at every message edge of the joined buffer; word boundaries are dropped. A match that
crosses a separator only adds a candidate that phase two rejects.

Why Vectorscan and not ``re2.Set``, measured on the benchmark stream (``docs/engine.md``, "Why
these engines"; lines per CPU second, 10 -> 5,000 signatures): Vectorscan on joined batches
4.1 M -> 1.45 M; Vectorscan one call per line 0.85 M -> 0.63 M; ``re2.Set`` one call per line (it has no batch form)
0.44 M -> 0.54 M, and it fails to compile 1,000 exact patterns within its default 8 MiB (it
needs ``max_mem`` of 1 GiB). ``re2.Set`` compiles much faster (1 s against 11-15 s at 5,000),
which the compile cache makes a one-off cost.

Signatures whose pattern Hyperscan rejects (found by bisection, so one bad pattern does not
cost the rest) are retried with ``HS_FLAG_PREFILTER`` and otherwise become candidates for every
message (``always``); ``failures`` keeps Hyperscan's reason for ``logsig catalog lint``.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import hyperscan

FLAGS = hyperscan.HS_FLAG_MULTILINE
NEWLINE = 0x0A


@dataclass(frozen=True)
class PrefilterState:
    """A compiled :class:`Prefilter` as plain data, for the on-disk compile cache.

    database: ``hyperscan.dumpb`` of the database (None when no pattern compiled); the other
    fields as the Prefilter's attributes.
    """

    database: bytes | None
    always: tuple[int, ...]
    prefilter_mode: tuple[int, ...]
    failures: dict[int, str]


class Prefilter:
    """A compiled phase-one database.

    patterns: per signature index, its Hyperscan pattern or the expressions whose union it is
    (:attr:`~logsig.matchers.regex.translate.Translation.prefilter_parts`, compiled under the
    signature's index), None for a signature that must be a candidate for every message. Compile
    cost grows with the catalog (seconds at 5,000).
    """

    def __init__(self, patterns: Sequence[str | Sequence[str] | None]) -> None:
        self.failures: dict[int, str] = {}
        wanted = {i: (p.encode(),) if isinstance(p, str) else tuple(part.encode() for part in p)
                  for i, p in enumerate(patterns) if p}
        self._database, flags = self._build(wanted)
        self.always = tuple(i for i in range(len(patterns)) if i not in flags)
        self.prefilter_mode = tuple(i for i, f in flags.items() if f & hyperscan.HS_FLAG_PREFILTER)

    def state(self) -> PrefilterState:
        """This prefilter as plain data (the database serialised by ``hyperscan.dumpb``)."""
        database = None if self._database is None else bytes(hyperscan.dumpb(self._database))
        return PrefilterState(database, self.always, self.prefilter_mode, dict(self.failures))

    @classmethod
    def restore(cls, state: PrefilterState) -> Prefilter:
        """The prefilter ``state`` was taken from, without compiling.

        Raises ``hyperscan.error`` if the database does not deserialise (damaged, or built by
        another Vectorscan version or for another platform).
        """
        prefilter = cls.__new__(cls)
        prefilter._database = None if state.database is None else hyperscan.loadb(
            state.database, hyperscan.HS_MODE_BLOCK)
        prefilter.always, prefilter.prefilter_mode = state.always, state.prefilter_mode
        prefilter.failures = dict(state.failures)
        return prefilter

    def _build(self, wanted: dict[int, tuple[bytes, ...]]) -> tuple[hyperscan.Database | None, dict[int, int]]:
        flags = {i: FLAGS for i in wanted}
        if not wanted:
            return None, flags
        try:
            return _compile(wanted, flags), flags
        except hyperscan.error:
            pass
        for bad in _failing(wanted, flags):
            flags[bad] = FLAGS | hyperscan.HS_FLAG_PREFILTER
            reason = _compile_error({bad: wanted[bad]}, flags)
            if reason is not None:
                self.failures[bad] = reason
                del flags[bad]
        if not flags:
            return None, flags
        return _compile({i: wanted[i] for i in flags}, flags), flags

    def scratch(self) -> hyperscan.Scratch | None:
        """Scan space for one thread (each :class:`~logsig.matchers.engine.engine.Engine` owns one)."""
        return None if self._database is None else hyperscan.Scratch(self._database)

    def size_bytes(self) -> int:
        """Size of the compiled database in bytes."""
        return 0 if self._database is None else int(self._database.size())

    def scan(self, texts: Sequence[bytes], scratch: hyperscan.Scratch | None) -> dict[int, set[int]]:
        """``{text index: {signature index, ...}}`` for every text with a candidate.

        texts: UTF-8, scanned as one ``\\n``-joined buffer. ``always`` signatures are not
        included (the caller adds them).
        """
        found: dict[int, set[int]] = {}
        if self._database is None or not texts:
            return found
        hits: list[tuple[int, int]] = []
        buffer = b"\n".join(texts)
        self._database.scan(_guarded(buffer), scratch=scratch,
                            match_event_handler=lambda i, _f, end, _fl, _c: hits.append((i, end)))
        if len(buffer) and buffer[-1] == NEWLINE:
            hits = [(i, end) for i, end in hits if end <= len(buffer)]
        if hits:
            ends = list(itertools.accumulate(map(len, texts)))
            for signature, end in hits:
                # text k spans [ends[k-1] + k, ends[k] + k) in the joined buffer
                index = bisect.bisect_left(range(len(texts)), end, key=lambda k: ends[k] + k)
                found.setdefault(index, set()).add(signature)
        return found

    def ends(self, buffer: bytes, scratch: hyperscan.Scratch | None) -> list[int]:
        """End offsets of every phase-one match in ``buffer`` (texts joined with ``\n``, as
        :meth:`scan` joins them); ``always`` signatures are not included."""
        hits: list[int] = []
        if self._database is not None and buffer:
            self._database.scan(_guarded(buffer), scratch=scratch,
                                match_event_handler=lambda _i, _f, end, _fl, _c: hits.append(end))
            if buffer[-1] == NEWLINE:
                hits = [end for end in hits if end <= len(buffer)]
        return hits


def _guarded(buffer: bytes) -> bytes:
    """``buffer``, followed by ``\n\x00`` when it ends with a newline (the matches ending in that
    suffix are then dropped).

    Vectorscan 5.4 (``hyperscan`` 0.9.1) misses ``HS_FLAG_MULTILINE`` ``$`` matches before the
    buffer's final newline once a class has matched over about 16 bytes before it: ``[0-9]$`` on
    16 digits and ``\n`` reports nothing, on 15 digits it reports 15; a newline with any byte after
    it does not have the fault. A batch whose last text is empty (or ends with a newline) gives
    such a buffer.
    """
    return buffer + b"\n\x00" if buffer[-1:] == b"\n" else buffer


def _compile(wanted: dict[int, tuple[bytes, ...]], flags: dict[int, int]) -> hyperscan.Database:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    ids = [i for i, parts in wanted.items() for _ in parts]
    database.compile(expressions=[part for parts in wanted.values() for part in parts], ids=ids,
                     elements=len(ids), flags=[flags[i] for i in ids])
    return database


def _compile_error(wanted: dict[int, tuple[bytes, ...]], flags: dict[int, int]) -> str | None:
    try:
        _compile(wanted, flags)
    except hyperscan.error as error:
        return str(error)
    return None


def _failing(wanted: dict[int, tuple[bytes, ...]], flags: dict[int, int]) -> list[int]:
    """Indices of ``wanted`` (known to fail as a whole) whose pattern does not compile."""
    if len(wanted) == 1:
        return list(wanted)
    ids = list(wanted)
    out: list[int] = []
    for part in (ids[: len(ids) // 2], ids[len(ids) // 2 :]):
        subset = {i: wanted[i] for i in part}
        if _compile_error(subset, flags) is not None:
            out.extend(_failing(subset, flags))
    return out
