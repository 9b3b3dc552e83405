"""The matching engine: interface, windows, fallback, cost attribution and the compile cache."""

from __future__ import annotations

import re

from logsig.matchers.engine.engine import Engine, Match
from logsig.matchers.signature import Signature


def _sig(regex: str, sig_id: str = "t/sig", **fields: object) -> Signature:
    return Signature.model_validate({"id": sig_id, "signature": "s", "regex": regex, **fields})


def _expected(sigs: list[Signature], message: str) -> list[tuple[str, tuple[int, int], dict[str, str | None]]]:
    out = []
    for sig in sigs:
        found = re.search(sig.regex, message)
        if found is not None:
            out.append((sig.id, found.span(), found.groupdict()))
    return out


def _got(matches: list[Match]) -> list[tuple[str, tuple[int, int], dict[str, str | None]]]:
    return [(m.signature.id, m.span, dict(m.captures)) for m in matches]


OOM = _sig(r"CUDA out of memory\. Tried to allocate (?P<requested>[\d.]+ [KMG]iB)", "t/oom")
XID = _sig(r"NVRM: Xid \((?P<pci>PCI:[0-9a-f:]+)\): (?P<xid>\d+)(?:, pid=(?P<pid>\d+))?", "t/xid")
DEAD = _sig(r"EngineDeadError", "t/dead")


class TestMatch:
    def test_span_and_captures_are_those_of_re_search(self) -> None:
        """A matching message gives the span and named captures ``re.search`` gives."""
        message = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0)"
        assert _expected([OOM], message) == _got(Engine([OOM]).match(message))

    def test_group_that_did_not_take_part_is_none(self) -> None:
        """An optional named group that did not match is reported as None."""
        message = "[93297.02] NVRM: Xid (PCI:0000:43:00): 79, GPU has fallen off the bus"
        assert [("t/xid", (11, 41), {"pci": "PCI:0000:43:00", "xid": "79", "pid": None})] == _got(
            Engine([XID]).match(message))

    def test_every_matching_signature_in_catalog_order(self) -> None:
        """Several matching signatures come back in catalog order, not match order."""
        message = "EngineDeadError after CUDA out of memory. Tried to allocate 1.5 MiB"
        engine = Engine([XID, OOM, DEAD])
        assert ["t/oom", "t/dead"] == [m.signature.id for m in engine.match(message)]

    def test_no_match_is_empty(self) -> None:
        """A benign line matches nothing."""
        assert [] == Engine([OOM, XID, DEAD]).match("INFO 04-10 03:35:27 Avg prompt throughput: 13.0 tokens/s")

    def test_batch_equals_one_by_one(self) -> None:
        """``match_batch`` gives for each message what ``match`` gives."""
        engine = Engine([OOM, XID, DEAD])
        messages = ["x EngineDeadError", "", "benign", "NVRM: Xid (PCI:0000:43:00): 13, pid=7",
                    "EngineDeadError\nCUDA out of memory. Tried to allocate 3 GiB", "é EngineDeadError"]
        assert [_got(engine.match(m)) for m in messages] == [_got(r) for r in engine.match_batch(messages)]

    def test_empty_batch(self) -> None:
        """An empty batch gives an empty list."""
        assert [] == Engine([OOM]).match_batch([])

    def test_empty_catalog_matches_nothing(self) -> None:
        """An engine without signatures answers every message with no match."""
        assert [[], []] == Engine([]).match_batch(["a", "EngineDeadError"])

    def test_non_ascii_offsets_are_characters(self) -> None:
        """Spans count characters, not UTF-8 bytes, after non-ASCII text."""
        message = "模型 µs — CUDA out of memory. Tried to allocate 8 GiB"
        assert _expected([OOM], message) == _got(Engine([OOM]).match(message))

    def test_match_crossing_batch_neighbours_is_not_reported(self) -> None:
        """A pattern spanning a newline cannot match across two messages of one batch."""
        sig = _sig(r"foo\s+bar", "t/gap")
        assert [[], []] == [_got(r) for r in Engine([sig]).match_batch(["x foo", "bar y"])]

    def test_anchors_hold_at_each_message_of_a_batch(self) -> None:
        """``^`` and ``$`` anchor to each message, whatever its place in the batch."""
        sig = _sig(r"^Error: (?P<what>\w+)$", "t/anchored")
        messages = ["x", "Error: boom", "Error: boom!", "y Error: boom"]
        assert [_expected([sig], m) for m in messages] == [_got(r) for r in Engine([sig]).match_batch(messages)]


class TestLongMessages:
    def test_long_message_is_matched_on_head_and_tail_and_counted(self) -> None:
        """Matches in the head and tail windows are found, with offsets into the whole message."""
        engine = Engine([OOM, DEAD], max_message_bytes=1024)
        message = "EngineDeadError " + "x" * 5000 + " CUDA out of memory. Tried to allocate 4 GiB"
        assert _expected([OOM, DEAD], message) == _got(engine.match(message))
        assert 1 == engine.truncated_messages

    def test_middle_of_long_message_is_not_searched(self) -> None:
        """Text outside both windows is not matched (the documented bound), and still counted."""
        engine = Engine([DEAD], max_message_bytes=1024)
        message = "x" * 3000 + "EngineDeadError" + "y" * 3000
        assert [] == engine.match(message)
        assert 1 == engine.truncated_messages

    def test_window_cut_keeps_characters_whole(self) -> None:
        """Windows are cut at character boundaries of multi-byte UTF-8 text."""
        engine = Engine([DEAD], max_message_bytes=1024)
        message = "é" * 3000 + "EngineDeadError"
        assert [("t/dead", (3000, 3015), {})] == _got(engine.match(message))

    def test_short_messages_are_not_counted(self) -> None:
        """Messages within the limit leave the counter at zero."""
        engine = Engine([DEAD], max_message_bytes=1024)
        engine.match_batch(["EngineDeadError", "y" * 1024])
        assert 0 == engine.truncated_messages


class TestSurrogates:
    def test_lone_surrogate_is_matched_and_captures_index_the_message(self) -> None:
        """A message with a lone surrogate is matched; spans and captures index the original."""
        message = "\ud800 CUDA out of memory. Tried to allocate 2 GiB"
        assert _expected([OOM], message) == _got(Engine([OOM]).match(message))


class TestPhaseTwoSeconds:
    def test_every_signature_starts_at_zero(self) -> None:
        """The per-signature counter has every id before any message."""
        assert {"t/oom": 0.0, "t/xid": 0.0, "t/dead": 0.0} == Engine([OOM, XID, DEAD]).phase_two_seconds

    def test_only_confirmed_candidates_cost_time(self) -> None:
        """Time is added for a signature phase one named, not for the others."""
        engine = Engine([OOM, XID, DEAD])
        engine.match_batch(["EngineDeadError"] * 50)
        costs = engine.phase_two_seconds
        assert (True, 0.0, 0.0) == (costs["t/dead"] > 0, costs["t/oom"], costs["t/xid"])


class TestCompileCache:
    def test_unchanged_catalog_reuses_the_compiled_form(self) -> None:
        """A second Engine for the same ids and regexes shares the compiled databases."""
        assert Engine([OOM, XID]).compiled is Engine([OOM, XID]).compiled

    def test_changed_regex_or_limit_compiles_again(self) -> None:
        """Another regex or another byte limit is another fingerprint."""
        base = Engine([OOM, XID]).compiled
        other_regex = Engine([OOM, _sig(XID.regex + "x", "t/xid")]).compiled
        other_limit = Engine([OOM, XID], max_message_bytes=4096).compiled
        assert (False, False) == (base is other_regex, base is other_limit)

    def test_reused_form_reports_the_new_signature_objects(self) -> None:
        """Other fields may change on reload; matches carry the new Signature."""
        renamed = _sig(DEAD.regex, "t/dead", root_cause="updated")
        matches = Engine([renamed]).match("EngineDeadError")
        assert Engine([DEAD]).compiled is Engine([renamed]).compiled
        assert "updated" == matches[0].signature.root_cause


class TestWarm:
    @staticmethod
    def _engine(tag: str) -> Engine:
        """An engine whose regexes no other test compiles (the compiled form is shared per catalog)."""
        return Engine([_sig(rf"warm-{tag}-a \d+", "t/a"), _sig(rf"warm-{tag}-b (?=x)", "t/b"),
                       _sig(rf"warm-{tag}-c [^\W\d]+", "t/c")])

    def test_slices_compile_until_every_confirmer_is_ready(self) -> None:
        """With no time budget each slice compiles one signature; the last slice reports done."""
        engine = self._engine("slices")
        assert [False, False, True, True] == [engine.warm(0.0) for _ in range(4)]

    def test_warmed_signatures_need_no_compile_at_their_first_candidate(self) -> None:
        """After warming, RE2 objects exist for RE2 patterns and the Python regex for the fallback one."""
        engine = self._engine("ready")
        engine.warm(60.0)
        confirmers = engine.compiled.confirmers
        assert ([True, False, True], True) == ([c._re2 is not None for c in confirmers],
                                               confirmers[1]._python is not None)


class TestLineEndAnchor:
    def test_end_anchor_after_a_long_class_run_before_an_empty_last_message(self) -> None:
        """``\\d$`` finds the end of 16 digits though the batch's last message is empty (the joined
        buffer then ends in a newline, where Vectorscan alone reports no match)."""
        engine = Engine([_sig(r"(?a)\d$", "t/digits")])
        assert [[(15, 16)], []] == [[m.span for m in ms] for ms in engine.match_batch(["1" * 16, ""])]

    def test_matches_ending_in_the_guard_are_dropped(self) -> None:
        """An empty last message matches ``^$`` once, and nothing is attributed past the batch."""
        engine = Engine([_sig(r"^$", "t/empty")])
        assert [False, True, False, True] == [bool(ms) for ms in engine.match_batch(["a", "", "b", ""])]
