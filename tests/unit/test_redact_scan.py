"""The one-scan check before redaction: a text it calls clear is one the rules leave unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from logsig.redact import DEFAULT_KINDS, KINDS, RedactionSettings, Redactor
from logsig.redact_scan import Clear

DATA = Path(__file__).parents[1] / "data"
ROWS = [json.loads(line) for line in (DATA / "redaction" / "secrets.jsonl").read_text(encoding="utf-8").splitlines()]


def texts() -> list[str]:
    """Every secrets-corpus line and every corpus line, as written, upper-cased, with tabs or with a
    separator Python's ``\\s`` counts and Vectorscan's does not in place of the blanks, and with a
    no-break space before each colon."""
    lines = [line for row in ROWS for line in row["lines"]]
    for row in map(json.loads, (DATA / "corpus" / "real_logs.jsonl").read_text().splitlines()):
        lines.extend(row["lines"])
    lines.append("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----")
    lines.append("A" * 64)
    return [variant for line in lines for variant in (line, line.upper(), line.replace(" ", "\x1f"),
                                                      line.replace(" ", "\t"), line.replace(":", "\u00a0:"))]


def full(kinds: list[str]) -> Redactor:
    """A redactor of ``kinds`` that applies every rule to every text (a custom pattern turns the check off)."""
    return Redactor(RedactionSettings(kinds=kinds, patterns=["(?!x)x"]))  # type: ignore[arg-type]


class TestClear:
    def test_checked_redaction_equals_full_redaction(self) -> None:
        """For default and all kinds, texts and bytes: the same output and counts as with every rule applied."""
        for kinds in (DEFAULT_KINDS, [k for k in KINDS if k != "custom"]):
            checked, slow = Redactor(RedactionSettings(kinds=kinds)), full(kinds)  # type: ignore[arg-type]
            values = texts()
            expected = ([slow.text(v) for v in values], [slow.data(v.encode()) for v in values])
            actual = ([checked.text(v) for v in values], [checked.data(v.encode()) for v in values])
            assert (expected, slow.counts) == (actual, checked.counts)

    def test_tells_clear_only_what_no_rule_matches(self) -> None:
        """A line with a token is not clear, an ordinary one is, a non-ASCII one never is."""
        clear = Clear((r"\bhf_[A-Za-z0-9]{30,}\b",))
        assert [False, True, False] == [clear.text("token hf_" + "a" * 34), clear.text("an ordinary line"),
                                        clear.text("caf\u00e9")]

    def test_a_rule_vectorscan_cannot_read_turns_it_off(self) -> None:
        """A pattern that does not compile leaves nothing to skip."""
        assert False is Clear((r"(?<=a)b(?P=x)",)).data(b"nothing here")
