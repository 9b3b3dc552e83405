"""The signature record model against the seed record."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from logsig.matchers.signature import GENERIC_PRIORITY, Signature

SEED = Path(__file__).parents[3] / "logsig/matchers/catalog/builtin/llm/vllm-cuda-oom-during-prefill.json"


class TestSignature:
    def test_seed_loads_and_round_trips(self) -> None:
        """The seed file loads unchanged and dumps back to the same record."""
        raw = json.loads(SEED.read_text(encoding="utf-8"))
        assert raw == Signature.model_validate(raw).to_record()

    def test_seed_fields_are_typed(self) -> None:
        """Workarounds, dead ends and versions are parsed into typed parts."""
        sig = Signature.model_validate_json(SEED.read_text(encoding="utf-8"))
        assert [0.85, 0.9, 0.8] == [w.success_rate for w in sig.workarounds]
        assert ["", "", ""] == [d.action for d in sig.dead_ends]
        assert "vllm==0.4.3" == sig.versions[0].version
        assert "CUDA OOM" == sig.error_code

    def test_translations_collects_locale_fields(self) -> None:
        """Fields named <field>_zh are gathered under the zh locale."""
        sig = Signature.model_validate_json(SEED.read_text(encoding="utf-8"))
        assert {"signature", "root_cause", "workarounds"} == set(sig.translations["zh"])

    def test_unknown_fields_are_kept(self) -> None:
        """A field the model does not know survives the round trip."""
        raw = {"id": "x/y", "signature": "s", "regex": "boom", "future_field": {"a": 1}}
        assert raw == Signature.model_validate(raw).to_record()

    def test_success_rate_outside_unit_interval_is_rejected(self) -> None:
        """success_rate must lie in [0, 1]."""
        raw = {"id": "x/y", "signature": "s", "regex": "boom", "workarounds": [{"how": "h", "success_rate": 1.5}]}
        with pytest.raises(ValidationError):
            Signature.model_validate(raw)

    def test_empty_regex_is_rejected(self) -> None:
        """An empty or blank regex is an error."""
        with pytest.raises(ValidationError, match="regex is empty"):
            Signature.model_validate({"id": "x/y", "signature": "s", "regex": "  "})

    def test_tier_follows_priority(self) -> None:
        """Priority GENERIC_PRIORITY or lower is the generic tier; above it, specific."""
        tiers = [Signature(id="t/x", signature="s", regex="x", priority=p).tier
                 for p in (0, -10, GENERIC_PRIORITY + 1, GENERIC_PRIORITY, GENERIC_PRIORITY - 30)]
        assert ["specific", "specific", "specific", "generic", "generic"] == tiers
