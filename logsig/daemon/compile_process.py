"""A reload's catalog compile in a child process, so the daemon's interpreter lock stays with its event loop.

Compiled in a thread of the daemon's own process, a reload holds the interpreter lock for most
of its work: loading and validating the records (pydantic, Python ``re`` and the backtracking
check of every regex) and translating the regexes are Python code, and on a loaded machine each
hand-over of the lock from the compiling thread waits for that thread to be scheduled again, so
the event loop stalls (``bench/bench_reload.py``). In a child process none of that touches the
daemon's lock; the daemon only deserialises the answer.

:func:`prepare` runs in the child, a fresh interpreter started with the ``spawn`` method (it
inherits no socket, thread or event loop of the daemon): it loads the catalog, compiles it
(reading or writing the on-disk compile cache when one is configured) and answers a
:class:`Prepared`. :func:`in_child` runs a preparer in a one-off child process and answers its
result pickled in slices of :data:`SLICE_SIGNATURES` signatures, so that the caller chooses when
to unpickle it (:func:`unpickle`, with the garbage collector held off: about 0.1 s for 5,000
signatures, the lock handed over between slices). :func:`engine_from` makes the Engine from it.

Errors: what the preparer raises in the child is raised again by :func:`in_child`
(:class:`~logsig.errors.CatalogError` with its problems, ``hyperscan.error``, ``OSError``, ...); a
child that dies (killed, out of memory, a crash in a native library) raises
``concurrent.futures.process.BrokenProcessPool``.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from logsig.config import CatalogSettings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.compiled import compile_catalog, restore, serialise
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature

START_METHOD = "spawn"
"""How the child starts: a fresh interpreter, nothing of the daemon's state copied (not ``fork``). As
with any ``spawn`` child, a program that embeds the watcher guards its main module
(``if __name__ == "__main__":``); logsig's entry points do."""
SLICE_SIGNATURES = 250
"""Signatures per pickled slice of the answer (unpickling one takes a few milliseconds)."""


@dataclass(frozen=True)
class Prepared:
    """A catalog loaded and compiled in the child.

    signatures: in catalog order; payload: the compiled form
    (:func:`~logsig.matchers.engine.compiled.serialise`); from_disk: whether the child read it from
    the on-disk compile cache; cache_error: why the child could not write that cache, if it could not;
    warnings: the catalog's warnings (:attr:`~logsig.matchers.catalog.loader.Catalog.warnings`), as text.
    """

    signatures: tuple[Signature, ...]
    payload: bytes
    from_disk: bool = False
    cache_error: str | None = None
    warnings: tuple[str, ...] = ()


Preparer = Callable[[CatalogSettings, int], Prepared]
"""``(catalog settings, max_message_bytes) -> Prepared``; a module-level function (the child imports it by name)."""


def prepare(settings: CatalogSettings, max_message_bytes: int) -> Prepared:
    """Load and compile the catalog ``settings`` describe. Raises CatalogError listing every problem."""
    catalog = load_catalog(settings.paths, builtin=settings.builtin)
    cache = settings.compile_cache()
    compiled = compile_catalog(pairs(catalog.signatures), max_message_bytes, cache)
    return Prepared(catalog.signatures, serialise(compiled), compiled.from_disk,
                    None if cache is None else cache.last_error, tuple(str(w) for w in catalog.warnings))


def pairs(signatures: Sequence[Signature]) -> list[tuple[str, str]]:
    """The (id, regex) pairs a catalog is compiled from, in catalog order."""
    return [(sig.id, sig.regex) for sig in signatures]


def _pickled(preparer: Preparer, settings: CatalogSettings, max_message_bytes: int) -> list[bytes]:
    """In the child: ``preparer``'s answer, pickled: first the rest, then its signatures in slices."""
    prepared = preparer(settings, max_message_bytes)
    signatures = prepared.signatures
    slices = [signatures[i:i + SLICE_SIGNATURES] for i in range(0, len(signatures), SLICE_SIGNATURES)]
    return [pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
            for part in [dataclasses.replace(prepared, signatures=()), *slices]]


def in_child(preparer: Preparer, settings: CatalogSettings, max_message_bytes: int) -> list[bytes]:
    """``preparer(settings, max_message_bytes)`` computed in a new child process, pickled in parts
    (read them with :func:`unpickle`).

    Blocks until the child answers (call it from a worker thread). Raises what the preparer
    raised, or BrokenProcessPool if the child died.
    """
    context = multiprocessing.get_context(START_METHOD)
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_pickled, preparer, settings, max_message_bytes).result()


def unpickle(parts: Sequence[bytes]) -> Prepared:
    """The :class:`Prepared` of :func:`in_child`'s parts, a part at a time, letting other threads
    take the interpreter lock between parts. Raises ValueError for no parts."""
    if not parts:
        raise ValueError("no answer from the catalog compile")
    head: Prepared = pickle.loads(parts[0])
    signatures = list(head.signatures)
    for part in parts[1:]:
        signatures.extend(pickle.loads(part))
        time.sleep(0)  # hands the lock over to a waiting thread (the event loop)
    return dataclasses.replace(head, signatures=tuple(signatures))


def engine_from(prepared: Prepared, max_message_bytes: int, running: Engine | None) -> Engine:
    """The Engine for ``prepared``, deserialised, not compiled; the confirmers of ``running`` (the
    engine it replaces) are kept for unchanged regexes. Raises ValueError if the payload belongs
    to other signatures, limits or versions."""
    reuse = running.compiled.confirmers if running is not None else ()
    restore(prepared.payload, pairs(prepared.signatures), max_message_bytes, reuse=reuse,
            from_disk=prepared.from_disk)
    return Engine(prepared.signatures, max_message_bytes=max_message_bytes)
