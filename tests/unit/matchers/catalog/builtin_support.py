"""The built-in catalog and its compiled engine, loaded once for the catalog's golden tests."""

from __future__ import annotations

from functools import cache

from logsig.matchers.catalog.loader import Catalog, load_catalog
from logsig.matchers.engine.engine import Engine


@cache
def builtin_catalog() -> Catalog:
    """The built-in catalog."""
    return load_catalog()


@cache
def builtin_engine() -> Engine:
    """The built-in catalog, compiled."""
    return Engine(builtin_catalog().signatures)
