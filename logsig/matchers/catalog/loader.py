"""Loading signature catalogs from files and directories.

A catalog source is a JSON or YAML file holding one record or a list of records, or a directory
searched recursively for ``*.json``, ``*.yaml`` and ``*.yml`` files (sorted by path). A file named
``*.examples.yaml`` is a sidecar ``{id: ..., examples: {...}}`` whose examples are merged into the
record with that id, so a record can stay byte-for-byte as its author wrote it.

The built-in catalog (package data under ``logsig/matchers/catalog/builtin``) loads first; user catalogs
add records or override built-in ones by id. Within one layer (built-in, or all user sources
together) an id may appear only once.

Errors: :func:`load_catalog` validates everything and raises one
:class:`~logsig.errors.CatalogError` listing every problem (file, record id, field, reason):
records the :class:`~logsig.matchers.signature.Signature` model rejects, regexes Python cannot
compile, regexes that could backtrack exponentially on the engine's fallback
(:func:`~logsig.matchers.engine.hazards.backtracking_hazard`, field ``regex``), duplicate ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from logsig.errors import CatalogError, CatalogProblem
from logsig.matchers.engine.hazards import backtracking_hazard
from logsig.matchers.signature import Signature

SUFFIXES = (".json", ".yaml", ".yml")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it: ~10x faster
SIDECAR_SUFFIX = ".examples.yaml"


@dataclass(frozen=True)
class Catalog:
    """A validated catalog: ``signatures`` in load order, ``files`` maps id -> the file it came from."""

    signatures: tuple[Signature, ...]
    files: dict[str, str] = field(default_factory=dict)

    def by_id(self) -> dict[str, Signature]:
        """``{signature.id: signature}``."""
        return {sig.id: sig for sig in self.signatures}


def builtin_path() -> Path:
    """The directory of the built-in catalog inside the installed package."""
    return Path(str(resources.files("logsig.matchers.catalog") / "builtin"))


def catalog_files(path: Path) -> list[Path]:
    """The catalog files of ``path`` (itself if a file), sorted; sidecars last.

    Hidden files and directories are skipped: a Kubernetes ConfigMap volume holds each file
    twice, under ``..data/`` and a timestamped ``..2024_...`` directory.
    """
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES
             and not any(part.startswith(".") for part in p.relative_to(path).parts)]
    return sorted(found, key=lambda p: (p.name.endswith(SIDECAR_SUFFIX), str(p)))


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.load(text, Loader=_LOADER)


def _records(path: Path, problems: list[CatalogProblem]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(label, raw record)`` for each record of ``path``; parse errors go to ``problems``."""
    try:
        data = _read(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as error:
        problems.append(CatalogProblem(str(path), "", "", f"cannot read: {error}"))
        return
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            label = f"#{index}"
            problems.append(CatalogProblem(str(path), label, "", "record is not a mapping"))
            continue
        yield str(item.get("id") or f"#{index}"), item


def _validate(path: Path, label: str, raw: dict[str, Any],
              problems: list[CatalogProblem]) -> Signature | None:
    try:
        sig = Signature.model_validate(raw)
    except ValidationError as error:
        for err in error.errors():
            loc = ".".join(str(part) for part in err["loc"])
            problems.append(CatalogProblem(str(path), label, loc, err["msg"]))
        return None
    try:
        re.compile(sig.regex)
    except re.error as error:
        problems.append(CatalogProblem(str(path), label, "regex", f"does not compile: {error}"))
        return None
    hazard = backtracking_hazard(sig.regex)
    if hazard is not None:
        problems.append(CatalogProblem(str(path), label, "regex", hazard))
        return None
    return sig


def _load_layer(paths: Iterable[Path], problems: list[CatalogProblem]) -> dict[str, tuple[Signature, str]]:
    """Load one layer: ``{id: (signature, file)}``; duplicates within the layer are problems."""
    layer: dict[str, tuple[Signature, str]] = {}
    sidecars: list[tuple[Path, dict[str, Any]]] = []
    for root in paths:
        if not root.exists():
            problems.append(CatalogProblem(str(root), "", "", "no such file or directory"))
            continue
        for path in catalog_files(root):
            for label, raw in _records(path, problems):
                if path.name.endswith(SIDECAR_SUFFIX):
                    sidecars.append((path, raw))
                    continue
                sig = _validate(path, label, raw, problems)
                if sig is None:
                    continue
                if sig.id in layer:
                    first = layer[sig.id][1]
                    problems.append(CatalogProblem(str(path), sig.id, "id", f"duplicate id (first in {first})"))
                    continue
                layer[sig.id] = (sig, str(path))
    for path, raw in sidecars:
        _merge_sidecar(path, raw, layer, problems)
    return layer


def _merge_sidecar(path: Path, raw: dict[str, Any], layer: dict[str, tuple[Signature, str]],
                   problems: list[CatalogProblem]) -> None:
    sig_id = str(raw.get("id", ""))
    if sig_id not in layer:
        problems.append(CatalogProblem(str(path), sig_id or "#0", "id", "sidecar names no known record"))
        return
    sig, origin = layer[sig_id]
    merged = {**sig.to_record(), "examples": raw.get("examples", {})}
    updated = _validate(path, sig_id, merged, problems)
    if updated is not None:
        layer[sig_id] = (updated, origin)


def load_catalog(paths: Sequence[Path | str] = (), *, builtin: bool = True) -> Catalog:
    """Load the built-in catalog (if ``builtin``) and then ``paths``, user records overriding by id.

    Raises:
        CatalogError: listing every problem found, if there is any.
    """
    problems: list[CatalogProblem] = []
    merged: dict[str, tuple[Signature, str]] = {}
    if builtin:
        merged.update(_load_layer([builtin_path()], problems))
    merged.update(_load_layer([Path(p) for p in paths], problems))
    if problems:
        raise CatalogError(problems)
    return Catalog(
        signatures=tuple(sig for sig, _ in merged.values()),
        files={sig_id: file for sig_id, (_, file) in merged.items()},
    )
