"""Which signature names an incident when a wrapper carries its cause, and how many incidents one failure raises."""

from __future__ import annotations

from functools import cache

from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord

TGI_OOM = ("Server error: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 22.19 GiB total capacity; 19.46 GiB "
           "already allocated; 1.53 GiB free; 19.68 GiB reserved in total by PyTorch)")


@cache
def _engine() -> Engine:
    return Engine(load_catalog().signatures)


def _primaries(lines: list[str]) -> list[str]:
    """The primary signature id of each incident ``lines`` raise, one line per record, in order."""
    pipeline = Pipeline(_engine(), load_settings(decode={"multiline": {"enabled": False}}).decode)
    records = [RawRecord(value=line.encode(), origin=Origin(file="review", line_number=n))
               for n, line in enumerate(lines, start=1)]
    return [d.incident.signature.id for d in pipeline.process(records, 0.0).detections]


class TestReviewRanking:
    def test_tgi_warmup_oom_names_the_warmup_oom(self) -> None:
        """The router's warm-up call that failed on a CUDA OOM names TGI's warm-up OOM, not the wrapper."""
        line = ("2024-03-20T12:09:36.741697Z ERROR warmup{max_input_length=1024 max_prefill_tokens=4096}:warmup: "
                f"text_generation_client: router/client/src/lib.rs:33: {TGI_OOM}")
        assert ["llm/tgi-warmup-cuda-oom"] == _primaries([line])

    def test_shard_server_error_ranks_below_the_cause_it_carries(self) -> None:
        """A prefill call whose server error is a CUDA OOM names the OOM; the wrapper alone names itself."""
        head = ("2024-08-01T17:14:52.447085Z ERROR batch{batch_size=1}:prefill:prefill{id=79 size=1}: "
                "text_generation_client: router/client/src/lib.rs:46: Server error:")
        assert ["cuda/torch-oom", "llm/tgi-shard-server-error"] == _primaries([f"{head} {TGI_OOM}", head])

    def test_nccl_warn_and_its_trace_raise_one_incident(self) -> None:
        """NCCL's WARN names the failure; the INFO ``file.cc:N -> 6`` lines after it raise nothing."""
        # https://github.com/NVIDIA/nccl/issues/1612
        lines = ["[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
                 *(f"[0] NCCL INFO {frame} -> 6" for frame in (
                     "misc/socket.cc:80", "misc/socket.cc:474", "misc/socket.cc:628", "bootstrap.cc:701",
                     "init.cc:1402"))]
        assert ["nccl/socket-connection-closed"] == _primaries(lines)

    def test_trtllm_world_size_check_names_the_launch(self) -> None:
        """TensorRT-LLM's mpiSize == tp * pp check names the rank count, not a generic assertion."""
        line = ("[TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/LLM/main/"
                "L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:96)")
        assert ["llm/trtllm-mpi-size-mismatch"] == _primaries([line])

    def test_ulimit_advice_quoting_an_error_raises_nothing(self) -> None:
        """vLLM's start-up ulimit warning, which quotes `Too many open files` as an example, raises no incident."""
        line = ("WARNING 01-28 10:05:01 [utils.py:2573] Found ulimit of 1024 and failed to automatically increase "
                "with error current limit exceeds maximum limit. This can cause fd limit errors like `OSError: "
                "[Errno 24] Too many open files`. Consider increasing with ulimit -n")
        assert [] == _primaries([line])

    def test_trtllm_gpus_per_node_check_names_the_visible_gpus(self) -> None:
        """TensorRT-LLM's GPUs-per-node check names the GPUs the node exposes, not a generic assertion."""
        line = ("[TensorRT-LLM][ERROR] Assertion failed: Number of GPUs per node 1 must be at least as large as TP (2) "
                "* PP (1) (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:62)")
        assert ["llm/trtllm-gpus-per-node-below-world-size"] == _primaries([line])
