"""``lint_catalog``: each catalog smell is found, with its severity and field, and only it."""

from __future__ import annotations

from typing import Any

import pytest

from logsig.matchers.authoring.lint import Finding, lint_catalog
from logsig.matchers.signature import DeadEnd, Signature, Workaround

BENIGN = ["INFO 04-10 03:35:27 [loggers.py:80] Avg prompt throughput: 13.0 tokens/s",
          "(APIServer pid=1) INFO:     127.0.0.1:45252 - \"GET /health HTTP/1.1\" 200 OK"]


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "cuda/good", "signature": "s", "regex": r"CUDA error: (?P<what>[a-z ]+)",
        "category": "runtime_error", "official_doc_url": "https://docs.nvidia.com/cuda/",
        "workarounds": [{"action": "restart", "how": "kubectl delete pod", "success_rate": 0.5}],
        "examples": {"match": ["CUDA error: out of memory", "RuntimeError: CUDA error: busy"],
                     "no_match": ["CUDA ok"]},
    }
    record.update(changes)
    return record


def _sig(**changes: Any) -> Signature:
    return Signature.model_validate(_record(**changes))


def _where(findings: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.severity, f.signature_id, f.field) for f in findings]


class TestLintCatalog:
    def test_clean_catalog_has_no_findings(self) -> None:
        """A complete signature with working examples gives nothing."""
        assert [] == lint_catalog([_sig()], BENIGN)

    def test_duplicate_ids(self) -> None:
        """An id used twice is an error."""
        assert [("error", "cuda/good", "id")] == _where(lint_catalog([_sig(), _sig()], BENIGN))

    def test_id_not_domain_slash_slug(self) -> None:
        """An id without a domain is an error."""
        assert [("error", "Good", "id")] == _where(lint_catalog([_sig(id="Good")], BENIGN))

    def test_regex_that_does_not_compile(self) -> None:
        """A regex Python cannot compile is an error naming the reason."""
        findings = lint_catalog([_sig(regex="CUDA error: (unclosed", examples={})], BENIGN)
        assert [("warning", "cuda/good", "examples.match"), ("error", "cuda/good", "regex")] == _where(findings)
        assert findings[1].message.startswith("does not compile: missing )")

    def test_regex_matching_empty_string(self) -> None:
        """A regex that matches an empty string is an error (and phase one cannot narrow it)."""
        findings = lint_catalog([_sig(regex=r"(?:CUDA error: )?(?P<what>[a-z ]*)")], BENIGN)
        assert ["matches an empty string (so every message)",
                "phase one cannot narrow it (it can match empty): checked against every message",
                "matches: 'CUDA ok'",
                "matches 2 benign line(s), e.g. 'INFO 04-10 03:35:27 [loggers.py:80] Avg prompt "
                "throughput: 13.0 tokens/s'"] == [f.message for f in findings]

    def test_regex_matching_a_benign_line(self) -> None:
        """A regex that matches a line of the benign corpus is an error."""
        findings = lint_catalog([_sig(regex=r"CUDA error: (?P<what>[a-z ]+)|GET /health")], BENIGN)
        assert [("error", "cuda/good", "regex")] == _where(findings)
        assert findings[0].message.startswith("matches 1 benign line(s)")

    def test_benign_lines_count_as_the_pipeline_raises_them(self) -> None:
        """A generic match on an INFO line, a match on an advice line and a banner's match raise no
        incident and are not counted; a specific match on the INFO line is."""
        info = "(VllmWorkerProcess pid=34202) INFO 04-17 04:36:38 model_runner_base.py:120] Writing input of failed execution"
        advice = "If you get `CUDA error: invalid device function` errors, the above might be the cause"
        generic = _sig(id="generic/failed", regex=r"failed execution|CUDA error", priority=-130,
                       examples={"match": ["x failed execution", "CUDA error: y"]})
        banner = _sig(id="banner/x", regex=r"Writing input", role="banner",
                      examples={"match": ["Writing input a", "Writing input b"]})
        specific = _sig(id="llm/failed-dump", regex=r"Writing input of failed execution",
                        examples={"match": ["Writing input of failed execution a", "Writing input of failed execution b"]})
        assert [("error", "llm/failed-dump", "regex")] == _where(lint_catalog([generic, banner, specific], [info, advice]))

    def test_unreachable_regex(self) -> None:
        """A regex that can never match is an error."""
        findings = lint_catalog([_sig(regex=r"CUDA error: [^\s\S]", examples={"match": ["a", "b"]})], [])
        assert ("error", "can never match (unreachable)") == (findings[0].severity, findings[0].message)

    def test_non_linear_regex_runs_on_the_fallback(self) -> None:
        """A look-behind is reported as a warning naming the guarded fallback."""
        findings = lint_catalog([_sig(regex=r"(?<=RuntimeError: )CUDA error: (?P<what>[a-z ]+)",
                                      examples={"match": ["RuntimeError: CUDA error: x",
                                                          "RuntimeError: CUDA error: y"]})], BENIGN)
        assert [("warning", "not linear-time (lookbehind): runs on the guarded fallback, Python re "
                 "on the first and last 4096 characters of a message")] == [
            (f.severity, f.message) for f in findings]

    def test_nested_repeat_on_the_fallback_is_an_error(self) -> None:
        """A back-reference with nested unbounded repeats could backtrack exponentially: one error,
        and its examples (one of which fails) are not run through it."""
        findings = lint_catalog([_sig(regex=r"(?P<w>(?:x+)+)=(?P=w)",
                                      examples={"match": ["xx=xx", "nothing"]})], BENIGN)
        assert [("error", "regex", "nested unbounded repeats on the backtracking fallback, for every "
                 "message (not linear-time: backreference)")] == [
            (f.severity, f.field, f.message.split(": can take")[0]) for f in findings]

    def test_nested_repeat_reaching_the_fallback_through_a_caveat_is_an_error(self) -> None:
        """A linear regex with nested repeats and a non-MULTILINE ``$`` reaches the fallback for
        messages ending in a newline, so it is an error too."""
        findings = lint_catalog([_sig(regex=r"CUDA error: (?P<what>(?:[a-z]+ ?)+)$")], BENIGN)
        assert [("error", "regex", "nested unbounded repeats on the backtracking fallback, for "
                 "messages ending in a newline ($)")] == [
            (f.severity, f.field, f.message.split(": can take")[0]) for f in findings]

    def test_nested_repeat_on_re2_is_not_an_error(self) -> None:
        """Nested repeats that always run on RE2 (linear time) are not reported."""
        assert [] == lint_catalog([_sig(regex=r"CUDA error: (?P<what>(?:[a-z]+ ?)+)")], BENIGN)

    def test_workaround_without_how(self) -> None:
        """A workaround with an empty ``how`` is an error on that workaround."""
        findings = lint_catalog([_sig(workarounds=[{"action": "a", "how": "b"}, {"action": "c"}])], BENIGN)
        assert [("error", "cuda/good", "workarounds[1].how")] == _where(findings)

    @pytest.mark.parametrize(("field", "changes"), [
        ("confidence", {"confidence": 1.5}),
        ("workarounds[0].success_rate", {"workarounds": [{"how": "x", "success_rate": -0.1}]}),
        ("dead_ends[0].fail_rate", {"dead_ends": [{"fail_rate": 2.0}]}),
    ])
    def test_rate_outside_unit_interval(self, field: str, changes: dict[str, Any]) -> None:
        """A rate outside [0, 1] (a record built without validation) is an error on that field."""
        broken = _sig().model_copy(update={k: _unvalidated(k, v) for k, v in changes.items()})
        assert [("error", "cuda/good", field)] == _where(lint_catalog([broken], BENIGN))

    def test_missing_official_doc_url(self) -> None:
        """No documentation link is a warning."""
        assert [("warning", "cuda/good", "official_doc_url")] == _where(
            lint_catalog([_sig(official_doc_url=None)], BENIGN))

    def test_link_to_unknown_id(self) -> None:
        """A transition-graph link to an id not in the catalog is an error."""
        findings = lint_catalog([_sig(transition_graph={"leads_to": ["cuda/missing"]})], BENIGN)
        assert [("error", "cuda/good", "transition_graph.leads_to")] == _where(findings)

    def test_category_outside_vocabulary(self) -> None:
        """An unknown category is a warning."""
        assert [("warning", "cuda/good", "category")] == _where(lint_catalog([_sig(category="oops")], BENIGN))

    def test_fewer_than_two_examples(self) -> None:
        """One match example is a warning."""
        findings = lint_catalog([_sig(examples={"match": ["CUDA error: x"]})], BENIGN)
        assert [("warning", "cuda/good", "examples.match")] == _where(findings)

    def test_failing_examples(self) -> None:
        """A match example that does not match and a no_match example that does are errors."""
        findings = lint_catalog([_sig(examples={"match": ["CUDA error: x", "nothing"],
                                                "no_match": ["CUDA error: y"]})], BENIGN)
        assert [("error", "cuda/good", "examples.match[1]"),
                ("error", "cuda/good", "examples.no_match[0]")] == _where(findings)


def _unvalidated(key: str, value: Any) -> Any:
    """Nested records as model objects without validation (``model_copy`` does not validate)."""
    if key == "workarounds":
        return [Workaround.model_construct(**item) for item in value]
    if key == "dead_ends":
        return [DeadEnd.model_construct(**item) for item in value]
    return value
