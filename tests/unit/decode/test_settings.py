"""DecodeSettings: defaults, per-topic overrides, validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from logsig.decode import DecodeSettings


class TestDecodeSettings:
    def test_defaults(self) -> None:
        """The documented defaults hold."""
        settings = DecodeSettings()
        multiline = settings.multiline
        assert ("auto", 1024 * 1024, 200, 256 * 1024, 2.0, 10_000, True) == (
            settings.envelope,
            settings.max_record_bytes,
            multiline.max_lines,
            multiline.max_bytes,
            multiline.idle_timeout_seconds,
            multiline.max_open_groups,
            multiline.enabled,
        )

    def test_topic_overrides_fall_back_to_the_defaults(self) -> None:
        """A topic override applies to its topic only; unset parts use the defaults."""
        settings = DecodeSettings.model_validate(
            {"envelope": "auto", "cluster": "c0", "topics": {"otlp_logs": {"envelope": "otlp_proto"}}}
        )
        assert [("otlp_proto", "c0"), ("auto", "c0"), ("auto", "c0")] == [
            (settings.envelope_for(topic), settings.cluster_for(topic)) for topic in ("otlp_logs", "logs", None)
        ]

    @pytest.mark.parametrize(
        "raw",
        [
            {"envelope": "fluentbit"},
            {"unknown": 1},
            {"topics": {"t": {"envelop": "json"}}},
            {"multiline": {"max_lines": 1}},
            {"multiline": {"idle_timeout_seconds": 0}},
            {"max_record_bytes": 10},
        ],
    )
    def test_bad_values_are_rejected(self, raw: dict[str, object]) -> None:
        """Unknown keys, unknown envelopes and out-of-range bounds fail validation."""
        with pytest.raises(ValidationError):
            DecodeSettings.model_validate(raw)

    def test_every_field_is_described(self) -> None:
        """Each setting carries a description (it is rendered into the configuration docs)."""
        from logsig.decode.settings import MultilineSettings, TopicDecodeSettings

        models = (DecodeSettings, MultilineSettings, TopicDecodeSettings)
        missing = [f"{m.__name__}.{n}" for m in models for n, f in m.model_fields.items() if not f.description]
        assert [] == missing
