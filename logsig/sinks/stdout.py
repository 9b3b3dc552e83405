"""The stdout sink of ``logsig scan``: incidents as JSON lines, or as readable text."""

from __future__ import annotations

from typing import Any, BinaryIO

import orjson

from logsig.incident import Incident
from logsig.pipeline import StepResult

TEXT_LINE_CHARS = 160


def write_incidents(step: StepResult, out: BinaryIO) -> None:
    """Write each incident of ``step`` to ``out`` as one JSON object per line (UTF-8)."""
    for detection in step.detections:
        out.write(detection.incident.to_json() + b"\n")


def where(incident: Incident) -> str:
    """``namespace/pod`` when known, else ``file:line`` or ``topic[partition]@offset``."""
    source = incident.source
    if source.pod:
        return f"{source.namespace}/{source.pod}" if source.namespace else source.pod
    if source.file is not None:
        return f"{source.file}:{source.line_number}"
    return f"{source.topic}[{source.partition}]@{source.offset}"


def incident_text(incident: Incident) -> str:
    """A blank line, then ``[severity] id  where  log time``, the line, and the best workaround.

    The line and the workaround are cut to 160 characters. A group's later events (``updated``,
    ``resolved``) are one line with the count, since its ``opened`` event already showed the rest.
    """
    sig = incident.signature
    if incident.status in ("updated", "resolved") and incident.group is not None:
        return (f"  {incident.status}: {sig.id}  {where(incident)}  "
                f"{incident.group.occurrences} occurrence(s)\n")
    when = f"  {incident.log_timestamp.isoformat()}" if incident.log_timestamp else ""
    lines = [f"\n[{incident.severity}] {sig.id}  {where(incident)}{when}",
             f"  line: {incident.match.line[:TEXT_LINE_CHARS]}"]
    if incident.workarounds:
        top = incident.workarounds[0]
        lines.append(f"  try first ({top.success_rate:.0%}): {(top.how or top.action)[:TEXT_LINE_CHARS]}")
    return "\n".join(lines) + "\n"


def write_incidents_text(step: StepResult, out: BinaryIO) -> None:
    """Write each incident of ``step`` to ``out`` as :func:`incident_text` (UTF-8)."""
    for detection in step.detections:
        out.write(incident_text(detection.incident).encode("utf-8"))


def write_unclassified(view: dict[str, Any], out: BinaryIO, fmt: str = "json") -> None:
    """Write the templates of an :meth:`~logsig.discovery.unclassified.Unclassified.view`.

    json: one object per template per line; text: a header, then per template its count, pods,
    first and last seen, fingerprint and template (cut to 160 characters).
    """
    if fmt != "text":
        for entry in view["templates"]:
            out.write(orjson.dumps(entry) + b"\n")
        return
    out.write(f"{view['total']} unclassified lines, {view['tracked']} templates tracked "
              f"(top {len(view['templates'])} below)\n".encode())
    for entry in view["templates"]:
        pods = ", ".join(entry["pods"]) + (", ..." if entry["pods_truncated"] else "")
        out.write((f"\n{entry['count']:>8}  {entry['fingerprint']}  {entry['signature_id']}\n"
                   f"          {entry['first_seen']} .. {entry['last_seen']}  pods: {pods or '-'}\n"
                   f"          {entry['template'][:TEXT_LINE_CHARS]}\n").encode())
