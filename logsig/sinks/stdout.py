"""The stdout sink: incidents as JSON lines (the ``logsig scan`` output)."""

from __future__ import annotations

from typing import BinaryIO

from logsig.pipeline import StepResult


def write_incidents(step: StepResult, out: BinaryIO) -> None:
    """Write each incident of ``step`` to ``out`` as one JSON object per line (UTF-8)."""
    for detection in step.detections:
        out.write(detection.incident.to_json() + b"\n")
