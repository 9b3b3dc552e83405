"""Loading signature catalogs from files and directories.

A catalog source is a JSON or YAML file holding one record or a list of records, or a directory
searched recursively for ``*.json``, ``*.yaml`` and ``*.yml`` files (sorted by path). A file named
``*.examples.yaml`` is a sidecar ``{id: ..., examples: {...}}`` whose examples are merged into the
record with that id, so a record can stay byte-for-byte as its author wrote it.

The built-in catalog (package data under ``logsig/matchers/catalog/builtin``) loads first; user catalogs
add records or override built-in ones by id. Within one layer (built-in, or all user sources
together) an id may appear only once.

Errors: :func:`load_catalog` validates everything and raises one
:class:`~logsig.errors.CatalogError` listing every problem of every file and record (file, record
id, field, reason): files that cannot be read, records the
:class:`~logsig.matchers.signature.Signature` model rejects, regexes Python cannot compile, regexes
that could backtrack exponentially on the engine's fallback
(:func:`~logsig.matchers.engine.hazards.backtracking_hazard`, field ``regex``), duplicate ids, and
in user catalogs the rules of :mod:`~logsig.matchers.catalog.rules` (the ones ``catalog check``
applies) and directories holding no catalog file. A symbolic link named like a catalog file that
leads nowhere (dangling, or a loop) is a file that cannot be read. A user record overriding a built-in id is a
warning, kept in :attr:`Catalog.warnings`.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from logsig.errors import CatalogError, CatalogProblem
from logsig.matchers.catalog.rules import benign_problems, builtin_benign, field_problems, regex_problems
from logsig.matchers.engine.hazards import backtracking_hazard
from logsig.matchers.signature import Signature

SUFFIXES = (".json", ".yaml", ".yml")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it: ~10x faster
SIDECAR_SUFFIX = ".examples.yaml"
_EMPTY_DIRECTORY = "directory holds no catalog file (*.json, *.yaml, *.yml)"


@dataclass(frozen=True)
class Catalog:
    """A validated catalog: ``signatures`` in load order, ``files`` maps id -> the file it came from,
    ``warnings``: what loaded but should be said (a user record overriding a built-in id)."""

    signatures: tuple[Signature, ...]
    files: dict[str, str] = field(default_factory=dict)
    warnings: tuple[CatalogProblem, ...] = ()

    def by_id(self) -> dict[str, Signature]:
        """``{signature.id: signature}``."""
        return {sig.id: sig for sig in self.signatures}


def builtin_path() -> Path:
    """The directory of the built-in catalog inside the installed package."""
    return Path(str(resources.files("logsig.matchers.catalog") / "builtin"))


def catalog_files(path: Path) -> list[Path]:
    """The catalog files of ``path`` (itself if a file), sorted; sidecars last.

    Hidden files and directories are skipped: a Kubernetes ConfigMap volume holds each file
    twice, under ``..data/`` and a timestamped ``..2024_...`` directory. A symbolic link named like
    a catalog file that leads nowhere (dangling, or a loop) is listed too, so that reading it
    reports it.
    """
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("*") if (p.is_file() or _dead_link(p)) and p.suffix in SUFFIXES
             and not any(part.startswith(".") for part in p.relative_to(path).parts)]
    return sorted(found, key=lambda p: (p.name.endswith(SIDECAR_SUFFIX), str(p)))


def _dead_link(path: Path) -> bool:
    """Whether ``path`` is a symbolic link whose target cannot be reached (missing, or a loop)."""
    return path.is_symlink() and not path.exists()


def _link_problem(path: Path) -> str:
    """Why the symbolic link ``path`` cannot be read: a loop, or its missing target."""
    try:
        path.resolve(strict=True)
    except RuntimeError:
        return "symbolic link loop"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
    return f"dangling symbolic link (its target {os.readlink(path)} does not exist)"


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
        reason = _link_problem(path) if _dead_link(path) else str(error)
        problems.append(CatalogProblem(str(path), "", "", f"cannot read: {reason}"))
        return
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            label = f"#{index}"
            problems.append(CatalogProblem(str(path), label, "", "record is not a mapping"))
            continue
        yield str(item.get("id") or f"#{index}"), item


def _model(path: Path, label: str, raw: dict[str, Any], problems: list[CatalogProblem]) -> Signature | None:
    """The record as a Signature, or None with each field the model rejects in ``problems``."""
    try:
        return Signature.model_validate(raw)
    except ValidationError as error:
        for err in error.errors():
            loc = ".".join(str(part) for part in err["loc"])
            problems.append(CatalogProblem(str(path), label, loc, err["msg"]))
        return None


def _regex_problem(regex: str) -> str | None:
    """Why the engine cannot run ``regex`` (does not compile, could backtrack exponentially), or None."""
    try:
        re.compile(regex)
    except re.error as error:
        return f"does not compile: {error}"
    return backtracking_hazard(regex)


def _rejected_regex(path: Path, label: str, raw: dict[str, Any], problems: list[CatalogProblem]) -> None:
    """For a record the model rejected: its regex's own problem too, when the model took no issue with it,
    so that one fix does not only reveal the next."""
    regex = raw.get("regex")
    if not isinstance(regex, str) or not regex or any(p.field == "regex" for p in problems
                                                      if (p.file, p.record_id) == (str(path), label)):
        return
    hazard = _regex_problem(regex)
    if hazard is not None:
        problems.append(CatalogProblem(str(path), label, "regex", hazard))


def _validate(path: Path, label: str, raw: dict[str, Any], problems: list[CatalogProblem],
              rules: bool = False) -> Signature | None:
    """The record, or None when it cannot be matched; with ``rules``, every rule problem is listed too."""
    sig = _model(path, label, raw, problems)
    if sig is None:
        _rejected_regex(path, label, raw, problems)
        return None
    where = str(path), label
    if rules:
        problems.extend(CatalogProblem(*where, name, message) for name, message in field_problems(sig))
    hazard = _regex_problem(sig.regex)
    if hazard is not None:
        problems.append(CatalogProblem(*where, "regex", hazard))
        return None
    if rules:
        problems.extend(CatalogProblem(*where, name, message) for name, message in regex_problems(sig))
    return sig


@dataclass
class _Layer:
    """One layer being loaded: ``{id: (signature, file)}`` and the sidecars to merge last."""

    records: dict[str, tuple[Signature, str]] = field(default_factory=dict)
    sidecars: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)


def _load_layer(paths: Iterable[Path], problems: list[CatalogProblem], *, rules: bool = False,
                site_benign: Sequence[str] = ()) -> dict[str, tuple[Signature, str]]:
    """Load one layer: ``{id: (signature, file)}``; duplicates within the layer are problems.

    rules: also apply :mod:`~logsig.matchers.catalog.rules` (with ``site_benign`` lines) and refuse
    directories holding no catalog file.
    """
    layer = _Layer()
    for root in paths:
        if not root.exists():
            problems.append(CatalogProblem(str(root), "", "", "no such file or directory"))
            continue
        files = catalog_files(root)
        if rules and not files:
            problems.append(CatalogProblem(str(root), "", "", _EMPTY_DIRECTORY))
        for path in files:
            _load_file(path, layer, problems, rules)
    for path, raw in layer.sidecars:
        _merge_sidecar(path, raw, layer.records, problems)
    if rules:
        sigs = [sig for sig, _ in layer.records.values()]
        for sig_id, name, message in benign_problems(sigs, builtin_benign(), site_benign):
            problems.append(CatalogProblem(layer.records[sig_id][1], sig_id, name, message))
    return layer.records


def _load_file(path: Path, layer: _Layer, problems: list[CatalogProblem], rules: bool) -> None:
    for label, raw in _records(path, problems):
        if path.name.endswith(SIDECAR_SUFFIX):
            layer.sidecars.append((path, raw))
            continue
        sig = _validate(path, label, raw, problems, rules)
        if sig is None:
            continue
        if sig.id in layer.records:
            first = layer.records[sig.id][1]
            problems.append(CatalogProblem(str(path), sig.id, "id", f"duplicate id (first in {first})"))
            continue
        layer.records[sig.id] = (sig, str(path))


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


def read_layer(paths: Sequence[Path | str], *, site_benign: Sequence[str] = ()) -> tuple[Catalog, list[CatalogProblem]]:
    """One layer of ``paths`` with the rules applied, without raising: what loaded, and every problem.

    The ``catalog check`` view: ``site_benign`` are a site's own benign lines, none of which a
    signature may match.
    """
    problems: list[CatalogProblem] = []
    layer = _load_layer([Path(p) for p in paths], problems, rules=True, site_benign=site_benign)
    return _catalog(layer), problems


def override_warnings(base: Catalog, user: Catalog) -> list[CatalogProblem]:
    """A warning per record of ``user`` replacing a record of ``base`` (the built-in layer) with the same id."""
    known = base.by_id()
    return [CatalogProblem(user.files.get(sig_id, "?"), sig_id, "",
                           f"overrides the built-in signature ({base.files.get(sig_id, '?')})")
            for sig_id in user.by_id() if sig_id in known]


def _catalog(layer: dict[str, tuple[Signature, str]], warnings: Sequence[CatalogProblem] = ()) -> Catalog:
    return Catalog(signatures=tuple(sig for sig, _ in layer.values()),
                   files={sig_id: file for sig_id, (_, file) in layer.items()}, warnings=tuple(warnings))


def load_catalog(paths: Sequence[Path | str] = (), *, builtin: bool = True, rules: bool = True) -> Catalog:
    """Load the built-in catalog (if ``builtin``) and then ``paths``, user records overriding by id.

    rules: apply :mod:`~logsig.matchers.catalog.rules` to the user records, as ``scan``, ``run``
    and a reload do (the built-in records pass them, as the test suite checks); authoring tools
    (``catalog test``, ``list``, ``show``, ``explain``) pass False to work on drafts.

    Raises:
        CatalogError: listing every problem found, if there is any.
    """
    problems: list[CatalogProblem] = []
    base = _catalog(_load_layer([builtin_path()], problems)) if builtin else Catalog(())
    user = _catalog(_load_layer([Path(p) for p in paths], problems, rules=rules))
    if problems:
        raise CatalogError(problems)
    merged = {**{s.id: (s, base.files[s.id]) for s in base.signatures},
              **{s.id: (s, user.files[s.id]) for s in user.signatures}}
    return _catalog(merged, override_warnings(base, user))
