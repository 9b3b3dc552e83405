"""``logsig catalog warm``: compile the catalog ``run`` would load into the on-disk compile cache.

Used at image build time (the Dockerfile warms the built-in catalog) and before a deploy, so
that ``logsig run`` and ``logsig scan`` start by reading the compiled catalog instead of
compiling it. The cache key covers the catalog, ``matching.max_message_bytes`` and the library
versions, so warm with the settings the daemon will run with.
"""

from __future__ import annotations

import argparse
import sys

from logsig.cli.common import with_catalog_args
from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine


def cmd_warm(args: argparse.Namespace) -> int:
    """Compile (or verify) the cached catalog; print its entry. Exit 2 when the cache is off or unwritable."""
    settings = with_catalog_args(load_settings(args.config), args)
    cache = settings.catalog.compile_cache()
    if cache is None:
        print("logsig: the compile cache is off (catalog.cache_max_entries is 0)", file=sys.stderr)
        return 2
    catalog = load_catalog(settings.catalog.paths, builtin=settings.catalog.builtin)
    engine = Engine(catalog.signatures, max_message_bytes=settings.matching.max_message_bytes, cache=cache)
    compiled = engine.compiled
    if cache.last_error is not None:
        print(f"logsig: {cache.last_error}", file=sys.stderr)
        return 2
    state = "already cached" if compiled.from_disk else f"compiled in {compiled.compile_seconds:.2f} s"
    print(f"{len(catalog.signatures)} signatures {state}: {cache.path(compiled.fingerprint)}")
    return 0
