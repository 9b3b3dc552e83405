"""Command-line options shared by ``run``, ``scan`` and ``catalog warm``: which catalog, which cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from logsig.config import Settings


def add_catalog_args(parser: argparse.ArgumentParser) -> None:
    """``--catalog PATH`` (repeatable) and ``--no-builtin``."""
    parser.add_argument("--catalog", action="append", default=[], metavar="PATH",
                        help="extra catalog file or directory (repeatable), added to the built-in one")
    parser.add_argument("--no-builtin", action="store_true", help="do not load the built-in catalog")


def add_cache_arg(parser: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR``, overriding ``catalog.cache_dir``."""
    parser.add_argument("--cache-dir", type=Path, metavar="DIR",
                        help="where compiled catalogs are kept between runs (catalog.cache_dir)")


def with_catalog_args(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` with ``--catalog`` paths added, ``--no-builtin`` and ``--cache-dir`` applied."""
    update: dict[str, object] = {}
    extra = [Path(p) for p in getattr(args, "catalog", [])]
    if extra or getattr(args, "no_builtin", False):
        update["paths"] = [*settings.catalog.paths, *extra]
        update["builtin"] = settings.catalog.builtin and not args.no_builtin
    if getattr(args, "cache_dir", None) is not None:
        update["cache_dir"] = args.cache_dir
    if not update:
        return settings
    return settings.model_copy(update={"catalog": settings.catalog.model_copy(update=update)})
