"""Settings of the decode stage: envelope detection, size limits and multi-line assembly.

The root configuration embeds :class:`DecodeSettings` as its ``decode`` section. Every field
carries its unit in its name or description; unknown keys are rejected (``extra="forbid"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Envelope = Literal[
    "auto",
    "text",
    "cri",
    "json",
    "msgpack",
    "otlp_json",
    "otlp_proto",
    "otlp_raw",
]
"""Record formats. ``auto`` detects the format per record. ``text``: the value is the line;
``cri``: a text line, unwrapped if it is a CRI runtime line; ``json``: a JSON map of any
shipper (Fluent Bit, Fluentd, Vector, Filebeat/ECS, Docker json-file) or an application;
``msgpack``: Fluent Bit ``format msgpack``; ``otlp_json`` / ``otlp_proto`` / ``otlp_raw``: the
OpenTelemetry Collector kafka exporter encodings. Under a fixed format a record that does not
fit it is a decode failure."""

ENVELOPES: tuple[str, ...] = Envelope.__args__  # type: ignore[attr-defined]


class MultilineSettings(BaseModel):
    """Bounds of multi-line assembly (Python tracebacks, CRI/Docker partial lines), per stream."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True,
        description="Assemble tracebacks into one event per stream; when false every line "
        "is matched on its own (partial CRI/Docker fragments are still joined).",
    )
    max_lines: int = Field(
        default=200,
        ge=2,
        description="Most lines (count) held in one group; a longer traceback is emitted at "
        "this many lines and the rest starts afresh.",
    )
    max_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        description="Most bytes (UTF-8) of text held in one group before it is emitted.",
    )
    idle_timeout_seconds: float = Field(
        default=2.0,
        gt=0,
        description="Seconds (monotonic clock) after the last line of a group before the "
        "group is emitted as it stands.",
    )
    max_open_groups: int = Field(
        default=10_000,
        ge=1,
        description="Most groups (count) open at once across all streams; opening one more "
        "emits the group idle the longest.",
    )
    dedupe_window_seconds: float = Field(
        default=10.0,
        ge=0,
        description="Seconds during which a traceback identical to one just emitted on the "
        "same stream is dropped (vLLM V1 prints each traceback twice: prefixed, then bare).",
    )


class TopicDecodeSettings(BaseModel):
    """Overrides for one Kafka topic."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    envelope: Envelope | None = Field(
        default=None,
        description="Record format of this topic; unset: the default ``envelope``.",
    )
    cluster: str | None = Field(
        default=None,
        description="Cluster name for records of this topic that carry none themselves.",
    )


class DecodeSettings(BaseModel):
    """Settings of the decode stage (the ``decode`` section of the configuration)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    envelope: Envelope = Field(
        default="auto",
        description="Record format: ``auto`` detects it per record (see docs/decoding.md).",
    )
    cluster: str | None = Field(
        default=None,
        description="Cluster name for records that carry none and whose topic sets none.",
    )
    topics: dict[str, TopicDecodeSettings] = Field(
        default_factory=dict,
        description="Per-topic overrides of ``envelope`` and ``cluster``, by topic name.",
    )
    max_record_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Most bytes of a record's message text used for matching; longer text is "
        "truncated (and counted as truncated), never dropped.",
    )
    max_value_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=1024,
        description="Most bytes of one record value after decompression that is decoded; a larger "
        "value (a compression bomb: the broker's size limit applies to the compressed batch) is "
        "not decoded but goes to the dead-letter topic as ``too_large``.",
    )
    max_events_per_record: int = Field(
        default=10_000,
        ge=1,
        description="Most events (count) one record value may decode to (NDJSON lines, OTLP log "
        "records); the first this many are matched and the record goes to the dead-letter topic as "
        "``too_many_events``.",
    )
    multiline: MultilineSettings = Field(
        default_factory=MultilineSettings,
        description="Multi-line assembly bounds.",
    )

    def envelope_for(self, topic: str | None) -> str:
        """The envelope name for records of ``topic`` (``None`` for a file or stdin)."""
        override = self.topics.get(topic) if topic is not None else None
        if override is not None and override.envelope is not None:
            return override.envelope
        return self.envelope

    def cluster_for(self, topic: str | None) -> str | None:
        """The fallback cluster name for records of ``topic``."""
        override = self.topics.get(topic) if topic is not None else None
        if override is not None and override.cluster is not None:
            return override.cluster
        return self.cluster
