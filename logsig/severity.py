"""How urgent an incident is: ``info`` < ``warning`` < ``critical``, derived from its category.

The catalog has no severity field; :func:`severity_of` derives one from the signature's category
(the Alertmanager sink's ``severity`` label, ``logsig catalog list`` and ``logsig scan --fail-on``
all use it). deploy/alertmanager/alertmanager.yml routes on severity and category together.
"""

from __future__ import annotations

SEVERITIES: tuple[str, ...] = ("info", "warning", "critical")
"""Every severity, least urgent first."""
SEVERITY_BY_CATEGORY = {
    "hardware_error": "critical",
    "input_error": "info",
}
"""Severity per category: a faulted GPU pages; a client's bad request is information; every other
category (resource, runtime, network, scheduling, configuration, compatibility, dependency) is a
``warning``: hardware errors and critical alerts page, configuration errors open a ticket, the rest
go to chat."""
DEFAULT_SEVERITY = "warning"


def severity_of(category: str) -> str:
    """The severity of a signature of ``category`` (one of :data:`SEVERITIES`)."""
    return SEVERITY_BY_CATEGORY.get(category, DEFAULT_SEVERITY)


def at_least(severity: str, threshold: str) -> bool:
    """Whether ``severity`` is ``threshold`` or more urgent. Raises ValueError for an unknown name."""
    return SEVERITIES.index(severity) >= SEVERITIES.index(threshold)
