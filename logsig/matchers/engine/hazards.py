"""Regex checks of ``logsig catalog lint`` that look inside the engine's two phases.

- :func:`engine_problems`: what phase one (Vectorscan) or phase two (RE2) cannot do with a
  regex: a prefilter that cannot be compiled, a regex that can never match, RE2 refusing it;
- :func:`nested_repeat`: an unbounded repeat inside another (``(a+)+``, ``(.*x)*``), the shape of
  exponential backtracking, which matters for signatures on the backtracking fallback;
- :func:`backtracking_hazard`: why a regex is unsafe to load (nested repeats on a route to the
  fallback), the rule both ``load_catalog`` (a catalog problem) and lint (an error) apply.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any, Literal

from logsig.matchers.engine.confirm import Confirmer
from logsig.matchers.regex.translate import END_NEWLINE, UNICODE_BOUNDARY, Translation, translate

_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def engine_problems(confirmer: Confirmer,
                    prefilter_failure: str | None) -> Iterator[tuple[Literal["error", "warning"], str]]:
    """``(severity, message)`` for each phase that cannot take the regex as it is.

    prefilter_failure: Hyperscan's reason when the catalog's prefilter rejected this pattern.
    """
    if confirmer.translation.prefilter is None:
        yield "warning", "phase one cannot narrow it (it can match empty): checked against every message"
    elif prefilter_failure is not None:
        if "never match" in prefilter_failure:
            yield "error", "can never match (unreachable)"
        else:
            yield "warning", (f"phase one cannot compile it ({prefilter_failure}): "
                              "checked against every message")
    if confirmer.translation.linear and not confirmer.compile_re2():
        yield "warning", f"RE2 rejects it ({confirmer.re2_error}): runs on the guarded fallback"


_REPEATED_GROUP = re.compile(r"\)\s*[*+{]|\(\?[a-zA-Z-]*x")
"""A group followed by a quantifier, or a verbose flag (where a comment may come between)."""
_CAVEAT_ROUTES = {UNICODE_BOUNDARY: "for non-ASCII messages (Unicode \\b)",
                  END_NEWLINE: "for messages ending in a newline ($)"}
"""Caveats that send real messages to the fallback; ``EMPTY_TEXT`` sends only the empty one."""


def backtracking_hazard(regex: str) -> str | None:
    """Why ``regex`` must not load, or None: nested unbounded repeats (:func:`nested_repeat`)
    in a regex that runs, for some messages, on the backtracking fallback (Python ``re``).

    Routes to the fallback (:mod:`logsig.matchers.engine.confirm`): not linear-time (look-around,
    back-references, ...), RE2 rejecting it, or a caveat for non-ASCII messages or messages
    ending in a newline. ``(a+)+(?=c)`` took 81 s on a 31-character line. Linear regexes with
    nested repeats run on RE2 and are safe. Cheap for most regexes: only a repeated group
    (``)*``, ``)+``, ``){``) can hold a repeat, so only those are parsed, and only nested ones
    translated. ``regex`` must compile (``re.error`` otherwise, when it is parsed at all).
    """
    if _REPEATED_GROUP.search(regex) is None or not nested_repeat(regex):
        return None
    route = fallback_route(translate(regex))
    if route is None:
        return None
    return (f"nested unbounded repeats on the backtracking fallback, {route}: can take "
            "exponential time even within the window; remove the nesting (e.g. (a+)+ -> a+)")


def fallback_route(translation: Translation) -> str | None:
    """How messages reach the backtracking fallback for this regex, or None if none do."""
    if not translation.linear:
        return f"for every message (not linear-time: {', '.join(translation.unsupported)})"
    confirmer = Confirmer(translation, re.compile(translation.source))
    if not confirmer.compile_re2():
        return f"for every message (RE2 rejects it: {confirmer.re2_error})"
    routes = [_CAVEAT_ROUTES[c] for c in sorted(translation.caveats) if c in _CAVEAT_ROUTES]
    return " and ".join(routes) or None


def nested_repeat(regex: str) -> bool:
    """Whether ``regex`` has an unbounded repeat inside a repeat that can iterate more than once."""
    return _nested(list(_parser.parse(regex)), inside=False)


def _nested(items: list[Any], *, inside: bool) -> bool:
    for op, av in items:
        if op in _REPEATS:
            unbounded = av[1] == sre.MAXREPEAT
            if inside and unbounded:
                return True
            if _nested(list(av[2]), inside=inside or av[1] > 1):
                return True
        elif any(_nested(child, inside=inside) for child in _children(op, av)):
            return True
    return False


def _children(op: Any, av: Any) -> list[list[Any]]:
    if op is sre.SUBPATTERN:
        return [list(av[3])]
    if op is sre.BRANCH:
        return [list(alt) for alt in av[1]]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [list(av[1])]
    if op is sre.ATOMIC_GROUP:
        return [list(av)]
    if op is sre.GROUPREF_EXISTS:
        return [list(av[1])] + ([list(av[2])] if av[2] is not None else [])
    return []
