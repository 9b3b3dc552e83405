"""``logsig catalog check``: the pre-deploy gate, as lists of problems (pure; the CLI prints them).

The gate applies the rules ``scan``, ``run`` and a reload load a catalog by
(:mod:`~logsig.matchers.catalog.rules`, through :func:`~logsig.matchers.catalog.loader.load_catalog`):
what the loader refuses (files that cannot be read, records the model rejects, regexes that do not
compile or could backtrack exponentially, duplicate ids, directories holding no catalog file) and
the record rules (ids, missing root cause or category, placeholders, misspelt fields, regexes
matching the empty string or the benign sample). Every problem of every file and record is an
error; a user record overriding a built-in id is a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from logsig.errors import CatalogProblem
from logsig.matchers.catalog.loader import Catalog, builtin_path, load_catalog, override_warnings, read_layer
from logsig.matchers.catalog.rules import PLACEHOLDER, benign_problems, builtin_benign, record_problems

__all__ = ["PLACEHOLDER", "GateReport", "builtin_benign", "check", "gate_problems", "record_problems"]


@dataclass(frozen=True)
class GateReport:
    """What ``catalog check`` found: the ``catalog`` that loaded (records with problems included, so
    that all are listed), its ``errors`` (the gate fails) and ``warnings`` (it passes)."""

    catalog: Catalog
    errors: list[CatalogProblem]
    warnings: list[CatalogProblem]


def check(paths: Sequence[Path], site_benign: Sequence[str] = ()) -> GateReport:
    """Gate the catalog files of ``paths`` as a user layer (the built-in catalog when none).

    site_benign: a site's own benign lines (``--benign FILE``); any one of them matched is an error.
    """
    catalog, errors = read_layer(list(paths) or [builtin_path()], site_benign=site_benign)
    warnings = override_warnings(load_catalog(rules=False), catalog) if paths else []
    return GateReport(catalog, errors, warnings)


def gate_problems(catalog: Catalog, benign: Sequence[str], *, only: set[str] | None = None) -> list[CatalogProblem]:
    """Every rule problem of ``catalog``'s signatures (those in ``only``, if given), in catalog order.

    benign: log lines that are not failures; file names come from ``catalog.files``.
    """
    checked = [sig for sig in catalog.signatures if only is None or sig.id in only]
    problems: list[CatalogProblem] = []
    for sig in checked:
        file = catalog.files.get(sig.id, "?")
        problems.extend(CatalogProblem(file, sig.id, field, message) for field, message in record_problems(sig))
    for sig_id, field, message in benign_problems(checked, benign):
        problems.append(CatalogProblem(catalog.files.get(sig_id, "?"), sig_id, field, message))
    return problems
