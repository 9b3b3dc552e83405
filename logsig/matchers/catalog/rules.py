"""The rules a catalog must pass to be loaded (by ``scan``, ``run`` and a reload) and to pass ``catalog check``.

Pure: each rule takes records and returns ``(field, message)`` problems; the loader adds file and id.
Each is an error (the catalog is refused), except that a user record overriding a built-in id is a
warning (loaded and logged), as ``docs/signatures.md`` says:

- ``id``: not ``<domain>/<slug>`` in lower case (:data:`~logsig.matchers.signature.ID_PATTERN`);
- ``root_cause`` or ``category`` missing, or a ``category`` outside
  :data:`~logsig.matchers.signature.CATEGORIES` (banners, ``role: banner``, need no category);
- a placeholder (:data:`PLACEHOLDER`) left in ``root_cause``, a workaround or a dead end;
- an unknown field whose name is close to a field of the record format (``workaround``,
  ``exmaples``): the message names the field it resembles. Other unknown fields are kept, since
  the seed format may grow, and so are translations (``<field>_<locale>``);
- ``regex``: matches the empty string (so every message), or matches at least
  :data:`MAX_BENIGN_SHARE` of the built-in benign sample (lines that are not failures: start-up
  INFO lines, warnings, access logs; shipped as ``matchers/catalog/benign.txt``), or any one of a
  site's own benign lines (``catalog check --benign FILE``); banners are exempt, since they match
  start-up lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources

from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import CATEGORIES, ID_PATTERN, Signature

MAX_BENIGN_SHARE = 0.5
"""A regex matching this share of the built-in benign sample or more matches what is not a failure."""
PLACEHOLDER = "<fill in>"
"""Marks text a signature author still has to write (``logsig catalog draft`` leaves it)."""
SIMILARITY = 0.8
"""difflib ratio from which an unknown field is taken for a misspelt known one."""
_KNOWN_FIELDS = tuple(Signature.model_fields)
_TRANSLATION = re.compile(r"^[a-z_]+_[a-z]{2}$")


@cache
def _builtin_benign() -> tuple[str, ...]:
    text = (resources.files("logsig.matchers.catalog") / "benign.txt").read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line)


def builtin_benign() -> list[str]:
    """The built-in benign sample: one log line per line of ``matchers/catalog/benign.txt``."""
    return list(_builtin_benign())


def field_problems(sig: Signature) -> Iterator[tuple[str, str]]:
    """``(field, message)`` for each problem of one record's fields other than its regex."""
    if not ID_PATTERN.match(sig.id):
        yield "id", "id is not <domain>/<slug> (lower case letters, digits, '.', '_', '-')"
    if not sig.root_cause.strip():
        yield "root_cause", "missing: say what the failure means"
    if sig.role == "banner":
        pass
    elif not sig.category:
        yield "category", f"missing: one of {', '.join(CATEGORIES)}"
    elif sig.category not in CATEGORIES:
        yield "category", f"{sig.category!r} is not in the vocabulary: {', '.join(CATEGORIES)}"
    yield from _placeholders(sig)
    yield from _misspelt_fields(sig)


def regex_problems(sig: Signature) -> Iterator[tuple[str, str]]:
    """``(field, message)`` for a regex (one that compiles) matching the empty string."""
    if re.search(sig.regex, "") is not None:
        yield "regex", "matches an empty string, so every message"


def record_problems(sig: Signature) -> Iterator[tuple[str, str]]:
    """``(field, message)`` for each problem of one record's fields and regex (no benign lines)."""
    yield from field_problems(sig)
    yield from regex_problems(sig)


def _placeholders(sig: Signature) -> Iterator[tuple[str, str]]:
    texts = [("root_cause", sig.root_cause)]
    texts += [(f"workarounds[{i}].{name}", getattr(w, name)) for i, w in enumerate(sig.workarounds)
              for name in ("action", "how")]
    texts += [(f"dead_ends[{i}].{name}", getattr(d, name)) for i, d in enumerate(sig.dead_ends)
              for name in ("action", "why_fails")]
    for field, text in texts:
        if PLACEHOLDER in text:
            yield field, f"still holds the placeholder {PLACEHOLDER!r}"


def _misspelt_fields(sig: Signature) -> Iterator[tuple[str, str]]:
    for name in sig.model_extra or {}:
        if _TRANSLATION.match(name) and name.rpartition("_")[0] in _KNOWN_FIELDS:
            continue
        close = difflib.get_close_matches(name, _KNOWN_FIELDS, n=1, cutoff=SIMILARITY)
        if close:
            yield name, f"unknown field; did you mean {close[0]!r}?"


def benign_problems(signatures: Sequence[Signature], benign: Sequence[str],
                    site_benign: Sequence[str] = ()) -> Iterator[tuple[str, str, str]]:
    """``(id, "regex", message)`` for each signature matching at least :data:`MAX_BENIGN_SHARE` of
    ``benign`` (the built-in sample), or any line of ``site_benign`` (naming the first and the count).

    Only signatures whose regex compiles, is safe and does not match the empty string may be given.
    """
    safe = [sig for sig in signatures if re.search(sig.regex, "") is None and sig.role != "banner"]
    if not safe or not (benign or site_benign):
        return
    engine = Engine(safe, max_message_bytes=_sample_bytes([*benign, *site_benign]))
    hits, site_hits = _hits(engine, benign), _hits(engine, site_benign)
    for sig in safe:
        count = len(hits.get(sig.id, []))
        if benign and count >= MAX_BENIGN_SHARE * len(benign):
            yield sig.id, "regex", f"matches {count} of {len(benign)} benign lines: it matches what is not a failure"
        matched = site_hits.get(sig.id, [])
        if matched:
            yield sig.id, "regex", (f"matches {len(matched)} of {len(site_benign)} of the site's benign lines, "
                                    f"which must never page; the first: {matched[0]!r}")


def _sample_bytes(lines: Sequence[str]) -> int:
    """The longest line's size in bytes: the sample's own engine is compiled under this limit, so it
    is kept apart from (and never stands in for) the engine that matches the stream, whose compiled
    form goes to the on-disk cache."""
    return max(len(line.encode("utf-8", "replace")) for line in lines) + 1


def _hits(engine: Engine, lines: Sequence[str]) -> dict[str, list[str]]:
    """``{id: [lines it matches, in order]}`` over ``lines``."""
    hits: dict[str, list[str]] = {}
    for line, matches in zip(lines, engine.match_batch(list(lines)) if lines else [], strict=True):
        for match in matches:
            hits.setdefault(match.signature.id, []).append(line)
    return hits
