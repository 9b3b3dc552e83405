"""The one error hierarchy of logsig.

    LogsigError
    ├── ConfigError      settings that cannot be used (bad file, unknown key, bad value)
    ├── CatalogError     a signature catalog that cannot be loaded; carries every problem
    └── SinkError        a sink that could not deliver (retriable is set on the instance)

Library errors are translated at the boundary with ``raise ... from error``. Dropping or
dead-lettering a record is a return value of the decode stage, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass


class LogsigError(Exception):
    """Base class of every error logsig raises on purpose."""


class ConfigError(LogsigError):
    """Settings could not be read or validated; the message names the key."""


@dataclass(frozen=True)
class CatalogProblem:
    """One problem found while loading a catalog.

    file: path of the file, or ``<builtin>``; record_id: the record's ``id`` or ``#N`` (its
    index in the file) when it has none; field: dotted field path, or ``""`` for the record.
    """

    file: str
    record_id: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.record_id}" if self.record_id else self.file
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.message}"


class CatalogError(LogsigError):
    """A catalog failed to load. ``problems`` lists every problem found, not just the first."""

    def __init__(self, problems: list[CatalogProblem]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{len(problems)} catalog problem(s):\n{lines}")

    def __reduce__(self) -> tuple[type[CatalogError], tuple[list[CatalogProblem]]]:
        """Pickled with its problems (a reload's compile raises it in a child process)."""
        return (CatalogError, (self.problems,))


class SinkError(LogsigError):
    """A sink failed to deliver; ``retriable`` tells whether trying again may help."""

    def __init__(self, message: str, *, retriable: bool) -> None:
        super().__init__(message)
        self.retriable = retriable
