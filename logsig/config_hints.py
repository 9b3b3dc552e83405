"""What a settings mistake probably meant: environment variables that name no setting, unknown
keys, values that cannot be parsed. Used by :func:`logsig.config.load_settings` for its messages.

A setting ``kafka.bootstrap_servers`` is read from ``LOGSIG_KAFKA__BOOTSTRAP_SERVERS`` (prefix
``LOGSIG_``, two underscores between levels; pydantic-settings' ``env_nested_delimiter``). Names
are compared case-insensitively, as pydantic-settings does. Suggestions come from
:func:`difflib.get_close_matches`.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

PREFIX = "LOGSIG_"
DELIMITER = "__"
RESERVED_PREFIXES = ("LOGSIG_TEST_",)
"""Variables of logsig's own test suite (tests/integration/conftest.py), not settings."""
VARIABLE_CUTOFF = 0.8
KEY_CUTOFF = 0.6


@dataclass(frozen=True, slots=True)
class UnknownVariable:
    """A ``LOGSIG_`` variable that names no setting, and the variable it probably meant (or None)."""

    name: str
    suggestion: str | None

    def message(self) -> str:
        """One line naming the variable and, when there is one, the setting it probably meant."""
        if self.suggestion is None:
            return (f"environment variable {self.name} names no setting and is ignored (settings are "
                    f"LOGSIG_<SECTION>__<KEY>, e.g. LOGSIG_KAFKA__BOOTSTRAP_SERVERS)")
        return (f"environment variable {self.name} names no setting; did you mean {self.suggestion} "
                f"({setting_of(self.suggestion)})? Levels are separated by two underscores")


def _model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``annotation`` (``Model``, ``Model | None``), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [m for m in map(_model, typing.get_args(annotation)) if m is not None]
        return models[0] if len(models) == 1 else None
    return None


def _is_mapping(annotation: Any) -> bool:
    return typing.get_origin(annotation) is dict


def setting_paths(model: type[BaseModel], parents: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every ``(path, annotation)`` of ``model``'s fields, sections first, then their fields."""
    for name, field in model.model_fields.items():
        path = (*parents, name)
        yield path, field.annotation
        nested = _model(field.annotation)
        if nested is not None:
            yield from setting_paths(nested, path)


def variable_of(path: tuple[str, ...]) -> str:
    """The environment variable of a setting path: ``("kafka", "group_id")`` -> ``LOGSIG_KAFKA__GROUP_ID``."""
    return PREFIX + DELIMITER.join(path).upper()


def setting_of(variable: str) -> str:
    """The dotted setting a variable sets: ``LOGSIG_KAFKA__GROUP_ID`` -> ``kafka.group_id``."""
    return variable[len(PREFIX):].lower().replace(DELIMITER, ".")


def unknown_variables(model: type[BaseModel], environ: Mapping[str, str]) -> list[UnknownVariable]:
    """The ``LOGSIG_`` variables of ``environ`` that set nothing of ``model``, sorted by name.

    A variable below a mapping setting (``LOGSIG_DECODE__TOPICS__<topic>__...``) is a setting.
    """
    paths = dict(setting_paths(model))
    known = {variable_of(path) for path in paths}
    mappings = tuple(variable_of(path) + DELIMITER for path, annotation in paths.items() if _is_mapping(annotation))
    found = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper.startswith(RESERVED_PREFIXES) or upper in known:
            continue
        if upper.startswith(mappings):
            continue
        found.append(UnknownVariable(name, _probable(upper, known)))
    return found


def _probable(upper: str, known: set[str]) -> str | None:
    """The known variable ``upper`` probably meant: the same words with other underscores, or a
    close key in the same section, or a close name overall; else None."""
    squashed = {name.replace("_", ""): name for name in known}
    if upper.replace("_", "") in squashed:
        return squashed[upper.replace("_", "")]
    section, _, key = upper.rpartition(DELIMITER)
    if section + DELIMITER != PREFIX and section in known:
        siblings = {name.rpartition(DELIMITER)[2]: name for name in known if name.startswith(section + DELIMITER)}
        close = difflib.get_close_matches(key, sorted(siblings), n=1, cutoff=VARIABLE_CUTOFF)
        return siblings[close[0]] if close else None
    close = difflib.get_close_matches(upper, sorted(known), n=1, cutoff=VARIABLE_CUTOFF)
    return close[0] if close else None


def model_at(model: type[BaseModel], path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The section model at ``path`` below ``model`` (``()`` is ``model`` itself), else None."""
    current: type[BaseModel] | None = model
    for part in path:
        field = current.model_fields.get(str(part)) if current is not None else None
        current = _model(field.annotation) if field is not None else None
    return current


def closest_key(model: type[BaseModel], loc: tuple[str | int, ...]) -> str | None:
    """The dotted key closest to the unknown key at ``loc`` among its section's keys, else None."""
    section = model_at(model, loc[:-1])
    if section is None or not loc:
        return None
    close = difflib.get_close_matches(str(loc[-1]), list(section.model_fields), n=1, cutoff=KEY_CUTOFF)
    return ".".join([*map(str, loc[:-1]), close[0]]) if close else None


def variable_for(loc: tuple[str | int, ...], environ: Mapping[str, str]) -> str | None:
    """The environment variable (as spelt in ``environ``) that set the value at ``loc``, else None."""
    for depth in range(len(loc), 0, -1):
        wanted = variable_of(tuple(map(str, loc[:depth])))
        for name in environ:
            if name.upper() == wanted:
                return name
    return None


def variables_under(loc: tuple[str | int, ...], environ: Mapping[str, str]) -> list[str]:
    """The environment variables (as spelt in ``environ``, sorted) that set keys inside the section
    at ``loc`` (``("kafka",)``: ``LOGSIG_KAFKA__SECURITY_PROTOCOL``, ...); none for the root."""
    if not loc:
        return []
    section = variable_of(tuple(map(str, loc))) + DELIMITER
    return sorted(name for name in environ if name.upper().startswith(section))


def unparsable_variables(model: type[BaseModel], environ: Mapping[str, str]) -> list[str]:
    """``NAME='value'`` of each variable setting a list, mapping or section to text that is not JSON."""
    paths = dict(setting_paths(model))
    bad = []
    for name in sorted(environ):
        annotation = paths.get(tuple(setting_of(name).split("."))) if name.upper().startswith(PREFIX) else None
        complex_type = _model(annotation) is not None or typing.get_origin(annotation) in (list, dict)
        if annotation is not None and complex_type and not _is_json(environ[name]):
            bad.append(f"{name}={environ[name]!r}")
    return bad


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
