"""The Space-Saving top-K of unclassified templates."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from logsig.discovery.topk import MAX_POD_CHARS, TopK


def feed(topk: TopK, keys: list[str], start: float = 1000.0) -> None:
    """Add each key once, one second apart, with the key as its template and line."""
    for i, key in enumerate(keys):
        topk.add(key, f"template {key}", line=f"line {key}", pod=f"pod-{i % 3}", seen_at=start + i)


class TestTopK:
    """TopK counts exactly below capacity and keeps heavy hitters, with bounds, above it."""

    def test_exact_below_capacity(self) -> None:
        """With fewer templates than capacity, counts are exact and errors zero."""
        topk = TopK(capacity=10)
        feed(topk, ["a", "b", "a", "c", "a", "b"])
        assert [("a", 3, 0), ("b", 2, 0), ("c", 1, 0)] == [(t.fingerprint, t.count, t.error) for t in topk.top()]

    def test_details_of_an_entry(self) -> None:
        """An entry keeps its template, first example, first and last seen, pods and signature."""
        topk = TopK(capacity=4)
        topk.add("f", "T <NUM>", line="T 1", pod="vllm-0", seen_at=20.0, signature_id="generic/python-exception")
        topk.add("f", "T <NUM>", line="T 2", pod="vllm-1", seen_at=10.0)
        topk.add("f", "T <NUM>", line="T 3", pod="vllm-0", seen_at=30.0)
        entry = topk.get("f")
        assert entry is not None
        assert ("T <NUM>", "T 1", 10.0, 30.0, ("vllm-0", "vllm-1"), False, "generic/python-exception") == (
            entry.template, entry.example, entry.first_seen, entry.last_seen, entry.pods, entry.pods_truncated,
            entry.signature_id)

    def test_size_never_exceeds_capacity(self) -> None:
        """Ten thousand distinct templates leave at most ``capacity`` entries."""
        topk = TopK(capacity=50)
        feed(topk, [f"k{i}" for i in range(10_000)])
        assert (50, 10_000) == (len(topk), topk.total)

    def test_heavy_hitters_survive_a_flood_of_distinct_templates(self) -> None:
        """Templates seen more than total/capacity times stay tracked and ranked first."""
        rng = random.Random(7)
        keys = [f"noise{i}" for i in range(20_000)] + ["hot"] * 3000 + ["warm"] * 1500
        rng.shuffle(keys)
        topk = TopK(capacity=20)
        feed(topk, keys)
        assert ["hot", "warm"] == [t.fingerprint for t in topk.top(2)]

    def test_count_bounds_hold(self) -> None:
        """For every tracked template, count - error <= true count <= count (Zipf-like stream)."""
        rng = random.Random(3)
        keys = [f"k{int(rng.paretovariate(1.2))}" for _ in range(30_000)]
        topk = TopK(capacity=30)
        feed(topk, keys)
        truth = Counter(keys)
        assert [] == [t.fingerprint for t in topk.top() if not t.count - t.error <= truth[t.fingerprint] <= t.count]

    def test_pods_are_bounded(self) -> None:
        """Pods beyond ``max_pods`` are not kept; ``pods_truncated`` says they were seen."""
        topk = TopK(capacity=2, max_pods=2)
        for pod in ("a", "b", "c", "a"):
            topk.add("f", "T", line="T", pod=pod, seen_at=1.0)
        entry = topk.get("f")
        assert entry is not None
        assert (("a", "b"), True) == (entry.pods, entry.pods_truncated)

    def test_texts_are_cut(self) -> None:
        """Template, example and pod names are cut to their limits."""
        topk = TopK(capacity=1, max_text_chars=10)
        topk.add("f", "t" * 50, line="l" * 50, pod="p" * 300, seen_at=1.0)
        entry = topk.get("f")
        assert entry is not None
        assert (10, 10, MAX_POD_CHARS) == (len(entry.template), len(entry.example), len(entry.pods[0]))

    def test_unknown_fingerprint(self) -> None:
        """get() of an untracked fingerprint is None."""
        assert TopK().get("nope") is None

    def test_bad_capacity(self) -> None:
        """A capacity below 1 is refused with the value in the message."""
        with pytest.raises(ValueError, match=r"capacity \(0\)"):
            TopK(capacity=0)
