"""The grouping stage: counts, lifecycle, bounded memory, held offsets, event ids, causal links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from logsig.enrich import build_incident
from logsig.group.grouper import Grouper
from logsig.group.settings import GroupSettings
from logsig.incident import Incident
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Detection
from logsig.records import LogEvent, Origin, Source

SIGS = load_catalog().by_id()
ENGINE = Engine([SIGS["llm/vllm-cuda-oom-during-prefill"], SIGS["llm/vllm-engine-dead"], SIGS["cuda/torch-oom"]])
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.15 GiB of which 1.2 GiB is free.")
DEAD = ("ERROR 12-16 09:17:04 [async_llm.py:480] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered "
        "an issue. See stack trace (above) for the root cause.")
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
DETECTED = datetime(2026, 3, 1, 12, 30, 0, tzinfo=UTC)


def detection(line: str, offset: int, pod: str = "vllm-0", partition: int = 0, seconds: float = 0.0) -> Detection:
    """The detection of ``line`` read at ``offset``, logged ``seconds`` after T0 by ``pod``."""
    event = LogEvent(message=line, origin=Origin(topic="logs", partition=partition, offset=offset),
                     source=Source(namespace="ml", pod=pod, container="server"),
                     timestamp=T0 + timedelta(seconds=seconds))
    matches = ENGINE.match(line)
    return Detection(build_incident(event, matches, DETECTED), event, tuple(matches))


class IncidentGrouper(Grouper):
    """A grouper whose events are read as their incidents (the group events themselves)."""

    def feed(self, detections, now=None):  # type: ignore[no-untyped-def, override]
        return [d.incident for d in super().feed(detections, now)]

    def tick(self, now=None):  # type: ignore[no-untyped-def, override]
        return [d.incident for d in super().tick(now)]

    def flush(self, partitions=None, resolve=False):  # type: ignore[no-untyped-def, override]
        return [d.incident for d in super().flush(partitions, resolve)]


def settings(**overrides: object) -> GroupSettings:
    """Grouping settings with short, test-sized intervals."""
    values: dict[str, object] = {"update_interval_seconds": 2.0, "quiet_seconds": 60.0}
    values.update(overrides)
    return GroupSettings.model_validate(values)


def burst(grouper: IncidentGrouper, n: int, pod: str = "vllm-0", start: int = 0) -> list[Incident]:
    """``n`` OOM lines, one every 10 ms of the grouper's clock, then the tick after quiet_seconds."""
    events: list[Incident] = []
    for i in range(start, start + n):
        events.extend(grouper.feed([detection(OOM, i, pod)], now=i / 100))
    events.extend(grouper.tick(now=(start + n) / 100 + 60))
    return events


class TestLifecycle:
    def test_burst_gives_one_group_opened_updated_resolved(self) -> None:
        """1,000 identical lines over 10 s: opened, one update per 2 s interval, resolved with the full count."""
        events = burst(IncidentGrouper(settings()), 1000)
        assert ["opened", "updated", "updated", "updated", "updated", "resolved"] == [e.status for e in events]
        assert [1, 201, 401, 601, 801, 1000] == [e.group.occurrences for e in events if e.group]
        assert 1 == len({e.group.key for e in events if e.group})

    def test_opened_is_emitted_at_once(self) -> None:
        """The first occurrence's feed returns the opened event carrying that line."""
        grouper = IncidentGrouper(settings())
        events = grouper.feed([detection(OOM, 5)], now=100.0)
        assert [("opened", 1, 5)] == [(e.status, e.group.occurrences if e.group else 0, e.source.offset)
                                      for e in events]

    def test_tick_reports_a_count_after_the_interval(self) -> None:
        """Occurrences within the interval wait for the next tick past it; the update carries the latest line."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, 0), detection(OOM, 1), detection(OOM, 2)], now=0.0)
        assert [] == grouper.tick(now=1.0)
        events = grouper.tick(now=2.5)
        assert [("updated", 3, 2)] == [(e.status, e.group.occurrences if e.group else 0, e.source.offset)
                                       for e in events]

    def test_first_and_last_seen_are_log_times(self) -> None:
        """first_seen and last_seen come from the lines' log timestamps, not the clock."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, 0, seconds=0), detection(OOM, 1, seconds=42)], now=0.0)
        (event,) = grouper.tick(now=100.0)
        assert (T0, T0 + timedelta(seconds=42)) == (event.group.first_seen, event.group.last_seen) if event.group \
            else None

    def test_pods_and_streams_make_separate_groups(self) -> None:
        """The same line from two pods opens two groups, each counting its own lines."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, i, pod=f"vllm-{i % 2}") for i in range(10)], now=0.0)
        resolved = grouper.tick(now=100.0)
        assert {"vllm-0": 5, "vllm-1": 5} == {e.source.pod: e.group.occurrences for e in resolved if e.group}

    def test_log_time_clock_resolves_by_log_time(self) -> None:
        """Without a clock (logsig scan) a group resolves once lines logged quiet_seconds later arrive."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, 0, seconds=0), detection(OOM, 1, seconds=1)])
        events = grouper.feed([detection(DEAD, 2, seconds=90)]) + grouper.tick()
        assert [("opened", "llm/vllm-engine-dead"), ("resolved", "cuda/torch-oom")] == [
            (e.status, e.signature.id) for e in events]


class TestBounds:
    def test_eviction_reports_the_count_and_is_counted(self) -> None:
        """Beyond max_groups the least recently seen group is reported, forgotten and counted."""
        grouper = IncidentGrouper(settings(max_groups=2))
        grouper.feed([detection(OOM, 0, pod="a"), detection(OOM, 1, pod="a"), detection(OOM, 2, pod="b")], now=0.0)
        events = grouper.feed([detection(OOM, 3, pod="c")], now=0.5)
        assert [("updated", "a", 2), ("opened", "c", 1)] == [
            (e.status, e.source.pod, e.group.occurrences if e.group else 0) for e in events]
        assert (1, 2) == (grouper.evicted, len(grouper))

    def test_pod_and_source_lists_are_bounded(self) -> None:
        """Sources beyond max_listed are counted, not listed."""
        grouper = IncidentGrouper(settings(max_listed=2))
        lines = [detection(OOM, i, pod="p", partition=i) for i in range(5)]
        grouper.feed(lines, now=0.0)
        (event,) = grouper.flush()
        assert (["logs/0", "logs/1"], 3) == (event.group.sources, event.group.sources_more) if event.group else None


class TestOffsets:
    def test_unreported_occurrences_hold_their_offsets(self) -> None:
        """Offsets of counted but unreported lines are held until an event reports them."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, 10)], now=0.0)
        assert {} == grouper.held_offsets()
        grouper.feed([detection(OOM, 11), detection(OOM, 12)], now=0.5)
        assert {("logs", 0): 11} == grouper.held_offsets()
        grouper.tick(now=3.0)
        assert {} == grouper.held_offsets()

    def test_flush_of_partitions_reports_and_forgets_only_theirs(self) -> None:
        """Revoking partition 1 reports its group's count and leaves partition 0's group open."""
        grouper = IncidentGrouper(settings())
        grouper.feed([detection(OOM, 0, pod="a", partition=0), detection(OOM, 0, pod="b", partition=1),
                      detection(OOM, 1, pod="b", partition=1)], now=0.0)
        events = grouper.flush([("logs", 1)])
        assert [("updated", "b", 2)] == [(e.status, e.source.pod, e.group.occurrences if e.group else 0)
                                         for e in events]
        assert (1, {}) == (len(grouper), grouper.held_offsets())


class TestEventIds:
    def test_replay_gives_the_same_ids(self) -> None:
        """The same lines through a fresh grouper (a restart re-reading them) give the same event ids."""
        first = [e.event_id for e in burst(IncidentGrouper(settings()), 300)]
        again = [e.event_id for e in burst(IncidentGrouper(settings()), 300)]
        assert first == again
        assert len(first) == len(set(first))

    def test_a_reopened_group_has_the_same_key_and_new_ids(self) -> None:
        """A group opening again from a later first line keeps its key and gets new event ids."""
        grouper = IncidentGrouper(settings())
        early, late = burst(grouper, 3), burst(grouper, 3, start=10_000)
        assert early[0].group and late[0].group
        assert early[0].group.key == late[0].group.key
        assert early[0].event_id != late[0].event_id


class TestCausalLinks:
    def test_engine_dead_after_oom_on_the_same_pod_is_caused_by_it(self) -> None:
        """The engine-dead group names the OOM group as its cause."""
        grouper = IncidentGrouper(settings())
        oom, dead = grouper.feed([detection(OOM, 0), detection(DEAD, 1)], now=0.0)
        assert dead.caused_by and oom.group
        assert (oom.group.key, "cuda/torch-oom") == (dead.caused_by.key, dead.caused_by.signature_id)
        assert None is oom.caused_by

    def test_no_link_across_pods_or_beyond_the_window(self) -> None:
        """Another pod's OOM, or one older than causal_window_seconds, is not a cause."""
        grouper = IncidentGrouper(settings(causal_window_seconds=5.0, quiet_seconds=600.0))
        grouper.feed([detection(OOM, 0, pod="a")], now=0.0)
        (other_pod,) = grouper.feed([detection(DEAD, 1, pod="b")], now=1.0)
        grouper.feed([detection(OOM, 2, pod="c")], now=0.0)
        (too_late,) = grouper.feed([detection(DEAD, 3, pod="c")], now=10.0)
        assert (None, None) == (other_pod.caused_by, too_late.caused_by)


class TestEventsCarryTheirOccurrence:
    def test_an_update_carries_the_latest_lines_event_and_matches(self) -> None:
        """The detection of a group event is the reported occurrence's event and matches."""
        grouper = Grouper(settings())
        grouper.feed([detection(OOM, 0), detection(OOM, 1)], now=0.0)
        (event,) = grouper.tick(now=5.0)
        assert (1, 1, "llm/vllm-cuda-oom-during-prefill") == (
            event.event.origin.offset, event.incident.source.offset, event.matches[0].signature.id)
