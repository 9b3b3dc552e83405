"""Named capture groups parsed to numbers in base units.

Convention (documented for signature authors in ``docs/signatures.md``, "The capture convention"):

========================  =====================================  ===========================
capture name              text as printed                        value
========================  =====================================  ===========================
``<what>_bytes``          ``2.00 GiB``, ``512 MiB``, ``0 bytes``  bytes (int)
``<what>_tokens``         ``4096``                               tokens (int)
``<what>_seconds``        ``600000 milliseconds``, ``1800s``     seconds (float)
``<what>_count``,         ``79``                                 int
``gpu_index``, ``xid``,
``exit_code``, ``rank``,
``world_size``, ``pid``
``<what>_ms``             ``1800000`` (a bare number)            ``<what>_seconds`` (float)
``<what>_mib``,           ``19.77`` (a bare number)              ``<what>_bytes`` (int)
``<what>_gib``
========================  =====================================  ===========================

The last two rows are for messages that print a number whose unit is elsewhere in the line
(``timeout=1800000`` in milliseconds, ``19.77/22.05 GiB``): the value is stored under the base-unit
name, so ``values`` only ever holds bytes, seconds, tokens and counts.

Binary units (KiB, MiB, GiB, TiB) are powers of 1024 as PyTorch and nvidia-smi print them; SI units
(kB, KB, MB, GB, TB) are powers of 1000 (IEC 80000-13). A capture that does not parse is left out of
the values (its raw text is still in ``captures``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_SIZE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_UNITS: dict[str, int] = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
    "k": 1000, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
    "m": 1000**2, "g": 1000**3,
}
_DURATIONS: dict[str, float] = {
    "": 1.0, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msec": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
    "us": 1e-6, "µs": 1e-6, "microseconds": 1e-6,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hour": 3600.0, "hours": 3600.0,
}
_INT_NAMES = frozenset({"gpu_index", "xid", "exit_code", "rank", "world_size", "pid"})
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(\S*)\s*$")


def parse_bytes(text: str) -> int | None:
    """``"2.00 GiB"`` -> 2147483648; None when the text is not a size."""
    found = _SIZE.match(text.replace(",", ""))
    if found is None:
        return None
    factor = _UNITS.get(found.group(2).lower())
    return None if factor is None else round(float(found.group(1)) * factor)


def parse_seconds(text: str) -> float | None:
    """``"600000 milliseconds"`` -> 600.0; None when the text is not a duration."""
    found = _NUMBER.match(text.replace(",", ""))
    if found is None:
        return None
    factor = _DURATIONS.get(found.group(2).lower())
    return None if factor is None else float(found.group(1)) * factor


def _parse_int(text: str) -> int | None:
    try:
        return int(text.strip().replace(",", ""), 0 if text.strip().startswith("0x") else 10)
    except ValueError:
        return None


def parse_value(name: str, text: str) -> int | float | None:
    """The value of capture ``name`` by the naming convention, or None if it has no number."""
    if name.endswith("_bytes"):
        return parse_bytes(text)
    if name.endswith("_seconds"):
        return parse_seconds(text)
    if name.endswith(("_tokens", "_count")) or name in _INT_NAMES:
        return _parse_int(text)
    return None


_SCALED: dict[str, tuple[str, str]] = {"_ms": ("_seconds", " ms"), "_mib": ("_bytes", " MiB"),
                                         "_gib": ("_bytes", " GiB")}


def base_unit(name: str, text: str) -> tuple[str, int | float | None]:
    """``(value name, value)`` of one capture: scaled suffixes get their base-unit name."""
    for suffix, (base, unit) in _SCALED.items():
        if name.endswith(suffix):
            renamed = name[: -len(suffix)] + base
            return renamed, parse_value(renamed, text.strip() + unit)
    return name, parse_value(name, text)


def capture_values(captures: Mapping[str, str | None]) -> dict[str, int | float]:
    """Every capture that parses by the convention, as ``{name: value}`` in base units."""
    out: dict[str, int | float] = {}
    for name, text in captures.items():
        if text is not None:
            key, value = base_unit(name, text)
            if value is not None:
                out.setdefault(key, value)
    return out
