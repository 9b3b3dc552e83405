"""Signature drafts from real lines: the regex matches every example, is safe, and the gate waits for the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsig.group.template import template
from logsig.matchers.authoring.draft import GAP, draft_problems, draft_record, merged_template, strip_header
from logsig.matchers.authoring.gate import PLACEHOLDER, record_problems
from logsig.matchers.catalog.captures import capture_values
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature

CORPUS = Path(__file__).parents[3] / "data" / "corpus"


def _lines(kind: str) -> list[str]:
    """Key lines of the written-from excerpts of ``kind`` (real_logs + incoming)."""
    rows = [json.loads(line) for name in ("real_logs.jsonl", "incoming/real_logs.jsonl")
            for line in (CORPUS / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["lines"][r["key_line_index"]] for r in rows if r["kind"] == kind]


KINDS = ["vllm-free-memory-less-than-utilization", "nccl-watchdog-timeout", "gpu-xid-error",
         "k8s-gpu-unschedulable", "tgi-input-validation-error", "ollama-runner-terminated"]


class TestDraftRecord:
    """draft_record and draft_problems."""

    @pytest.mark.parametrize("kind", KINDS)
    def test_draft_of_real_lines_keeps_its_promises(self, kind: str) -> None:
        """The draft of a kind's real lines matches every one, runs on RE2 alone and is narrowed by phase one."""
        lines = _lines(kind)
        assert len(lines) >= 2
        assert [] == draft_problems(draft_record(lines))

    def test_same_template_gives_one_literal_regex(self) -> None:
        """Lines differing only in numbers give the template's regex; the size and the device are captured."""
        lines = ["ggml_backend_cuda_buffer_type_alloc_buffer: allocating 279356.51 MiB on device 0: cudaMalloc failed: out of memory",
                 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14136.04 MiB on device 0: cudaMalloc failed: out of memory"]
        record = draft_record(lines)
        match = Engine([Signature(id="t/d", signature="s", regex=record["regex"])]).match(lines[0])[0]
        assert ("local/ggml-backend-cuda-buffer-type-alloc", {"allocating_bytes": round(279356.51 * 1024**2),
                                                                 "gpu_index": 0}) == (
            record["id"], capture_values(match.captures))

    def test_header_is_dropped(self) -> None:
        """A vLLM process prefix and header are not part of the regex; other headers still match."""
        line = "(EngineCore_DP0 pid=2221630) ERROR 09-24 20:59:57 [core.py:790] Invocation of collective_rpc method failed"
        record = draft_record([line])
        engine = Engine([Signature(id="t/d", signature="s", regex=record["regex"])])
        assert r"Invocation\s+of\s+collective_rpc\s+method\s+failed" == record["regex"]
        assert engine.match("[rank3]: Invocation of collective_rpc method failed")

    def test_nccl_header_is_dropped(self) -> None:
        """NCCL's ``host:pid:tid [dev]`` header is not part of the regex, which matches the line from another host."""
        # https://github.com/NVIDIA/nccl-tests/issues/188
        line = "user:16901:16967 [2] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3"
        record = draft_record([line])
        engine = Engine([Signature(id="t/d", signature="s", regex=record["regex"])])
        assert (False, 1) == (record["regex"].startswith("user"), len(
            engine.match("[rank3]:gpu-7.example:99:100 [3] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: "
                         "wrong type 4 != 3")))

    def test_syslog_host_and_ident_are_dropped(self) -> None:
        """A journald / syslog line's time, host and ident are not part of the regex."""
        line = "Jan 12 10:00:00 gpu-node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=123, GPU has fallen off the bus."
        assert "NVRM: Xid (PCI:<PCI>): <NUM>, pid=<NUM>, GPU has fallen off the bus." == strip_header(template(line))

    def test_different_templates_are_merged_with_a_gap(self) -> None:
        """Words that differ between the examples become one bounded gap; both lines still match."""
        templates = ["Couldn't get configMap <STR> default/bigquery: configmaps not found",
                     "Couldn't get configMap <STR> kube-system/nvidia: configmaps not found"]
        assert f"Couldn't get configMap <STR> {GAP} configmaps not found" == merged_template(templates)

    def test_named_captures_follow_the_convention(self) -> None:
        """pid, rank and tokens numbers are named captures the convention knows."""
        line = "WARNING 02-13 07:19:11 scheduler.py:949] Input prompt (32889 tokens) is too long and exceeds limit of 2048"
        record = draft_record([line])
        assert "(?P<prompt_tokens>" in record["regex"]
        assert strip_header("(Worker pid=<NUM>) INFO <TS> [x.py:<NUM>] Loading model weights") == "Loading model weights"

    def test_gate_rejects_the_draft_until_filled(self) -> None:
        """catalog check's record rules reject every placeholder, and accept the draft once it is written."""
        record = draft_record(["RuntimeError: Engine process failed to start. See stack trace for the root cause."])
        drafted = [field for field, _ in record_problems(Signature(**record))]
        filled = json.loads(json.dumps(record).replace(json.dumps(PLACEHOLDER)[1:-1], "written"))
        filled["category"] = "runtime_error"
        assert (["category", "root_cause", "workarounds[0].action", "workarounds[0].how", "dead_ends[0].action",
                 "dead_ends[0].why_fails"], []) == (drafted, list(record_problems(Signature(**filled))))

    def test_unrelated_lines_are_refused(self) -> None:
        """Lines that share no words give a regex that matches anything, which the checks refuse."""
        record = draft_record(["ggml_metal_get_buffer: error: buffer is nil", "Killed"])
        assert ["regex matches the empty string"] == draft_problems(record)

    def test_no_lines_is_an_error(self) -> None:
        """A draft needs an example."""
        with pytest.raises(ValueError, match="at least one example line"):
            draft_record([])
