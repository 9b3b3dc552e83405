"""Settings of the grouping stage (the ``grouping`` section of :class:`logsig.config.Settings`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GroupSettings(BaseModel):
    """How detections become incident groups (see :mod:`logsig.group.grouper`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        True, description="Emit one group's opened/updated/resolved events on the output topic; false emits one "
                          "event per matching line there instead.")
    update_interval_seconds: float = Field(
        10.0, ge=0, description="A group's count is re-emitted (updated) at most this often (seconds).")
    quiet_seconds: float = Field(
        300.0, gt=0, description="A group resolves after this long without a new occurrence (seconds).")
    max_groups: int = Field(
        10000, ge=1, description="Open groups kept; beyond it the least recently seen is emitted and evicted.")
    max_listed: int = Field(10, ge=1, description="Distinct pods and sources listed per group; the rest are counted.")
    causal_window_seconds: float = Field(
        300.0, ge=0, description="A group opening this soon after a group on the same stream whose signature leads "
                                 "to it (catalog transition_graph) is linked to it as caused_by (seconds).")
