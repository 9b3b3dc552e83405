"""``logsig catalog lint``: catalog smells, as a list of findings (pure; the CLI prints them).

Errors (the catalog should not ship): duplicate ids, ids not ``<domain>/<slug>``, regexes Python
cannot compile, regexes that match an empty string or a line of the benign corpus (as an incident:
banners and what the line itself silences do not count, as in the pipeline) or can never match,
nested unbounded repeats on a route to the backtracking fallback (the rule of
:func:`~logsig.matchers.engine.hazards.backtracking_hazard`, which ``load_catalog`` also enforces),
workarounds without ``how``, rates outside [0, 1], transition-graph links to unknown ids,
examples that fail.

Warnings: regexes not linear-time (back-references, look-around, ...: run on the guarded
fallback, Python ``re`` on the first and last 4,096 characters of a message; not rejected, so a
known failure is not dropped from the catalog), regexes the phase-one prefilter cannot compile
(checked against every message), a missing ``official_doc_url``, a category outside
:data:`~logsig.matchers.signature.CATEGORIES`, fewer than two ``examples.match`` lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from logsig.matchers.engine.confirm import FALLBACK_WINDOW_CHARS
from logsig.matchers.engine.engine import Engine
from logsig.matchers.engine.hazards import backtracking_hazard, engine_problems
from logsig.matchers.signature import CATEGORIES, ID_PATTERN, Signature
from logsig.quiet import quiet_matches

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One smell: ``field`` is a dotted path into the record (``workarounds[1].how``), or ``""``."""

    severity: Severity
    signature_id: str
    field: str
    message: str


def lint_catalog(signatures: Sequence[Signature], benign_lines: Sequence[str]) -> list[Finding]:
    """Every finding for ``signatures``, in catalog order; per signature: id, record fields,
    regex, examples, benign lines.

    benign_lines: log lines no signature may match (e.g. ``tests/data/corpus/benign_lines``).
    The regex checks compile the catalog once, as the engine does (cached for a later Engine).
    """
    findings = list(_duplicates(signatures))
    known = {sig.id for sig in signatures}
    valid: list[Signature] = []
    for sig in signatures:
        findings.extend(_record(sig, known))
        unsafe = _unsafe(sig)
        if unsafe is None:
            valid.append(sig)
        else:
            findings.append(unsafe)
    engine = Engine(valid)
    for index, sig in enumerate(valid):
        findings.extend(_regex(sig, engine, index))
    findings.extend(_by_matching(engine, benign_lines))
    order = {sig.id: i for i, sig in enumerate(signatures)}
    return sorted(findings, key=lambda f: order.get(f.signature_id, -1))


def _unsafe(sig: Signature) -> Finding | None:
    """The error that keeps ``sig`` out of the engine: its regex does not compile, or could
    backtrack exponentially (so its examples and the benign lines are not run through it)."""
    try:
        re.compile(sig.regex)
    except re.error as error:
        return Finding("error", sig.id, "regex", f"does not compile: {error}")
    hazard = backtracking_hazard(sig.regex)
    return None if hazard is None else Finding("error", sig.id, "regex", hazard)


def _duplicates(signatures: Sequence[Signature]) -> Iterator[Finding]:
    for sig_id, count in Counter(sig.id for sig in signatures).items():
        if count > 1:
            yield Finding("error", sig_id, "id", f"id used by {count} signatures")


def _record(sig: Signature, known: set[str]) -> Iterator[Finding]:
    """Checks on the record's fields (not its regex)."""
    if not ID_PATTERN.match(sig.id):
        yield Finding("error", sig.id, "id", "id is not <domain>/<slug> (lower case)")
    for index, workaround in enumerate(sig.workarounds):
        if not workaround.how.strip():
            yield Finding("error", sig.id, f"workarounds[{index}].how", "workaround without how")
    for field, rate in _rates(sig):
        if rate is not None and not 0.0 <= rate <= 1.0:
            yield Finding("error", sig.id, field, f"rate {rate} outside [0, 1]")
    for link in ("leads_to", "preceded_by", "frequently_confused_with"):
        for target in getattr(sig.transition_graph, link):
            if target not in known:
                yield Finding("error", sig.id, f"transition_graph.{link}", f"unknown id {target!r}")
    if not sig.official_doc_url:
        yield Finding("warning", sig.id, "official_doc_url", "no official documentation link")
    if sig.category not in CATEGORIES and sig.role != "banner":
        yield Finding("warning", sig.id, "category", f"category {sig.category!r} is not in the vocabulary")
    if len(sig.examples.match) < 2:
        yield Finding("warning", sig.id, "examples.match",
                      f"{len(sig.examples.match)} match example(s); give at least 2 real lines")


def _rates(sig: Signature) -> Iterator[tuple[str, float | None]]:
    yield "confidence", sig.confidence
    yield "fix_success_rate", sig.fix_success_rate
    for index, workaround in enumerate(sig.workarounds):
        yield f"workarounds[{index}].success_rate", workaround.success_rate
    for index, dead_end in enumerate(sig.dead_ends):
        yield f"dead_ends[{index}].fail_rate", dead_end.fail_rate


def _regex(sig: Signature, engine: Engine, index: int) -> Iterator[Finding]:
    """Empty matches, linearity and phase problems of a regex that compiles."""
    if re.search(sig.regex, "") is not None:
        yield Finding("error", sig.id, "regex", "matches an empty string (so every message)")
    translation = engine.compiled.translations[index]
    if not translation.linear:
        features = ", ".join(translation.unsupported)
        yield Finding("warning", sig.id, "regex",
                      f"not linear-time ({features}): runs on the guarded fallback, Python re on "
                      f"the first and last {FALLBACK_WINDOW_CHARS} characters of a message")
    failure = engine.compiled.prefilter.failures.get(index)
    for severity, message in engine_problems(engine.compiled.confirmers[index], failure):
        yield Finding(severity, sig.id, "regex", message)


def _by_matching(engine: Engine, benign_lines: Sequence[str]) -> Iterator[Finding]:
    """Examples that fail and benign lines that match, run through the engine itself; a banner's
    match, or one the line itself silences (:func:`~logsig.quiet.quiet_matches`: an advice line, a
    generic match on an INFO line, ...), raises no incident and is not counted."""
    yield from _examples(engine, list(engine.signatures))
    hits: dict[str, list[str]] = {}
    for line, matches in zip(benign_lines, engine.match_batch(list(benign_lines)), strict=True):
        for match in quiet_matches(line, None, matches):
            if match.signature.role == "banner":
                continue
            hits.setdefault(match.signature.id, []).append(line)
    for sig_id, lines in hits.items():
        yield Finding("error", sig_id, "regex",
                      f"matches {len(lines)} benign line(s), e.g. {lines[0][:120]!r}")


def _examples(engine: Engine, signatures: list[Signature]) -> Iterator[Finding]:
    cases = [(sig, kind, index, line) for sig in signatures
             for kind in ("match", "no_match")
             for index, line in enumerate(getattr(sig.examples, kind))]
    results = engine.match_batch([line for *_, line in cases])
    for (sig, kind, index, line), matches in zip(cases, results, strict=True):
        matched = any(m.signature is sig for m in matches)
        if matched != (kind == "match"):
            verdict = "does not match" if kind == "match" else "matches"
            yield Finding("error", sig.id, f"examples.{kind}[{index}]", f"{verdict}: {line[:120]!r}")
