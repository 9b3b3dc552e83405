"""A parsed regex as a union of alternatives without top-level alternation, for phase one.

``A(?:B|C)D`` is the union of ``ABD`` and ``ACD``: the same language, so written as separate
Vectorscan expressions under one id the database reports a match ending at exactly the offsets
the single expression does. Vectorscan compiles a single expression whose alternation heads a
long tail into one automaton it cannot decompose into literals; split, each part gets its
own literal factors. Measured over 4.3 MB of the benchmark stream (``generic/warning-failure``:
nine header forms, then ``[^\\n]*`` spans between two more parts): 21.7 ms as one expression,
4.4 ms as nine; the whole 1,689-signature database went from 66.6 to 41.1 ms with only that
signature split.

Groups and alternations are expanded (capturing groups become non-capturing: phase one has no
captures; flags of a group stay on it) while the count of parts stays within ``limit``, each
branch of an alternation getting an equal share; an item that would exceed it is kept whole.
"""

from __future__ import annotations

from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

Item = tuple[Any, Any]
"""One ``(opcode, argument)`` node of a ``re._parser.SubPattern``."""

PART_LIMIT = 64
"""Most expressions one signature's phase-one pattern is split into."""


def alternatives(state: Any, items: list[Item], limit: int = PART_LIMIT) -> list[list[Item]]:
    """Item sequences whose union is the language of ``items`` (at most ``limit`` of them, at least one)."""
    parts: list[list[Item]] = [[]]
    for item in items:
        options = _item_alternatives(state, item, max(1, limit // len(parts)))
        if len(parts) * len(options) > limit:
            options = [[item]]
        parts = [part + option for part in parts for option in options]
    return parts


def _item_alternatives(state: Any, item: Item, limit: int) -> list[list[Item]]:
    op, av = item
    if op is sre.BRANCH:
        share = max(1, limit // len(av[1]))
        options = [part for branch in av[1] for part in alternatives(state, list(branch), share)]
        return options if len(options) <= limit else [[item]]
    if op is sre.SUBPATTERN:
        _group, add, remove, body = av
        inner = alternatives(state, list(body), limit)
        if len(inner) == 1:
            return [[item]]
        return [[(sre.SUBPATTERN, (None, add, remove, _parser.SubPattern(state, part)))] for part in inner]
    return [[item]]
