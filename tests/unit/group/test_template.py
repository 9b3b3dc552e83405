"""Templates and fingerprints of real corpus lines (tests/data/corpus)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from logsig.group.template import MAX_TEMPLATE_CHARS, fingerprint, fingerprint_of_template, template

CORPUS = Path(__file__).parents[2] / "data" / "corpus"


@cache
def key_lines() -> dict[str, str]:
    """Corpus excerpt id -> its key line."""
    rows = (json.loads(line) for line in (CORPUS / "real_logs.jsonl").read_text().splitlines())
    return {row["id"]: row["lines"][row["key_line_index"]] for row in rows}


@cache
def benign_lines() -> list[str]:
    """Every benign corpus line."""
    return [json.loads(line)["line"] for line in (CORPUS / "benign_lines.jsonl").read_text().splitlines()]


SAME_FAILURE = [
    ("llamacpp-cudamalloc-oom-pp-1", "llamacpp-cudamalloc-oom-rocm-1"),
    ("hf-gated-401-old-wording-1", "hf-gated-401-tgi-cloudwatch-1"),
    ("vllm-input-prompt-too-long-misleading-1", "vllm-input-prompt-too-long-warn-1"),
    ("vllm-input-prompt-too-long-warn-1", "vllm-input-prompt-too-long-warn-2"),
    ("cuda-illegal-address-watchdog-1", "cuda-illegal-address-watchdog-2"),
]
"""Pairs of excerpts of one failure that differ only in numbers, sizes, ids, ranks or times."""

DIFFERENT_FAILURES = [
    "llamacpp-cudamalloc-oom-pp-1",
    "hf-gated-401-old-wording-1",
    "vllm-input-prompt-too-long-warn-1",
    "nccl-watchdog-timeout-pg-guid-1",
    "ollama-runner-signal-terminated-1",
    "ollama-runner-terminated-exit2-1",
    "xid13-graphics-exception-vllm-1",
    "xid45-caused-by-previous-1",
    "vllm-context-length-exceeded-1",
    "k8s-insufficient-gpu-1",
    "k8s-insufficient-gpu-2",
    "llamacpp-python-requested-tokens-1",
]
"""Excerpts of different failures (or different wordings of one: still different templates)."""


class TestTemplate:
    """template() masks the variable parts of a line and keeps its words."""

    def test_sizes_and_device_numbers_are_masked(self) -> None:
        """A llama.cpp allocation failure keeps its words; size and device become placeholders."""
        expected = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating <SIZE> on device <NUM>: cudaMalloc failed: out of memory"
        assert expected == template(key_lines()["llamacpp-cudamalloc-oom-pp-1"])

    def test_vllm_header_pid_and_timestamp_are_masked(self) -> None:
        """The vLLM header's pid, MM-DD HH:MM:SS and line number are masked; level and ``_0`` stay."""
        line = key_lines()["vllm-free-memory-startup-3"]
        assert template(line).startswith("(EngineCore_0 pid=<NUM>) ERROR <TS> [core.py:<NUM>] ValueError: Free memory on device (<NUM>/<SIZE>)")

    def test_request_ids_become_hex_and_uuid(self) -> None:
        """A Hugging Face request id is a number, two hex runs and a UUID."""
        expected = "huggingface_hub.utils._errors.GatedRepoError: <NUM> Client Error. (Request ID: Root=<NUM>-<HEX>-<HEX>;<UUID>)"
        assert expected == template(key_lines()["hf-gated-401-old-wording-1"])

    def test_ranks_and_glog_header(self) -> None:
        """``[rank1]:``, the glog level letter with its date and ``Rank 1`` are masked, the letter kept."""
        assert template(key_lines()["nccl-watchdog-timeout-pg-guid-1"]).startswith(
            "[rank<NUM>]:[E<TS> ProcessGroupNCCL.cpp:<NUM>] [Rank <NUM>] Watchdog caught collective operation timeout"
        )

    def test_pci_address_and_hex_values(self) -> None:
        """An Xid line's PCI address and ``0x`` values are masked; quoted ``'<unknown>'`` is a value."""
        expected = (
            "[<NUM>] NVRM: Xid (PCI:<PCI>): <NUM>, pid='<STR>', name=<unknown>, Graphics Exception: "
            "ESR <ADDR>=<ADDR> <ADDR>=<ADDR> <ADDR>=<ADDR> <ADDR>=<ADDR>"
        )
        assert expected == template(key_lines()["xid13-graphics-exception-vllm-1"])

    def test_nvrm_short_pci_address_and_device_indexes(self) -> None:
        """NVRM's ``PCI:0000:3b:00:`` and device names' indexes (``nvidia3``, ``hl2``) are masked."""
        lines = ["NVRM: GPU at PCI:0000:3b:00: GPU-1f2e3d4c-aaaa-bbbb-cccc-0123456789ab", "nvidia3: fell off the bus",
                 "habanalabs hl2: Failed to communicate with Device CPU (CPU-CP timeout)"]
        expected = ["NVRM: GPU at PCI:<PCI>: GPU-<UUID>", "nvidia<NUM>: fell off the bus",
                    "habanalabs hl<NUM>: Failed to communicate with Device CPU (CPU-CP timeout)"]
        assert expected == [template(line) for line in lines]

    def test_kubernetes_pod_suffix_and_durations(self) -> None:
        """A Deployment pod's ReplicaSet hash and suffix are one ``-<POD>``; ages are durations."""
        line = "deepseek-r1-distill-llama-8b-5cc594fd46-hg5rw   0/1     CrashLoopBackOff   5 (2m30s ago)   13m"
        expected = "deepseek-r1-distill-llama-8b-<POD> <NUM>/<NUM> CrashLoopBackOff <NUM> (<DUR> ago) <DUR>"
        assert expected == template(line)

    def test_event_count_and_age(self) -> None:
        """A Kubernetes event's ``(x2 over 40s)`` masks the count and the age."""
        assert template(key_lines()["k8s-insufficient-gpu-1"]).startswith(
            "Warning FailedScheduling <DUR> (x<NUM> over <DUR>) default-scheduler <NUM>/<NUM> nodes are available"
        )

    def test_syslog_host_and_nccl_prefix(self) -> None:
        """A journald line's time and host, and an NCCL line's host:pid:tid prefix, are masked."""
        assert "<TS> <HOST> ollama[<NUM>]: [GIN] <TS> - <TS> | <NUM> | <DUR> | <IP> | POST \"<PATH>\"" == template(
            benign_lines()[0]
        )
        assert "<HOST>:<NUM>:<NUM> [<NUM>] NCCL INFO P2P Chunksize set to <NUM>" == template(
            "host01:421780:421780 [0] NCCL INFO P2P Chunksize set to 131072"
        )

    def test_slog_message_with_spaces_is_kept(self) -> None:
        """A quoted message with spaces names the failure and stays; the source line number does not."""
        expected = 'msg="error loading llama server" error="llama runner process has terminated: exit status <NUM>"'
        assert expected == template(key_lines()["ollama-runner-terminated-exit2-2"])

    def test_json_keys_are_kept(self) -> None:
        """JSON keys stay; a one-word JSON value is masked."""
        line = key_lines()["llamacpp-exceed-context-json-2"]
        assert template(line).startswith('{"error":{"code":<NUM>,"message":"the request exceeds the available context size.')

    def test_ansi_and_whitespace_runs(self) -> None:
        """ANSI escapes are removed and whitespace runs become one space."""
        assert "ERROR <TS> failed" == template("\x1b[1;31mERROR\x1b[0m   12-29 07:45:20\tfailed  ")

    def test_long_line_is_cut(self) -> None:
        """Only the first MAX_TEMPLATE_CHARS characters are templated."""
        assert MAX_TEMPLATE_CHARS == len(template("x" * (MAX_TEMPLATE_CHARS + 500)))

    def test_every_corpus_line_is_templated(self) -> None:
        """No corpus line raises, and no template keeps a run of three or more digits."""
        lines = [*key_lines().values(), *benign_lines()]
        leftovers = [t for t in map(template, lines) if re.search(r"(?<![\w.])\d{3,}(?![\w.])", t)]
        assert [] == leftovers

    def test_template_of_a_template_is_itself(self) -> None:
        """Templating is idempotent, so a template can be fingerprinted again (``catalog draft``)."""
        lines = [*key_lines().values(), *benign_lines()]
        assert [] == [t for t in map(template, lines) if template(t) != t]


class TestFingerprint:
    """fingerprint() is equal for one failure with different numbers and differs between failures."""

    @pytest.mark.parametrize(("first", "second"), SAME_FAILURE)
    def test_same_failure_same_fingerprint(self, first: str, second: str) -> None:
        """Two excerpts of one failure that differ only in masked parts share the fingerprint."""
        assert fingerprint(key_lines()[first]) == fingerprint(key_lines()[second])

    def test_burst_on_several_pods_is_one_fingerprint(self) -> None:
        """The same failure on three pods, ranks and days has one fingerprint."""
        line = key_lines()["vllm-free-memory-startup-ansi-1"]
        variants = {
            line,
            line.replace("2026-01-28T23:59:42Z", "2026-03-02T01:10:07Z").replace("pid=972", "pid=31"),
            line.replace("EngineCore_DP0", "EngineCore_DP3").replace("cuda:0 (1.53/22.05", "cuda:3 (2.10/79.25"),
        }
        assert 1 == len({fingerprint(v) for v in variants})

    def test_different_failures_differ(self) -> None:
        """Twelve different failures have twelve fingerprints."""
        assert len(DIFFERENT_FAILURES) == len({fingerprint(key_lines()[i]) for i in DIFFERENT_FAILURES})

    def test_shape(self) -> None:
        """A fingerprint is 16 lowercase hex characters (8-byte BLAKE2b)."""
        assert re.fullmatch(r"[0-9a-f]{16}", fingerprint(key_lines()["xid45-caused-by-previous-1"]))

    def test_stable_value(self) -> None:
        """The fingerprint of a line does not change between processes or releases (stored ids stay valid)."""
        assert "4993f0643febf214" == fingerprint("Killed")

    def test_of_template_is_the_fingerprint_of_the_line(self) -> None:
        """fingerprint_of_template(template(line)) is fingerprint(line)."""
        line = key_lines()["vllm-context-length-exceeded-1"]
        assert fingerprint(line) == fingerprint_of_template(template(line))
