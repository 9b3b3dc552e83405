"""One Vectorscan scan that tells a text no redaction rule can mask anything in it (pure: no I/O).

:class:`logsig.redact.Redactor` applies its rules one ``re.sub`` after another; most texts (incident
lines, dead-letter values) hold no secret, and the ten substitutions then cost tens of microseconds
for nothing. :class:`Clear` scans a text once for all the rules: no match means that no rule's
``sub`` changes it (each would find nothing in the unchanged text), so it is returned as is.

Why a missed match cannot happen: each rule is compiled with the meaning Python gives it
(``re.S``: ``HS_FLAG_DOTALL``; a leading ``(?i)``: caseless; ``(?m)``: multi-line); a rule with a
lookaround, which Vectorscan lacks, is compiled with ``HS_FLAG_PREFILTER``, which may match more
but never less. Byte patterns (dead letters) mean the same in both engines: ASCII classes, ASCII
case. A ``str`` rule means the same only on ASCII text without the four separators ``\\x1c``-
``\\x1f`` (Python's ``\\s`` counts them, Vectorscan's does not): other texts are always redacted
the slow way. When a rule (a custom pattern) does not compile, nothing is skipped.
"""

from __future__ import annotations

import functools
import re
import threading

import hyperscan

_SEPARATORS = re.compile("[\x1c-\x1f]")
_BASE = hyperscan.HS_FLAG_DOTALL | hyperscan.HS_FLAG_ALLOWEMPTY
_LEADING = {"(?i)": hyperscan.HS_FLAG_CASELESS, "(?m)": hyperscan.HS_FLAG_MULTILINE}


def _flags(pattern: str) -> tuple[str, int]:
    """``pattern`` without its leading inline flags, and the Vectorscan flags they stand for."""
    flags = _BASE
    while pattern[:4] in _LEADING:
        flags |= _LEADING[pattern[:4]]
        pattern = pattern[4:]
    return pattern, flags


@functools.lru_cache(maxsize=16)
def _database(patterns: tuple[str, ...]) -> hyperscan.Database | None:
    """Every pattern in one block-mode database, or None when one does not compile even as a prefilter."""
    if not patterns:
        return None
    expressions, flags = [], []
    for pattern in patterns:
        bare, flag = _flags(pattern)
        expressions.append(bare.encode())
        flags.append(flag if _compiles(bare, flag) else flag | hyperscan.HS_FLAG_PREFILTER)
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(expressions=expressions, ids=list(range(len(patterns))), elements=len(patterns), flags=flags)
    except hyperscan.error:
        return None
    return database


def _compiles(pattern: str, flags: int) -> bool:
    try:
        hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(expressions=[pattern.encode()], ids=[0],
                                                                  elements=1, flags=[flags])
    except hyperscan.error:
        return False
    return True


def _stop(*_: object) -> bool:
    return True


class Clear:
    """Says of a text that no rule of ``patterns`` (Python ``re`` syntax, compiled with ``re.S``)
    matches anywhere in it; a scratch space per thread (logs are redacted from any thread)."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._database = _database(patterns)
        self._local = threading.local()

    def data(self, value: bytes) -> bool:
        """True when no rule matches anywhere in ``value`` (False: it may, or it cannot be told)."""
        if self._database is None:
            return False
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        try:
            self._database.scan(value, scratch=scratch, match_event_handler=_stop)
        except hyperscan.ScanTerminated:
            return False
        return True

    def text(self, value: str) -> bool:
        """:meth:`data` for a text: only ASCII texts without ``\\x1c``-``\\x1f`` can be told clear."""
        return value.isascii() and _SEPARATORS.search(value) is None and self.data(value.encode())
