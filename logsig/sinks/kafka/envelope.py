"""CloudEvents 1.0 binary-mode headers of an incident record (the CloudEvents Kafka protocol binding).

In binary content mode the event's attributes travel as ``ce_``-prefixed Kafka headers and the
record value is the event data, here the incident JSON unchanged (``content-type:
application/json``). The attributes (CloudEvents spec v1.0.2, "Context Attributes"):

- ``ce_specversion``: ``1.0``;
- ``ce_id``: the incident's ``event_id`` (deterministic, so a replayed event keeps it);
- ``ce_source``: ``kafka.cloudevents_source`` (default ``/logsig``), a URI-reference naming this
  deployment;
- ``ce_type``: ``dev.logsig.incident.opened`` / ``.updated`` / ``.resolved`` for group events,
  ``dev.logsig.incident.line`` for a per-line event;
- ``ce_time``: when the reported line was logged (its log time, else the record time, else when it
  was detected), RFC 3339;
- ``ce_subject``: the group key (the signature id on a per-line event);
- ``ce_dataschema``: the URI of the incident JSON Schema of this ``schema_version``.

The headers are made by the CloudEvents SDK (``cloudevents.core.bindings.kafka.to_binary``).
"""

from __future__ import annotations

from cloudevents.core.bindings.kafka import to_binary
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from logsig.group.keys import seen_at
from logsig.incident import Incident

TYPE_PREFIX = "dev.logsig.incident."
DEFAULT_SOURCE = "/logsig"
_FORMAT = JSONFormat()


def event_type(incident: Incident) -> str:
    """``dev.logsig.incident.<status>``, or ``.line`` for a per-line event."""
    return TYPE_PREFIX + (incident.status or "line")


def cloudevent_headers(incident: Incident, source: str = DEFAULT_SOURCE) -> tuple[tuple[str, bytes], ...]:
    """The binary-mode headers of ``incident`` (see the module docstring), in attribute order."""
    attributes = {
        "id": incident.event_id, "source": source, "type": event_type(incident), "specversion": "1.0",
        "time": seen_at(incident), "subject": incident.group.key if incident.group else incident.signature.id,
        "datacontenttype": "application/json",
        "dataschema": f"https://logsig.dev/schema/incident-v{incident.schema_version}.json",
    }
    message = to_binary(CloudEvent(attributes=attributes, data=None), _FORMAT)
    return tuple(message.headers.items())
