"""A catalog compiled for both phases, cached in memory and (optionally) on disk.

:func:`compile_catalog` translates every regex, builds the phase-one database and one phase-two
:class:`~logsig.matchers.engine.confirm.Confirmer` per signature. The result depends only on the
(id, regex) pairs in order, ``max_message_bytes`` and the versions of what compiles it
(:func:`versions`: logsig and the source of the modules that compile, Python, hyperscan and
Vectorscan, google-re2, the machine); their
SHA-256 is the cache key. The last :data:`CACHE_SIZE` results are kept in memory, so building an
Engine for an unchanged catalog (the reload path) costs a hash, not a compile.

Given a :class:`~logsig.matchers.engine.store.CompileCache`, a compiled catalog is also written
to disk (the translations and the serialised Vectorscan database; RE2 and Python ``re`` objects
are compiled lazily on first use) and read back by the next process. An entry is used only if
it verifies (digest, :data:`FORMAT`, the key and the versions inside it, one translation per
pair with the pair's regex, a database that deserialises); anything else is a miss: the catalog
is compiled and the entry rewritten.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import platform
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hyperscan
import msgpack

from logsig import __version__
from logsig.matchers.engine import confirm
from logsig.matchers.engine import prefilter as prefilter_module
from logsig.matchers.engine.confirm import FALLBACK_WINDOW_CHARS, Confirmer
from logsig.matchers.engine.prefilter import Prefilter, PrefilterState
from logsig.matchers.engine.store import CompileCache
from logsig.matchers.regex import charsets, distribute, writer
from logsig.matchers.regex import translate as translate_module
from logsig.matchers.regex.translate import Translation, translate

CACHE_SIZE = 4
ENGINE_VERSION = 2
"""Part of the fingerprint; raise it when the compiled form changes meaning."""
FORMAT = 2
"""Layout of an on-disk entry's payload."""


@dataclass(frozen=True)
class Compiled:
    """Everything matching needs for one catalog; shared by every Engine with its fingerprint.

    translations / confirmers: one per signature, in catalog order; compile_seconds: wall time
    of the compile (or disk read) that produced it; from_disk: whether it was read from the
    on-disk cache rather than compiled.
    """

    fingerprint: str
    translations: tuple[Translation, ...]
    confirmers: tuple[Confirmer, ...]
    prefilter: Prefilter
    compile_seconds: float
    from_disk: bool = False


_CACHE: OrderedDict[str, Compiled] = OrderedDict()
_CODE = (sys.modules[__name__], prefilter_module, confirm, charsets, distribute, writer, translate_module)
_LOCK = threading.Lock()


@functools.cache
def versions() -> dict[str, str]:
    """Versions of everything the compiled form depends on (part of the fingerprint)."""
    return {
        "engine": str(ENGINE_VERSION), "logsig": __version__, "code": _code_digest(), "python": sys.version,
        "hyperscan": _distribution("hyperscan"), "vectorscan": _library_version(),
        "google-re2": _distribution("google-re2"), "machine": platform.machine(),
    }


def _code_digest() -> str:
    """SHA-256 of the modules that decide the compiled form, so an edited engine never reads old entries."""
    digest = hashlib.sha256()
    for module in _CODE:
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()


def _library_version() -> str:
    """The Vectorscan library's ``hs_version()`` (the extension module's ``__version__``)."""
    return str(getattr(getattr(hyperscan, "_hs_ext", None), "__version__", ""))


def _distribution(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def fingerprint(pairs: Sequence[tuple[str, str]], max_message_bytes: int) -> str:
    """SHA-256 hex of the (id, regex) pairs, ``max_message_bytes`` and :func:`versions`."""
    text = json.dumps([versions(), max_message_bytes, FALLBACK_WINDOW_CHARS, list(pairs)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def compile_catalog(pairs: Sequence[tuple[str, str]], max_message_bytes: int,
                    cache: CompileCache | None = None) -> Compiled:
    """The compiled form of ``pairs`` ((id, regex) in catalog order): from memory, from
    ``cache`` if it holds a valid entry, else compiled (and written to ``cache``).

    Raises ``re.error`` if a regex does not parse as Python ``re`` syntax, ``hyperscan.error``
    if Vectorscan fails in a way bisection cannot isolate.
    """
    key = fingerprint(pairs, max_message_bytes)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    regexes = [regex for _, regex in pairs]
    compiled = _read(cache, key, regexes) if cache is not None else None
    if compiled is None:
        compiled = _build(key, regexes)
        if cache is not None:
            cache.write(key, serialise(compiled))
    _remember(compiled)
    return compiled


def restore(payload: bytes, pairs: Sequence[tuple[str, str]], max_message_bytes: int, *,
            reuse: Sequence[Confirmer] = (), from_disk: bool = False) -> Compiled:
    """The compiled form of ``pairs`` from ``payload`` (:func:`serialise`'s bytes, made by another
    process), kept in memory so that :func:`compile_catalog` of the same pairs returns it at once.

    Verified as an on-disk entry is (format, key, versions, one translation per regex).
    ``reuse``: confirmers of a running catalog, taken over for every unchanged regex together
    with their compiled RE2 and Python patterns (so matching after a reload does not compile
    them again). Raises ValueError (or a msgpack error) for a payload of other pairs, limits or
    versions, ``hyperscan.error`` if the database does not deserialise.
    """
    key = fingerprint(pairs, max_message_bytes)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    started = time.perf_counter()
    translations, state = _decode(payload, key, [regex for _, regex in pairs])
    prefilter = Prefilter.restore(state)
    warm = {confirmer.translation: confirmer for confirmer in reuse}
    confirmers = tuple(warm[t] if t in warm else Confirmer(t) for t in translations)
    compiled = Compiled(key, translations, confirmers, prefilter, time.perf_counter() - started, from_disk)
    _remember(compiled)
    return compiled


def _remember(compiled: Compiled) -> None:
    """Keep ``compiled`` in memory, the least recently used beyond :data:`CACHE_SIZE` dropped."""
    with _LOCK:
        _CACHE[compiled.fingerprint] = compiled
        _CACHE.move_to_end(compiled.fingerprint)
        evicted = [_CACHE.popitem(last=False)[1] for _ in range(len(_CACHE) - CACHE_SIZE)]
    _release(evicted)


def _release(evicted: list[Compiled]) -> None:
    """Drop evicted catalogs a piece at a time: freeing thousands of confirmers in one cascade
    holds the GIL for tens of milliseconds, which would pause an event loop in another thread."""
    while evicted:
        parts: list[object] = [*evicted[-1].confirmers, *evicted[-1].translations]
        evicted.pop()
        while parts:
            parts.pop()


def _build(key: str, regexes: list[str]) -> Compiled:
    started = time.perf_counter()
    translations = tuple(translate(regex) for regex in regexes)
    confirmers = tuple(Confirmer(t) for t in translations)
    prefilter = Prefilter([t.prefilter_parts for t in translations])
    return Compiled(key, translations, confirmers, prefilter, time.perf_counter() - started)


def serialise(compiled: Compiled) -> bytes:
    """``compiled`` as bytes (msgpack: translations, serialised Vectorscan database, :func:`versions`),
    as kept on disk and read back by :func:`restore` or the next :func:`compile_catalog`."""
    state = compiled.prefilter.state()
    return bytes(msgpack.packb({
        "format": FORMAT, "key": compiled.fingerprint, "versions": versions(),
        "translations": [[t.source, t.re2, t.prefilter, list(t.captures), list(t.unsupported), sorted(t.caveats),
                          list(t.prefilter_parts)] for t in compiled.translations],
        "database": state.database, "always": list(state.always), "prefilter_mode": list(state.prefilter_mode),
        "failures": [[index, reason] for index, reason in state.failures.items()],
    }, use_bin_type=True))


def _read(cache: CompileCache, key: str, regexes: list[str]) -> Compiled | None:
    """The entry for ``key`` if it verifies; a damaged or stale one is removed."""
    started = time.perf_counter()
    payload = cache.read(key)
    if payload is None:
        return None
    try:
        translations, state = _decode(payload, key, regexes)
        prefilter = Prefilter.restore(state)
    except Exception:  # whatever a damaged entry raises, it is rebuilt
        cache.discard(key)
        return None
    confirmers = tuple(Confirmer(t) for t in translations)
    return Compiled(key, translations, confirmers, prefilter, time.perf_counter() - started, from_disk=True)


def _decode(payload: bytes, key: str, regexes: list[str]) -> tuple[tuple[Translation, ...], PrefilterState]:
    """Translations and prefilter state of a payload. Raises ValueError if it does not belong to ``key``."""
    data: dict[str, Any] = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    if (data["format"], data["key"], data["versions"]) != (FORMAT, key, versions()):
        raise ValueError("entry of another catalog, format or version")
    translations = tuple(
        Translation(str(source), re2, prefilter, tuple(captures), tuple(unsupported), frozenset(caveats), tuple(parts))
        for source, re2, prefilter, captures, unsupported, caveats, parts in data["translations"])
    if [t.source for t in translations] != regexes:
        raise ValueError("entry's regexes differ from the catalog's")
    state = PrefilterState(data["database"], tuple(data["always"]), tuple(data["prefilter_mode"]),
                           {int(index): str(reason) for index, reason in data["failures"]})
    return translations, state


def clear_cache() -> None:
    """Forget every catalog cached in memory (tests, and memory checks in the benchmark)."""
    with _LOCK:
        _CACHE.clear()
