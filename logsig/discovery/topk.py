"""The K most frequent unclassified templates of a stream, in memory bounded whatever the stream.

Space-Saving (Metwally, Agrawal, El Abbadi, "Efficient Computation of Frequent and Top-k Elements
in Data Streams", ICDT 2005) over template fingerprints, kept as a Stream-Summary: entries sit in
buckets of equal count, and the lowest bucket is known, so every ``add`` is O(1). When ``capacity``
templates are tracked and a new one arrives, the oldest entry of the lowest bucket gives up its
place; the newcomer starts at that count plus one and records that count as its ``error``. Hence,
for every tracked template, ``count - error <= true count <= count``, and any template seen more
than ``total / capacity`` times is tracked.

Each entry also keeps what an operator needs to triage: the template, one example line, first and
last seen (Unix seconds, from the record), the generic signature that matched first, and up to
``max_pods`` pod names (first seen first; ``pods_truncated`` says more were seen). Texts are cut
to ``max_text_chars``. So memory is at most ``capacity * (2 * max_text_chars + max_pods * 253)``
characters plus a fixed cost per entry, however many distinct templates the stream carries
(measured in ``bench/topk.py``).

Why not a library: Apache DataSketches' ``frequent_strings_sketch`` (the well-kept one) counts
with the same guarantees but does not say which items it drops, so the per-template details above
could not be kept bounded with it, and it brings numpy into the daemon (+18 MiB RSS, +0.12 s
import, measured on this code base).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TemplateCount", "TopK"]

MAX_POD_CHARS = 253
"""Longest Kubernetes object name (RFC 1123 subdomain)."""


@dataclass(frozen=True, slots=True)
class TemplateCount:
    """One tracked template: ``count`` (an upper bound) and ``error`` (``count - error`` is a lower one)."""

    fingerprint: str
    template: str
    count: int
    error: int
    first_seen: float
    last_seen: float
    example: str
    signature_id: str
    pods: tuple[str, ...]
    pods_truncated: bool


class _Entry:
    __slots__ = ("count", "error", "example", "first_seen", "last_seen", "pods", "pods_truncated",
                 "signature_id", "template")

    def __init__(self, template: str, example: str, signature_id: str, seen_at: float, count: int) -> None:
        self.count = count
        self.error = count - 1
        self.template = template
        self.example = example
        self.signature_id = signature_id
        self.first_seen = seen_at
        self.last_seen = seen_at
        self.pods: dict[str, None] = {}
        self.pods_truncated = False


class TopK:
    """Space-Saving top-K of template fingerprints; raises ValueError on a capacity below 1."""

    def __init__(self, capacity: int = 1000, *, max_pods: int = 8, max_text_chars: int = 1000) -> None:
        if capacity < 1 or max_pods < 0 or max_text_chars < 1:
            raise ValueError(f"capacity ({capacity}) and max_text_chars ({max_text_chars}) must be >= 1, "
                             f"max_pods ({max_pods}) >= 0")
        self.capacity = capacity
        self.max_pods = max_pods
        self.max_text_chars = max_text_chars
        self.total = 0
        self._entries: dict[str, _Entry] = {}
        self._buckets: dict[int, dict[str, None]] = {}
        self._min = 0

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, fingerprint: str, template: str, *, line: str, pod: str = "", seen_at: float,
            signature_id: str = "") -> None:
        """Count one occurrence of ``fingerprint`` (seen at ``seen_at``, Unix seconds) with its details."""
        self.total += 1
        entry = self._entries.get(fingerprint)
        if entry is None:
            entry = self._admit(fingerprint, template, line, signature_id, seen_at)
        else:
            self._move(fingerprint, entry.count, entry.count + 1)
            entry.count += 1
            entry.first_seen = min(entry.first_seen, seen_at)
            entry.last_seen = max(entry.last_seen, seen_at)
        if pod:
            self._add_pod(entry, pod)

    def top(self, n: int | None = None) -> list[TemplateCount]:
        """The ``n`` (default: all tracked) most frequent templates, highest count first."""
        ranked = sorted(self._entries.items(), key=lambda item: (-item[1].count, item[1].error, item[0]))
        return [_view(fp, entry) for fp, entry in ranked[:n]]

    def get(self, fingerprint: str) -> TemplateCount | None:
        """The tracked template with this fingerprint, or None."""
        entry = self._entries.get(fingerprint)
        return None if entry is None else _view(fingerprint, entry)

    def _admit(self, fingerprint: str, template: str, line: str, signature_id: str, seen_at: float) -> _Entry:
        """Track a new fingerprint, evicting the oldest entry of the lowest bucket when full."""
        count = 1
        if len(self._entries) >= self.capacity:
            low = self._buckets[self._min]
            evicted = next(iter(low))
            self._drop(evicted, self._min)
            del self._entries[evicted]
            count = self._min + 1
        cut = self.max_text_chars
        entry = _Entry(template[:cut], line[:cut], signature_id, seen_at, count)
        self._entries[fingerprint] = entry
        self._buckets.setdefault(count, {})[fingerprint] = None
        if not self._buckets.get(self._min) or count < self._min:
            self._min = count
        return entry

    def _move(self, fingerprint: str, old: int, new: int) -> None:
        """Move ``fingerprint`` from bucket ``old`` to bucket ``new`` (= old + 1)."""
        self._drop(fingerprint, old)
        self._buckets.setdefault(new, {})[fingerprint] = None
        if old == self._min and old not in self._buckets:
            self._min = new

    def _drop(self, fingerprint: str, count: int) -> None:
        """Remove ``fingerprint`` from bucket ``count``, and the bucket when it empties."""
        bucket = self._buckets[count]
        del bucket[fingerprint]
        if not bucket:
            del self._buckets[count]

    def _add_pod(self, entry: _Entry, pod: str) -> None:
        pod = pod[:MAX_POD_CHARS]
        if pod in entry.pods:
            return
        if len(entry.pods) < self.max_pods:
            entry.pods[pod] = None
        else:
            entry.pods_truncated = True


def _view(fingerprint: str, entry: _Entry) -> TemplateCount:
    return TemplateCount(fingerprint=fingerprint, template=entry.template, count=entry.count, error=entry.error,
                         first_seen=entry.first_seen, last_seen=entry.last_seen, example=entry.example,
                         signature_id=entry.signature_id, pods=tuple(entry.pods),
                         pods_truncated=entry.pods_truncated)
