"""Generate benchmark catalogs of any size from the real built-in catalog.

A catalog of ``n`` signatures is the first ``n`` built-in signatures, then variants of them in
turn: variant ``k`` of a signature gets the id ``<domain>/<slug>-v<k>`` and one literal word of
its regex (four letters or more, outside classes, escapes and group syntax) replaced by another
word from the corpus (two joined in CamelCase where the word is a whole alternative, as error
names are), so variants stay literal-anchored and realistic; a variant that still matches a
real failure line of the corpus is drawn again, so variants add signatures, not duplicates. A
signature with no such word (say a generic exception pattern) gets no variants.

Usage: ``python bench/gen_catalog.py OUT.json --size 1000`` writes a JSON list of records.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from gen_stream import load_corpus

from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.signature import Signature

_WORD = re.compile(r"[A-Za-z]{4,}")


def literal_words(regex: str) -> list[tuple[int, int]]:
    """Spans of the literal words of ``regex`` (not in classes, escapes, groups or counts)."""
    spans, i = [], 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
        elif char == "[":
            i = _class_end(regex, i)
        elif regex.startswith("(?", i):
            i = _group_syntax_end(regex, i)
        elif char == "{":
            i = regex.find("}", i) + 1 or len(regex)
        else:
            found = _WORD.match(regex, i)
            if found is None:
                i += 1
            else:
                spans.append(found.span())
                i = found.end()
    return spans


def _class_end(regex: str, i: int) -> int:
    i += 2 if regex.startswith("[^", i) else 1
    i += 1 if regex[i:i + 1] == "]" else 0
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def _group_syntax_end(regex: str, i: int) -> int:
    found = re.compile(r"\(\?(?:P<\w+>|P=\w+\)|<?[=!]|[aiLmsux-]*[:)])").match(regex, i)
    return found.end() if found else i + 2


def variant(sig: Signature, k: int, vocabulary: list[str], lines: list[str]) -> Signature | None:
    """Variant ``k`` of ``sig`` (deterministic in ``k``) matching none of ``lines``; None when ``sig`` has
    no literal word to replace (a suffix or prefix would not be realistic, and may follow an end anchor)."""
    rng = random.Random(f"{sig.id}/{k}")
    regex = sig.regex
    words = literal_words(regex)
    for _ in range(16):
        if words:
            start, end = rng.choice(words)
            word = rng.choice(vocabulary)
            if _alone(regex, start, end):
                word += rng.choice(vocabulary).capitalize()
            candidate = regex[:start] + word + regex[end:]
        else:
            candidate = regex
        if candidate != regex and _compiles(candidate) and not _matches_any(candidate, lines):
            regex = candidate
            break
    else:
        return None
    record = sig.to_record() | {"id": f"{sig.id}-v{k}", "regex": regex, "examples": {}}
    return Signature.model_validate(record)


_LITERAL_PUNCTUATION = " _-.:'/,=<>"


def _alone(regex: str, start: int, end: int) -> bool:
    """Whether no literal text touches the word ``regex[start:end]`` (e.g. a whole alternative)."""
    return not _literal_before(regex, start) and not _literal_after(regex, end)


def _literal_before(regex: str, start: int) -> bool:
    if start == 0 or regex[max(start - 2, 0):start] == "\\b":
        return False
    char = regex[start - 1]
    return char.isalnum() or char in _LITERAL_PUNCTUATION or regex[start - 2:start - 1] == "\\"


def _literal_after(regex: str, end: int) -> bool:
    if end == len(regex) or regex[end:end + 2] == "\\b":
        return False
    char, following = regex[end], regex[end + 1:end + 2]
    return char.isalnum() or char in _LITERAL_PUNCTUATION or (
        char == "\\" and not following.isalnum())


def _matches_any(regex: str, lines: list[str]) -> bool:
    pattern = re.compile(regex)
    return any(pattern.search(line) for line in lines)


def _compiles(regex: str) -> bool:
    try:
        re.compile(regex)
    except re.error:
        return False
    return True


def vocabulary() -> list[str]:
    """Words of four letters or more from the corpus, sorted, without repeats."""
    benign, failures = load_corpus()
    return sorted({w for line in benign + failures for w in _WORD.findall(line)})


def catalog(size: int, real: list[Signature] | None = None) -> list[Signature]:
    """A catalog of ``size`` signatures: the real ones first, then their variants."""
    real = list(real if real is not None else load_catalog([], builtin=True).signatures)
    out = real[:size]
    words = vocabulary()
    failures = load_corpus()[1]
    k = 0
    while len(out) < size:
        drawn = variant(real[k % len(real)], k // len(real) + 1, words, failures)
        if drawn is not None:
            out.append(drawn)
        k += 1
    return out


def main() -> None:
    """Write a catalog of ``--size`` signatures as a JSON list."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    records = [sig.to_record() for sig in catalog(args.size)]
    args.out.write_text(json.dumps(records), encoding="utf-8")


if __name__ == "__main__":
    main()
