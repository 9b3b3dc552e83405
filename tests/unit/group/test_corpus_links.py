"""Real corpus excerpts through the pipeline and the grouping stage: a failure and its consequence link up."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from logsig.decode.settings import DecodeSettings
from logsig.group.settings import GroupSettings
from logsig.group.stage import GroupStage
from logsig.incident import Incident
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord

CORPUS = Path(__file__).parents[2] / "data" / "corpus"
CATALOG = load_catalog()


def excerpt(excerpt_id: str) -> list[str]:
    """The lines of one real-log excerpt."""
    for line in (CORPUS / "real_logs.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == excerpt_id:
            return [str(x) for x in row["lines"]]
    raise KeyError(excerpt_id)


def fluent_bit(lines: list[str], pod: str, start: float) -> list[RawRecord]:
    """One Fluent Bit record per line from ``pod``, logged 10 ms apart from ``start`` (Unix seconds)."""
    kubernetes = {"pod_name": pod, "namespace_name": "inference", "container_name": "vllm"}
    return [RawRecord(orjson.dumps({"@timestamp": start + i / 100, "log": line, "stream": "stderr",
                                    "kubernetes": kubernetes}), Origin(topic="logs", partition=0, offset=i))
            for i, line in enumerate(lines)]


def grouped(records: list[RawRecord]) -> list[Incident]:
    """The opened events of ``records`` through the built-in catalog and the grouping stage (log time)."""
    pipeline = Pipeline(Engine(CATALOG.signatures), DecodeSettings())
    stage = GroupStage(GroupSettings())
    steps = [stage.step(pipeline.process(records, 0.0)), stage.flush(pipeline.flush_all(), resolve=True)]
    return [d.incident for step in steps for d in step.detections if d.incident.status == "opened"]


class TestCorpusLinks:
    def test_oom_traceback_then_engine_dead_is_a_linked_pair(self) -> None:
        """A worker's CUDA OOM traceback followed by the API server's EngineDeadError on one pod: the OOM opens
        first, and the engine-dead group names it as its cause."""
        lines = excerpt("torch-oom-vllm-workerprocess-1") + excerpt("vllm-engine-dead-bracket-1")
        opened = grouped(fluent_bit(lines, "vllm-0", 1_746_361_380.0))
        oom, dead = opened[0], next(e for e in opened if e.signature.id == "llm/vllm-engine-dead")
        assert oom.group is not None
        assert ("llm/vllm-cuda-oom-during-prefill", (oom.group.key, "llm/vllm-cuda-oom-during-prefill")) == (
            oom.signature.id, (dead.caused_by.key, dead.caused_by.signature_id) if dead.caused_by else None)

    def test_worker_oom_then_worker_died_is_a_linked_pair(self) -> None:
        """The engine core's 'Worker failed with error CUDA out of memory' then 'Worker proc ... died
        unexpectedly' on one pod: the worker-died group names the OOM group as its cause."""
        opened = grouped(fluent_bit(excerpt("torch-oom-wrapped-worker-failed-1"), "vllm-0", 1_755_187_615.0))
        died = next(e for e in opened if e.signature.id == "llm/vllm-worker-proc-died-unexpectedly")
        oom = opened[0]
        assert oom.group is not None
        assert ("llm/vllm-cuda-oom-during-prefill", (oom.group.key, oom.signature.id)) == (
            oom.signature.id, (died.caused_by.key, died.caused_by.signature_id) if died.caused_by else None)

    def test_the_same_lines_on_two_pods_link_within_each_pod_only(self) -> None:
        """The OOM on one pod is not the cause of the engine-dead error on another."""
        records = (fluent_bit(excerpt("torch-oom-vllm-workerprocess-1"), "vllm-0", 1_746_361_380.0)
                   + fluent_bit(excerpt("vllm-engine-dead-bracket-1"), "vllm-1", 1_746_361_381.0))
        dead = next(e for e in grouped(records) if e.signature.id == "llm/vllm-engine-dead")
        assert None is dead.caused_by


class TestBuiltinChains:
    def test_the_catalog_links_the_chains_real_logs_show(self) -> None:
        """OOM -> engine dead -> restart, NCCL timeout -> engine dead, NCCL timeout -> worker died -> engine
        dead, Xid 79 -> CUDA and NCCL errors."""
        sigs = CATALOG.by_id()
        edges = {(a, b) for a, sig in sigs.items() for b in sig.transition_graph.leads_to}
        edges |= {(a, b) for b, sig in sigs.items() for a in sig.transition_graph.preceded_by}
        wanted = {("llm/vllm-cuda-oom-during-prefill", "llm/vllm-engine-dead"), ("cuda/torch-oom", "llm/vllm-engine-dead"),
                  ("llm/vllm-engine-dead", "k8s/probe-failed-restart"), ("nccl/watchdog-timeout", "llm/vllm-engine-dead"),
                  ("gpu/xid-79-fallen-off-bus", "cuda/no-cuda-device"),
                  ("gpu/xid-79-fallen-off-bus", "nccl/unhandled-cuda-error"),
                  ("nccl/watchdog-timeout", "llm/vllm-worker-proc-died-unexpectedly"),
                  ("llm/vllm-worker-proc-died-unexpectedly", "llm/vllm-engine-dead")}
        assert wanted == wanted & edges
