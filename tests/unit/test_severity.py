"""Severity derived from category and signature: hardware faults and engine death are critical."""

from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.signature import Signature
from logsig.severity import signature_severity

SIGS = load_catalog().by_id()


class TestSignatureSeverity:
    def test_builtin_signatures(self) -> None:
        """Xid 79 and engine death page; a CUDA OOM is an error; a too-long prompt is a warning."""
        assert ["critical", "critical", "critical", "error", "warning"] == [signature_severity(SIGS[i]) for i in (
            "gpu/xid-79-fallen-off-bus", "llm/vllm-engine-dead", "llm/vllm-async-engine-dead",
            "llm/vllm-cuda-oom-during-prefill", "llm/vllm-request-exceeds-max-model-len")]

    def test_a_record_may_name_its_own(self) -> None:
        """A catalog record's severity field wins over the derived one; an unknown value is ignored."""
        own = Signature(id="t/a", signature="s", regex="x", category="hardware_error", severity="warning")
        bad = Signature(id="t/b", signature="s", regex="x", category="input_error", severity="page-me")
        assert ("warning", "warning") == (signature_severity(own), signature_severity(bad))

    def test_a_wait_the_line_calls_possibly_benign_is_a_warning(self) -> None:
        """vLLM's shared-memory broadcast wait, which the line says compilation also causes, is a warning."""
        assert "warning" == signature_severity(SIGS["llm/vllm-shm-broadcast-timeout"])
