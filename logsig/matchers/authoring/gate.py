"""``logsig catalog check``: the pre-deploy gate, as a list of problems (pure; the CLI prints them).

Beyond what :func:`~logsig.matchers.catalog.loader.load_catalog` refuses (records the model
rejects, regexes that do not compile or could backtrack exponentially, duplicate ids), the gate
fails a catalog on what would make it page wrongly or read badly in an incident:

- ``id``: not ``<domain>/<slug>`` in lower case (:data:`~logsig.matchers.signature.ID_PATTERN`);
- ``root_cause`` or ``category`` missing, or a ``category`` outside
  :data:`~logsig.matchers.signature.CATEGORIES` (banners, ``role: banner``, need no category);
- a placeholder (:data:`PLACEHOLDER`) left in ``root_cause``, a workaround or a dead end;
- ``regex``: matches the empty string (so every message), or matches at least
  :data:`MAX_BENIGN_SHARE` of the benign sample (lines that are not failures: start-up INFO
  lines, warnings, access logs; the built-in sample ships as ``matchers/catalog/benign.txt``;
  banners are exempt, since they match start-up lines);
- an unknown field whose name is close to a field of the record format (``workaround``,
  ``exmaples``): the message names the field it resembles. Other unknown fields are kept, since
  the seed format may grow, and so are translations (``<field>_<locale>``);
- a directory given on the command line that holds no catalog file.

It also reports, without failing, each user record that overrides a built-in id.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

from logsig.errors import CatalogProblem
from logsig.matchers.catalog.loader import Catalog, catalog_files
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import CATEGORIES, ID_PATTERN, Signature

MAX_BENIGN_SHARE = 0.5
"""A regex matching this share of the benign sample or more matches what is not a failure."""
PLACEHOLDER = "<fill in>"
"""Marks text a signature author still has to write (``logsig catalog draft`` leaves it)."""
SIMILARITY = 0.8
"""difflib ratio from which an unknown field is taken for a misspelt known one."""
_KNOWN_FIELDS = tuple(Signature.model_fields)
_TRANSLATION = re.compile(r"^[a-z_]+_[a-z]{2}$")


def builtin_benign() -> list[str]:
    """The built-in benign sample: one log line per line of ``matchers/catalog/benign.txt``."""
    text = (resources.files("logsig.matchers.catalog") / "benign.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line]


def empty_paths(paths: Sequence[Path]) -> list[CatalogProblem]:
    """A problem for each existing directory of ``paths`` that holds no catalog file."""
    return [CatalogProblem(str(p), "", "", "directory holds no catalog file (*.json, *.yaml, *.yml)")
            for p in paths if p.is_dir() and not catalog_files(p)]


def gate_problems(catalog: Catalog, benign: Sequence[str], *, only: set[str] | None = None) -> list[CatalogProblem]:
    """Every gate problem of ``catalog``'s signatures (those in ``only``, if given), in catalog order.

    benign: log lines that are not failures; file names come from ``catalog.files``.
    """
    checked = [sig for sig in catalog.signatures if only is None or sig.id in only]
    problems: list[CatalogProblem] = []
    for sig in checked:
        file = catalog.files.get(sig.id, "?")
        problems.extend(CatalogProblem(file, sig.id, field, message) for field, message in record_problems(sig))
    for sig_id, field, message in _benign_problems(checked, benign):
        problems.append(CatalogProblem(catalog.files.get(sig_id, "?"), sig_id, field, message))
    return problems


def record_problems(sig: Signature) -> Iterator[tuple[str, str]]:
    """``(field, message)`` for each problem of one record's fields and regex (no benign lines)."""
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
    if re.search(sig.regex, "") is not None:
        yield "regex", "matches an empty string, so every message"


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


def _benign_problems(signatures: Sequence[Signature], benign: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    safe = [sig for sig in signatures if re.search(sig.regex, "") is None and sig.role != "banner"]
    if not benign or not safe:
        return
    hits: dict[str, int] = {}
    for matches in Engine(safe).match_batch(list(benign)):
        for match in matches:
            hits[match.signature.id] = hits.get(match.signature.id, 0) + 1
    for sig in safe:
        count = hits.get(sig.id, 0)
        if count >= MAX_BENIGN_SHARE * len(benign):
            yield sig.id, "regex", f"matches {count} of {len(benign)} benign lines: it matches what is not a failure"


def overrides(builtin: Catalog, user: Catalog) -> list[str]:
    """One line per user record that replaces a built-in record of the same id."""
    known = builtin.by_id()
    return [f"{user.files.get(sig_id, '?')}: {sig_id}: overrides the built-in signature "
            f"({builtin.files.get(sig_id, '?')})" for sig_id in user.by_id() if sig_id in known]
