"""``logsig catalog draft``: a signature skeleton from example lines or an unclassified template.

The lines are templated (:func:`logsig.group.template.template`); lines of one template give
that template, lines of several are aligned word by word and the words that differ become one
bounded gap. A leading log header (vLLM, glog/klog, TGI, Go slog, ``[rankN]:``, Docker Compose,
``(Worker pid=N)``, NCCL ``host:pid:tid [dev]``, journald / syslog) is dropped, so the regex names
the message, not the logger. The regex is then written from the template: literal text escaped
(a space matches any run of whitespace), each masked part a bounded class, and the numbers the capture convention names
(``docs/signatures.md``) as named captures: ``pid``, ``rank``, ``exit_code``, ``gpu_index``,
``<word>_tokens`` before "tokens", ``<word>_bytes`` for sizes.

The record (:func:`draft_record`) has the format of the catalog: an id to edit (``local/<slug>``),
the regex, the example lines as ``examples.match``, the fingerprints it covers as
``fingerprint:<hex>`` tags, and :data:`~logsig.matchers.authoring.gate.PLACEHOLDER`
in ``category``, ``root_cause``, a workaround and a dead end, which ``logsig catalog check``
rejects until they are written. :func:`draft_problems` checks what the draft promises: the regex
matches every example (as the engine matches), runs on RE2 alone (no backtracking fallback), can
be narrowed by phase one, and does not match the empty string.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from logsig.group.template import fingerprint_of_template, template
from logsig.matchers.authoring.gate import PLACEHOLDER
from logsig.matchers.engine.engine import Engine
from logsig.matchers.engine.hazards import backtracking_hazard, fallback_route
from logsig.matchers.regex.translate import translate
from logsig.matchers.signature import Signature

__all__ = ["GAP", "draft_problems", "draft_record", "merged_template", "strip_header", "template_regex"]

GAP = "<*>"
"""The placeholder of a merged template where example lines differ."""
MAX_GAP_CHARS = 1000
"""Longest text a gap may stand for (RE2's largest repeat count)."""

_CLASSES = {
    "NUM": r"\d[\d.]{0,30}",
    "SIZE": r"\d[\d.]{0,20} ?[A-Za-z]{1,5}",
    "DUR": r"\d[\d.a-zµμ]{0,30}",
    "TS": r"[\w:.,/+-]{1,40}(?: [\w:.,/+-]{1,40}){0,4}",
    "HOST": r"[\w.-]{1,253}",
    "URL": r"[^\s'\"`<>]{1,1000}",
    "UUID": r"[0-9a-fA-F-]{36}",
    "PCI": r"[0-9a-fA-F:.]{5,16}",
    "IP": r"[0-9a-fA-F:.]{2,45}",
    "PATH": r"[^\s'\"]{1,1000}?",
    "ADDR": r"0[xX][0-9a-fA-F]{1,16}",
    "POD": r"[a-z0-9]{5,10}(?:-[a-z0-9]{5})?",
    "HEX": r"[0-9a-fA-F]{8,128}",
    "STR": r"[^\s'\"`]{0,200}",
}
"""The bounded class each placeholder of :mod:`logsig.group.template` becomes."""

_PLACEHOLDER = re.compile(r"<(" + "|".join(_CLASSES) + r"|\*)>")
_HEADERS = [re.compile(p) for p in (
    r"^\([^()]{0,80}pid=<NUM>[^()]{0,60}\) ",
    r"^\[rank<NUM>\]: ?",
    r"^[\w.<>-]{1,60} \| ",
    r"^\[?<TS>\]? (?:[DIWE] )?",
    r"^\[ ?<NUM>\] ",
    r"^kernel: ",
    r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) <TS> (?:\[[^\]]{1,80}\]|[\w.]{1,80}:<NUM>\]) ",
    r"^[IWEF]<TS> <NUM> [\w./-]{1,120}:<NUM>\] ",
    r"^(?:TRACE|DEBUG|INFO|WARN|ERROR) [\w:-]{1,80}: (?:[\w./-]{1,120}:<NUM>: )?",
    r"^time=<TS> level=\w+ source=[\w./-]{1,80}:<NUM> ",
    r"^(?:<HOST>|[\w.-]{1,253}):<NUM>:<NUM> \[<NUM>\] ",
    r"^<HOST> [\w./-]{1,80}(?:\[<NUM>\])?: ",
)]
"""Headers as :func:`logsig.group.template.template` writes them; the last two are the parts it masks as
``<HOST>``: NCCL's ``host:pid:tid [dev]`` (its host left as is after a ``[rankN]:`` prefix) and the host
and ident of a journald / syslog line after its time."""
_NAMED_BEFORE = (
    (re.compile(r"\bpid[=: ]{1,2}$"), "pid"),
    (re.compile(r"(?i)\brank[=: ]{0,2}$"), "rank"),
    (re.compile(r"(?i)\bexit(?: code| status|code:)[=: ]{0,2}$"), "exit_code"),
    (re.compile(r"(?i)\b(?:GPU|device|cuda:) ?$"), "gpu_index"),
)
_WORD = re.compile(r"([A-Za-z][A-Za-z0-9]*)\W*$")
MAX_FINGERPRINT_TAGS = 5
"""The draft's tags name the fingerprints of (at most this many of) the templates it covers."""
MIN_CORE_CHARS = 12
"""A template whose text without its header is shorter than this keeps the header."""


def strip_header(text: str) -> str:
    """``text`` (a template) without its leading log headers, unless too little would be left."""
    core = text
    changed = True
    while changed:
        changed = False
        for header in _HEADERS:
            cut = header.sub("", core, count=1)
            if cut != core:
                core, changed = cut, True
    literal = _PLACEHOLDER.sub("", core)
    return core if len(literal.strip()) >= MIN_CORE_CHARS else text


def merged_template(templates: Sequence[str]) -> str:
    """One template covering ``templates``: the words they share, :data:`GAP` where they differ."""
    merged = templates[0].split(" ")
    for other in templates[1:]:
        words = other.split(" ")
        out: list[str] = []
        for op, i1, i2, _, _ in difflib.SequenceMatcher(a=merged, b=words, autojunk=False).get_opcodes():
            if op == "equal":
                out.extend(merged[i1:i2])
            elif not out or out[-1] != GAP:
                out.append(GAP)
        merged = out
    return " ".join(merged)


def template_regex(text: str, gap_chars: int = 200) -> str:
    """The regex of a template: literals escaped, placeholders bounded classes or named captures."""
    parts: list[str] = []
    names: set[str] = set()
    pos = 0
    after_gap = False
    for m in _PLACEHOLDER.finditer(text):
        literal = text[pos:m.start()]
        gap = m.group(1) == "*"
        parts.append(_literal(literal, loose_start=after_gap, loose_end=gap))
        parts.append(_piece(m.group(1), literal, text[m.end():], names, gap_chars))
        pos, after_gap = m.end(), gap
    parts.append(_literal(text[pos:], loose_start=after_gap, loose_end=False))
    return "".join(parts)


def _literal(text: str, *, loose_start: bool, loose_end: bool) -> str:
    """``text`` escaped, a space as ``\\s+``; next to a gap, the space may be absent (``\\s*``)."""
    words = text.split(" ")
    body = r"\s+".join(re.escape(word) for word in words)
    if loose_start and body.startswith(r"\s+"):
        body = r"\s*" + body[3:]
    if loose_end and body.endswith(r"\s+"):
        body = body[:-3] + r"\s*"
    return body


def _piece(kind: str, before: str, after: str, names: set[str], gap_chars: int) -> str:
    """One placeholder as a class, a named capture when the convention has a name for it."""
    if kind == "*":
        return f".{{0,{min(gap_chars, MAX_GAP_CHARS)}}}?"
    pattern = _CLASSES[kind]
    name = _capture_name(kind, before, after)
    if name is None:
        return f"(?:{pattern})"
    unique, n = name, 2
    while unique in names:
        unique = name.replace("_", f"_{n}_", 1) if "_" in name else f"{name}_{n}"
        n += 1
    names.add(unique)
    return f"(?P<{unique}>{pattern})"


def _capture_name(kind: str, before: str, after: str) -> str | None:
    if kind == "SIZE":
        return f"{_word(before) or 'size'}_bytes"
    if kind != "NUM":
        return None
    if re.match(r"\s?tokens\b", after):
        return f"{_word(before) or 'n'}_tokens"
    return next((name for pattern, name in _NAMED_BEFORE if pattern.search(before)), None)


def _word(text: str) -> str | None:
    m = _WORD.search(text)
    return m.group(1).lower() if m else None


def _slug(text: str) -> str:
    words = re.findall(r"[a-z][a-z0-9]+", _PLACEHOLDER.sub(" ", text).lower())
    return "-".join(words[:6]) or "unclassified"


def draft_record(lines: Sequence[str], template_text: str | None = None) -> dict[str, Any]:
    """The skeleton record for ``lines`` (non-empty), from ``template_text`` when given.

    Raises:
        ValueError: no line is given.
    """
    if not lines:
        raise ValueError("a draft needs at least one example line")
    distinct = [template_text] if template_text is not None else list(dict.fromkeys(map(template, lines)))
    template_text = merged_template([strip_header(t) for t in distinct])
    longest = max(len(line) for line in lines)
    return {
        "id": f"local/{_slug(template_text)}",
        "signature": lines[0],
        "regex": template_regex(template_text, gap_chars=longest),
        "category": PLACEHOLDER,
        "root_cause": PLACEHOLDER,
        "dead_ends": [{"action": PLACEHOLDER, "why_fails": PLACEHOLDER}],
        "workarounds": [{"action": PLACEHOLDER, "how": PLACEHOLDER, "success_rate": 0.5,
                         "condition": "", "sources": []}],
        "confidence": 0.5,
        "tags": [f"fingerprint:{fingerprint_of_template(t)}" for t in distinct[:MAX_FINGERPRINT_TAGS]],
        "examples": {"match": list(dict.fromkeys(lines)), "no_match": []},
    }


def draft_problems(record: dict[str, Any]) -> list[str]:
    """What keeps the draft's regex from keeping its promise (empty when it does)."""
    regex = str(record["regex"])
    try:
        re.compile(regex)
    except re.error as error:
        return [f"regex does not compile: {error}"]
    problems: list[str] = []
    hazard = backtracking_hazard(regex)
    if hazard is not None:
        problems.append(hazard)
    translation = translate(regex)
    route = fallback_route(translation)
    if route is not None:
        problems.append(f"regex would run on the backtracking fallback: {route}")
    if translation.prefilter is None or re.search(regex, "") is not None:
        problems.append("regex matches the empty string")
    sig = Signature(id=str(record["id"]), signature=str(record["signature"]), regex=regex)
    engine = Engine([sig])
    problems.extend(f"regex does not match example: {line}" for line in record["examples"]["match"]
                    if not engine.match(line))
    return problems
