"""A catalog compiled for both phases, cached by fingerprint so that reloads reuse it.

:func:`compile_catalog` translates every regex, builds the phase-one database and one phase-two
:class:`~logsig.matchers.engine.confirm.Confirmer` per signature. The result depends only on the
(id, regex) pairs in order and ``max_message_bytes``; their SHA-256 is the cache key, and the
last :data:`CACHE_SIZE` results are kept, so building an Engine for an unchanged catalog (the
reload path) costs a hash, not a compile.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from logsig.matchers.engine.confirm import FALLBACK_WINDOW_CHARS, Confirmer
from logsig.matchers.engine.prefilter import Prefilter
from logsig.matchers.regex.translate import Translation, translate

CACHE_SIZE = 4
ENGINE_VERSION = 1
"""Part of the fingerprint; raise it when the compiled form changes meaning."""


@dataclass(frozen=True)
class Compiled:
    """Everything matching needs for one catalog; shared by every Engine with its fingerprint.

    translations / confirmers: one per signature, in catalog order; compile_seconds: wall time
    of the compile that produced it.
    """

    fingerprint: str
    translations: tuple[Translation, ...]
    confirmers: tuple[Confirmer, ...]
    prefilter: Prefilter
    compile_seconds: float


_CACHE: OrderedDict[str, Compiled] = OrderedDict()
_LOCK = threading.Lock()


def fingerprint(pairs: Sequence[tuple[str, str]], max_message_bytes: int) -> str:
    """SHA-256 hex of the (id, regex) pairs, ``max_message_bytes`` and the engine version."""
    text = json.dumps([ENGINE_VERSION, max_message_bytes, FALLBACK_WINDOW_CHARS, list(pairs)])
    return hashlib.sha256(text.encode()).hexdigest()


def compile_catalog(pairs: Sequence[tuple[str, str]], max_message_bytes: int) -> Compiled:
    """The compiled form of ``pairs`` ((id, regex) in catalog order), from the cache if there.

    Raises ``re.error`` if a regex does not parse as Python ``re`` syntax.
    """
    key = fingerprint(pairs, max_message_bytes)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    compiled = _build(key, [regex for _, regex in pairs])
    with _LOCK:
        _CACHE[key] = compiled
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


def _build(key: str, regexes: list[str]) -> Compiled:
    started = time.perf_counter()
    translations = tuple(translate(regex) for regex in regexes)
    confirmers = tuple(Confirmer(t, re.compile(t.source)) for t in translations)
    prefilter = Prefilter([t.prefilter for t in translations])
    return Compiled(key, translations, confirmers, prefilter, time.perf_counter() - started)


def clear_cache() -> None:
    """Forget every cached catalog (tests, and memory checks in the benchmark)."""
    with _LOCK:
        _CACHE.clear()
