"""How urgent an incident is: ``warning`` < ``error`` < ``critical``, derived from its signature.

Rules, first that applies (:func:`signature_severity`):

1. the record's own ``severity`` field (logsig's optional catalog field), when it names one;
2. ``critical``: a hardware fault (category ``hardware_error``: Xid, ECC, fallen off the bus, NVLink)
   or engine death (subcategory ``engine_dead``, or the ``engine-dead`` tag): the server stopped
   serving and will not recover by itself;
3. ``warning``: a client's bad request (category ``input_error``: prompt too long, invalid
   parameters): the server is fine, one request failed;
4. ``error`` for every other category (resource, runtime, network, scheduling, configuration,
   compatibility, dependency).

Each incident event carries the result as ``severity``; the Alertmanager sink's ``severity`` label,
``logsig catalog list``, ``logsig scan --fail-on`` and the text format use it.
deploy/alertmanager/alertmanager.yml routes on severity and category together: hardware errors and
critical alerts page, configuration errors open a ticket, the rest go to chat.
"""

from __future__ import annotations

from typing import Literal

from logsig.matchers.signature import Signature

Severity = Literal["warning", "error", "critical"]
SEVERITIES: tuple[Severity, ...] = ("warning", "error", "critical")
"""Every severity, least urgent first."""
SEVERITY_BY_CATEGORY: dict[str, Severity] = {
    "hardware_error": "critical",
    "input_error": "warning",
}
DEFAULT_SEVERITY: Severity = "error"
ENGINE_DEATH = "engine_dead"


def severity_of(category: str, subcategory: str | None = None, tags: tuple[str, ...] | list[str] = (),
                explicit: object = None) -> Severity:
    """The severity of a signature of ``category`` (rules in the module docstring)."""
    if explicit in SEVERITIES:
        return explicit
    if category == "hardware_error" or subcategory == ENGINE_DEATH or "engine-dead" in tags:
        return "critical"
    return SEVERITY_BY_CATEGORY.get(category, DEFAULT_SEVERITY)


def signature_severity(sig: Signature) -> Severity:
    """The severity of incidents of ``sig``."""
    return severity_of(sig.category, sig.subcategory, sig.tags, (sig.model_extra or {}).get("severity"))


def at_least(severity: str, threshold: str) -> bool:
    """Whether ``severity`` is ``threshold`` or more urgent. Raises ValueError for an unknown name."""
    return SEVERITIES.index(severity) >= SEVERITIES.index(threshold)
