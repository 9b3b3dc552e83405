"""Differential tests: the engine and Python ``re.search`` give the same answers.

Same answers means, per message and signature: match or not, the span, and every named capture.
Run on the real corpus with the built-in catalog, on generated variants of corpus lines, and on
generated regexes (the constructs catalog authors use, flags included) and generated text.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine, Match
from logsig.matchers.signature import Signature

CORPUS = Path(__file__).parents[3] / "data" / "corpus"
Answer = list[tuple[str, tuple[int, int], dict[str, str | None]]]


@cache
def _catalog() -> tuple[Signature, ...]:
    return load_catalog().signatures


@cache
def _compiled() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(sig.regex) for sig in _catalog())


@cache
def _corpus_lines() -> tuple[str, ...]:
    lines: list[str] = []
    for text in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(text)
        lines.extend(record["lines"])
        lines.append("\n".join(record["lines"]))
    for text in (CORPUS / "benign_lines.jsonl").read_text(encoding="utf-8").splitlines():
        lines.append(json.loads(text)["line"])
    for sig in _catalog():
        lines.extend(sig.examples.match + sig.examples.no_match)
    return tuple(lines)


def _expected(sigs: tuple[Signature, ...], patterns: tuple[re.Pattern[str], ...], message: str) -> Answer:
    out = []
    for sig, pattern in zip(sigs, patterns, strict=True):
        found = pattern.search(message)
        if found is not None:
            out.append((sig.id, found.span(), found.groupdict()))
    return out


def _got(matches: list[Match]) -> Answer:
    return [(m.signature.id, m.span, dict(m.captures)) for m in matches]


class TestCorpus:
    def test_builtin_catalog_on_the_real_corpus(self) -> None:
        """Every corpus line, multi-line excerpt and catalog example gets the answers of ``re``."""
        lines = _corpus_lines()
        engine = Engine(_catalog())
        expected = [_expected(_catalog(), _compiled(), line) for line in lines]
        assert expected == [_got(r) for r in engine.match_batch(list(lines))]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def test_builtin_catalog_on_generated_lines(self, data: st.DataObject) -> None:
        """Corpus lines cut, joined and sprinkled with other characters get the answers of ``re``."""
        lines = _corpus_lines()
        base = data.draw(st.sampled_from(lines))
        other = data.draw(st.sampled_from(lines))
        cut = data.draw(st.integers(0, len(base)))
        noise = data.draw(st.text(alphabet="é µ\n\t:-_ Kſİ٣0aZ", max_size=6))
        message = data.draw(st.sampled_from([
            base[:cut] + noise + base[cut:], noise + base, base + noise, base[cut:] + "\n" + other,
            base.upper(), base.replace(" ", noise or " ")]))
        assert _expected(_catalog(), _compiled(), message) == _got(Engine(_catalog()).match(message))


_ATOMS = st.sampled_from([
    "a", "b", "x", "é", "K", "s", "ſ", "İ", "i", "1", "_", " ", ":", "-", r"\.", r"\d", r"\w", r"\s",
    r"\D", r"\W", r"\S", ".", "[a-c]", "[^a]", r"[\w-]", r"[^\s:]", r"\n", "[K-Z]", r"[^\W\d]"])
_ANCHORS = st.sampled_from(["^", "$", r"\b", r"\B", r"\A", r"\Z"])
_QUANTIFIERS = st.sampled_from(["*", "+", "?", "{1,3}", "{2}", "*?", "+?", "??", "{0,2}?"])


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, min_size=2, max_size=4).map("".join),
        st.tuples(children, children).map(lambda pair: f"(?:{pair[0]}|{pair[1]})"),
        st.tuples(children, _QUANTIFIERS).map(lambda pair: f"(?:{pair[0]}){pair[1]}"),
        children.map(lambda body: f"(?P<NAME>{body})"),
    )


def _name_groups(pattern: str) -> str:
    parts = pattern.split("NAME")
    return "".join(part + (f"g{i}" if i < len(parts) - 1 else "") for i, part in enumerate(parts))


_REGEXES = st.tuples(
    st.sampled_from(["", "(?i)", "(?m)", "(?s)", "(?a)", "(?im)", "(?ai)"]),
    st.recursive(st.one_of(_ATOMS, _ATOMS, _ANCHORS), _extend, max_leaves=8),
).map(lambda pair: pair[0] + _name_groups(pair[1]))
_TEXT = st.text(alphabet="abxéKkſsSİiı1٣_ :-.\n", max_size=24)


class TestGeneratedRegexes:
    @pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(regex=_REGEXES, messages=st.lists(_TEXT, min_size=1, max_size=6))
    @example(regex=r"(?a)\d$", messages=["1111111111111111", ""])
    def test_generated_regex_on_generated_text(self, regex: str, messages: list[str]) -> None:
        """Generated regexes (classes, anchors, groups, flags, repeats) give the answers of ``re``."""
        try:
            pattern = re.compile(regex)
        except re.error:
            assume(False)
            raise
        sig = Signature(id="t/generated", signature="s", regex=regex)
        expected = [_expected((sig,), (pattern,), m) for m in messages]
        assert expected == [_got(r) for r in Engine([sig]).match_batch(messages)]
