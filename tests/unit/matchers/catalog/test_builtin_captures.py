"""The built-in catalog's captures in base units, on real lines taken from the signatures' own examples."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from logsig.enrich import rank
from logsig.matchers.catalog.captures import capture_values
from tests.unit.matchers.catalog.builtin_support import builtin_catalog, builtin_engine


class Case(NamedTuple):
    """A real line, its primary signature, and the values of ``signature``'s match (the primary's if None)."""

    line: str
    primary: str
    values: dict[str, int | float]
    signature: str | None = None


CASES: dict[str, Case] = {
    "bytes-torch-oom-old-format": Case(
        "RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; "
        "8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)",
        "cuda/torch-oom",
        {
            "requested_bytes": 13107200,
            "gpu_index": 0,
            "total_bytes": 11725260718,
            "already_allocated_bytes": 8986296,
            "free_bytes": 9964324127,
            "reserved_bytes": 4907336,
        },
    ),
    "bytes-torch-oom-short-line-under-the-seed": Case(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
        "cuda/torch-oom",
        {"requested_bytes": 2147483648, "gpu_index": 0, "total_bytes": 84986665370},
        signature="cuda/torch-oom",
    ),
    "tokens-vllm-context-length": Case(
        "ERROR 05-08 21:27:27 [serving_chat.py:198] ValueError: This model's maximum context length is 8192 tokens. "
        "However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length "
        "of the messages or completion.",
        "llm/vllm-request-exceeds-max-model-len",
        {"max_model_len_tokens": 8192, "requested_tokens": 8203},
    ),
    "seconds-from-ms-nccl-watchdog": Case(
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) "
        "ran for 600020 milliseconds before timing out.",
        "nccl/watchdog-timeout",
        {
            "rank": 1,
            "numel_in_count": 9801523,
            "numel_out_count": 9801523,
            "timeout_seconds": 600.0,
            "elapsed_seconds": 600.02,
        },
    ),
    "bytes-from-gib-vllm-free-memory": Case(
        "[2026-02-24T20:21:58Z] (EngineCore_DP0 pid=6940) ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) "
        "on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). Decrease GPU memory utilization "
        "or reduce GPU memory used by other processes.",
        "llm/vllm-free-memory-less-than-utilization",
        {"gpu_index": 1, "free_bytes": 21227875860, "total_bytes": 23676007219, "requested_bytes": 21303037788},
    ),
    "xid-fallen-off-bus": Case(
        "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus", "gpu/xid-79-fallen-off-bus", {"xid": 79}
    ),
    "xid-gsp-timeout-with-gpu-and-seconds": Case(
        "[ 3947.590120] NVRM: Xid (PCI:0000:61:00): 119, pid=123417, name=nv-hostengine, Timeout after 6s of waiting "
        "for RPC response from GPU0 GSP! Expected function 10 (FREE) (0xc0000005 0x0).",
        "gpu/xid-119-gsp-timeout",
        {"xid": 119, "timeout_seconds": 6.0, "gpu_index": 0},
    ),
    "xid-mig-contained-ecc": Case(
        "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
        "gpu/xid-94-contained-ecc",
        {"xid": 94},
    ),
    "gpu-index-nvidia-smi-gpu-lost": Case(
        "Unable to determine the device handle for GPU1: 0000:34:00.0: Unknown Error", "gpu/gpu-lost", {"gpu_index": 1}
    ),
    "gpu-index-ggml-cudamalloc": Case(
        "deep-seek-1  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: "
        "cudaMalloc failed: out of memory",
        "llm/llamacpp-cuda-malloc-oom",
        {"requested_bytes": 10345250816, "gpu_index": 1},
    ),
    "gpu-index-ggml-cuda-error-with-context": Case(
        "CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm at "
        "C:\\Users\\user\\git\\ollama\\llm\\llama.cpp\\ggml-cuda.cu:8583",
        "llm/llamacpp-cuda-error-oom",
        {"gpu_index": 0},
    ),
    "generic-cuda-error-without-ggml-context": Case(
        "RuntimeError: CUDA error: out of memory", "cuda/cuda-error-out-of-memory", {}
    ),
    "exit-code-ollama-runner-hex": Case(
        "Error: llama runner process has terminated: exit status 0xc000001d",
        "llm/ollama-runner-terminated",
        {"exit_code": 0xC000001D},
    ),
    "exit-code-kubectl-describe": Case("      Exit Code:    137", "k8s/container-exit-137", {"exit_code": 137}),
    "exit-code-vllm-engine-core": Case(
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}",
        "llm/vllm-engine-core-init-failed",
        {"exit_code": 1},
    ),
    "count-vllm-tensor-parallel": Case(
        "ValueError: Total number of attention heads (52) must be divisible by tensor parallel size (8).",
        "llm/vllm-tp-size-not-dividing-attention-heads",
        {"attention_heads_count": 52, "tensor_parallel_gpu_count": 8},
    ),
}


_catalog = builtin_catalog
_engine = builtin_engine


def _primary_and_values(case: Case) -> tuple[str | None, dict[str, int | float] | None]:
    """The primary signature of ``case.line`` and the values of the asserted signature's match."""
    ranked = rank(_engine().match(case.line))
    primary = ranked[0].signature.id if ranked else None
    wanted = case.signature or case.primary
    found = [m for m in ranked if m.signature.id == wanted]
    return primary, (capture_values(found[0].captures) if found else None)


class TestBuiltinCaptures:
    @pytest.mark.parametrize("name", sorted(CASES))
    def test_line_yields_primary_and_base_unit_values(self, name: str) -> None:
        """A real line is claimed by the expected primary and its quantities come out in base units."""
        case = CASES[name]
        assert (case.primary, case.values) == _primary_and_values(case)

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_line_is_one_of_the_signatures_own_examples(self, name: str) -> None:
        """Each table line is a real example of the signature whose values it asserts."""
        case = CASES[name]
        assert case.line in _catalog().by_id()[case.signature or case.primary].examples.match

    def test_table_covers_every_quantity_kind(self) -> None:
        """The table asserts bytes, tokens, seconds from ms, bytes from GiB, xid, gpu_index and exit_code."""
        kinds = {"bytes-", "tokens-", "seconds-from-ms-", "bytes-from-gib-", "xid-", "gpu-index-", "exit-code-"}
        assert set() == {kind for kind in kinds if not any(name.startswith(kind) for name in CASES)}
