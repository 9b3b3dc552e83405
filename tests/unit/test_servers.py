"""The stream's server, from banners and metadata, and the primary choice that respects it."""

from __future__ import annotations

import pytest

from logsig.config import load_settings
from logsig.enrich import rank
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.matchers.signature import Signature
from logsig.pipeline import Pipeline
from logsig.records import Origin, RawRecord, Source
from logsig.servers import ServerInfo, StreamServers, coverage, from_source, is_foreign, signature_servers

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.88 GiB. "
       "GPU 3 has a total capacity of 21.96 GiB of which 1.29 GiB is free.")
SEED = "llm/vllm-cuda-oom-during-prefill"


@pytest.fixture(scope="module")
def catalog() -> dict[str, Signature]:
    return load_catalog().by_id()


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_catalog().signatures)


def _fluentbit(pod: str, container: str, image: str, log: str, stream: str = "stderr") -> bytes:
    import orjson
    return orjson.dumps({"log": log, "stream": stream, "kubernetes": {
        "pod_name": pod, "namespace_name": "inference", "container_name": container,
        "container_image": image, "host": "gpu-node-1"}})


class TestFromSource:
    @pytest.mark.parametrize(("source", "expected"), [
        (Source(image="docker.io/vllm/vllm-openai:v0.6.3"), ServerInfo("vllm", "0.6.3", "image")),
        (Source(image="lmsysorg/sglang:v0.4.6.post1-cu124"), ServerInfo("sglang", "0.4.6.post1-cu124", "image")),
        (Source(image="ghcr.io/huggingface/text-generation-inference:2.2.0"), ServerInfo("tgi", "2.2.0", "image")),
        (Source(image="nvcr.io/nvidia/tritonserver:24.03-py3"), ServerInfo("triton", "24.03-py3", "image")),
        (Source(image="ollama/ollama:latest"), ServerInfo("ollama", None, "image")),
        (Source(container="sglang-server"), ServerInfo("sglang", None, "container")),
        (Source(container="main", labels={"app.kubernetes.io/name": "ollama"}), ServerInfo("ollama", None, "label")),
        (Source(container="main", image="busybox:1.36"), None),
    ])
    def test_metadata_names_the_server(self, source: Source, expected: ServerInfo | None) -> None:
        """Image, then container name, then labels name the server; unrelated metadata names none."""
        assert expected == from_source(source)


class TestSignatureServers:
    def test_seed_is_written_for_vllm(self, catalog: dict[str, Signature]) -> None:
        """The seed record names vLLM by its id and its versions."""
        assert frozenset({"vllm"}) == signature_servers(catalog[SEED])

    def test_platform_signatures_apply_everywhere(self, catalog: dict[str, Signature]) -> None:
        """A torch or NCCL signature is written for no one server."""
        assert (frozenset(), frozenset()) == (signature_servers(catalog["cuda/torch-oom"]),
                                              signature_servers(catalog["nccl/watchdog-timeout"]))

    def test_server_specific_ids(self, catalog: dict[str, Signature]) -> None:
        """TGI's shard failure is TGI's."""
        assert frozenset({"tgi"}) == signature_servers(catalog["llm/tgi-shard-cannot-start"])


class TestRank:
    def test_torch_oom_on_sglang_does_not_get_vllm_advice(self, engine: Engine) -> None:
        """On an SGLang stream, the generic torch OOM signature is primary, not the vLLM seed."""
        assert "cuda/torch-oom" == rank(engine.match(OOM), ServerInfo("sglang", None, "image"))[0].signature.id

    def test_torch_oom_on_an_unknown_server_does_not_get_vllm_advice(self, engine: Engine) -> None:
        """With the server unknown, the torch OOM signature, which covers all the seed matched, is primary; the seed follows."""
        ranked = [m.signature.id for m in rank(engine.match(OOM))]
        assert ("cuda/torch-oom", True) == (ranked[0], SEED in ranked[1:])

    def test_server_specific_text_stays_primary_on_an_unknown_server(self, engine: Engine) -> None:
        """With the server unknown, a server's signature matching more than the torch one (SGLang's capture wrapper) stays primary."""
        line = ("Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a "
                "total capacity of 95.00 GiB of which 25.56 MiB is free.")
        assert "llm/sglang-cuda-graph-capture-oom" == rank(engine.match(line))[0].signature.id

    def test_vllm_stream_keeps_the_seed(self, engine: Engine) -> None:
        """On a vLLM stream the vLLM-specific record stays primary."""
        assert SEED == rank(engine.match(OOM), ServerInfo("vllm", "0.4.3", "banner"))[0].signature.id


class TestCoverage:
    @pytest.mark.parametrize(("server", "expected"), [
        (ServerInfo("vllm", "0.4.3", "banner"), "yes"),
        (ServerInfo("vllm", "v0.6.3", "image"), "no"),
        (ServerInfo("vllm", None, "container"), "unknown"),
        (ServerInfo("sglang", "0.4.6", "image"), "no"),
        (None, "unknown"),
    ])
    def test_seed_versions(self, catalog: dict[str, Signature], server: ServerInfo | None, expected: str) -> None:
        """The seed says vllm==0.4.3: it covers that release only; other servers are never covered."""
        assert expected == coverage(catalog[SEED], server)

    def test_range_constraints(self) -> None:
        """``vllm>=0.6`` covers 0.8.5.post1 and not 0.5.4."""
        sig = Signature.model_validate({"id": "llm/vllm-x", "signature": "x", "regex": "x",
                                        "versions": [{"version": "vllm>=0.6"}]})
        assert ("yes", "no") == (coverage(sig, ServerInfo("vllm", "0.8.5.post1", "banner")),
                                 coverage(sig, ServerInfo("vllm", "0.5.4", "banner")))

    def test_foreign(self, catalog: dict[str, Signature]) -> None:
        """A vLLM record is foreign to a TGI stream and not to an unknown one."""
        assert (True, False) == (is_foreign(catalog[SEED], ServerInfo("tgi", None, "image")),
                                 is_foreign(catalog[SEED], None))


class TestStreamServers:
    def test_banner_wins_over_metadata_and_is_bounded(self) -> None:
        """A banner seen on a stream overrides metadata; the oldest stream is forgotten past the cap."""
        servers = StreamServers(max_streams=2)
        servers.saw_banner("a", ServerInfo("vllm", "0.8.5", "banner"))
        servers.saw_banner("b", ServerInfo("tgi", None, "banner"))
        servers.saw_banner("c", ServerInfo("sglang", None, "banner"))
        assert (None, ServerInfo("tgi", None, "banner")) == (
            servers.server("a", Source()), servers.server("b", Source(image="vllm/vllm-openai:v0.6.3")))


class TestPipeline:
    def _pipeline(self, engine: Engine) -> Pipeline:
        return Pipeline(engine, load_settings(decode={"multiline": {"enabled": False}}).decode)

    def test_banner_names_the_server_of_later_incidents(self, engine: Engine) -> None:
        """vLLM's banner on stdout, then an OOM on stderr of the same container: server vllm 0.8.5.post1."""
        records = [
            RawRecord(_fluentbit("p-1", "main", "registry.local/llm:1", "INFO 05-11 09:41:06 [api_server.py:1043] "
                                 "vLLM API server version 0.8.5.post1", stream="stdout"), Origin(topic="t", partition=0, offset=0)),
            RawRecord(_fluentbit("p-1", "main", "registry.local/llm:1", OOM), Origin(topic="t", partition=0, offset=1)),
        ]
        step = self._pipeline(engine).process(records, 0.0)
        assert 1 == len(step.detections)
        server = step.detections[0].incident.server
        assert server is not None
        assert ("vllm", "0.8.5.post1", "banner", "no") == (server.name, server.version, server.evidence,
                                                           server.signature_covers)

    def test_image_names_the_server(self, engine: Engine) -> None:
        """An OOM from an SGLang image gets the generic torch OOM record, with the server named."""
        record = RawRecord(_fluentbit("p-2", "server", "lmsysorg/sglang:v0.4.6.post1-cu124", OOM),
                           Origin(topic="t", partition=0, offset=0))
        incident = self._pipeline(engine).process([record], 0.0).detections[0].incident
        assert ("cuda/torch-oom", "sglang") == (incident.signature.id, incident.server.name if incident.server else None)
        assert SEED in incident.also_matched

    def test_no_metadata_no_server(self, engine: Engine) -> None:
        """A plain line with no banner and no metadata names no server and gets the torch advice, not vLLM's."""
        record = RawRecord(OOM.encode(), Origin(file="f", line_number=1))
        incident = self._pipeline(engine).process([record], 0.0).detections[0].incident
        assert ("cuda/torch-oom", None) == (incident.signature.id, incident.server)

    def test_trainer_container_without_banner_gets_the_torch_advice(self, engine: Engine) -> None:
        """An OOM from a container named trainer (no banner, no server image) is not given the vLLM seed."""
        record = RawRecord(_fluentbit("trainer-0", "trainer", "pytorch/pytorch:2.4.0-cuda12.4", OOM),
                           Origin(topic="t", partition=0, offset=0))
        incident = self._pipeline(engine).process([record], 0.0).detections[0].incident
        assert ("cuda/torch-oom", None, True) == (incident.signature.id, incident.server, SEED in incident.also_matched)
