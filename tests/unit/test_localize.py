"""Titles, example lines and the seed format's translations in incidents."""

from datetime import UTC, datetime

import pytest

from logsig.enrich import build_incident
from logsig.localize import derived_title
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.records import LogEvent, Origin

SIGS = load_catalog().by_id()
SEED = SIGS["llm/vllm-cuda-oom-during-prefill"]
NOW = datetime(2026, 1, 2, tzinfo=UTC)


def incident_of(sig: Signature, line: str, locale: str = "en"):  # type: ignore[no-untyped-def]
    """The incident of ``line`` matched by ``sig`` alone, texts in ``locale``."""
    event = LogEvent(message=line, origin=Origin(file="f", line_number=1))
    return build_incident(event, Engine([sig]).match(line), NOW, locale=locale)


class TestTitle:
    @pytest.mark.parametrize(("sig_id", "title"), [
        ("llm/vllm-cuda-oom-during-prefill", "vLLM CUDA OOM during prefill"),
        ("gpu/xid-79-fallen-off-bus", "Xid 79 fallen off bus"),
        ("nccl/watchdog-timeout", "Watchdog timeout")])
    def test_derived_from_the_id(self, sig_id: str, title: str) -> None:
        """Words of the slug, acronyms as their projects spell them, the first capitalised."""
        assert title == derived_title(sig_id)

    def test_a_record_title_wins_and_the_example_is_kept(self) -> None:
        """A record's own title is used; the example line stays available as signature.example."""
        sig = Signature(id="t/oom", signature="OOM: tried 2.00 GiB", regex="OOM", title="Out of GPU memory")
        ref = incident_of(sig, "OOM: tried 9.00 GiB").signature
        assert ("Out of GPU memory", "OOM: tried 2.00 GiB") == (ref.title, ref.example)


class TestLocale:
    def test_zh_takes_the_seed_translations(self) -> None:
        """locale zh: example, root cause and workaround actions come from the *_zh fields."""
        incident = incident_of(SEED, SEED.signature, "zh")
        by_rate = sorted(zip(SEED.workarounds, SEED.workarounds_zh, strict=True), key=lambda p: -p[0].success_rate)
        assert (SEED.signature_zh, SEED.root_cause_zh, [zh for _, zh in by_rate]) == (
            incident.signature.example, incident.root_cause, [w.action for w in incident.workarounds])

    def test_untranslated_texts_fall_back_to_english(self) -> None:
        """A signature without translations gives English texts under locale zh."""
        sig = SIGS["gpu/xid-79-fallen-off-bus"]
        line = sig.examples.match[0]
        assert incident_of(sig, line, "en").model_dump(exclude={"event_id"}) == incident_of(
            sig, line, "zh").model_dump(exclude={"event_id"})
