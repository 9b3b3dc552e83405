"""The unclassified tier end to end against the real broker: incidents, counter and /unclassified."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from tests.integration.daemon_proc import http_get, metric_value, start_daemon
from tests.integration.kafka_util import make_topic, produce, read_all, wait_committed

UNKNOWN = "(APIServer pid={pid}) ERROR 09-24 20:59:5{rank} [serving_chat.py:241] Error in postprocessing detokenized outputs"
"""A vLLM-style ERROR line no specific signature names; pid varies."""
BENIGN = "INFO 04-10 03:35:27 [loggers.py:80] Avg prompt throughput: 13.0 tokens/s, Running: 0 reqs"


def _fluent_bit(line: str, pod: str) -> bytes:
    return orjson.dumps({"log": line, "stream": "stderr",
                         "kubernetes": {"pod_name": pod, "namespace_name": "ml", "container_name": "vllm"}})


class TestUnclassifiedEndToEnd:
    async def test_burst_on_three_pods_is_one_template_at_the_endpoint(self, kafka_bootstrap: str,
                                                                     tmp_path: Path) -> None:
        """An unknown failure on three pods gives generic incidents with one fingerprint, a count of 6 in
        logsig_unclassified_total and one /unclassified template listing the three pods."""
        topic = await make_topic(kafka_bootstrap)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap)
        values = [_fluent_bit(UNKNOWN.format(rank=n % 3, pid=100 + n), f"vllm-{n % 3}") for n in range(6)]
        values += [_fluent_bit(BENIGN, "vllm-0")]
        await produce(kafka_bootstrap, topic, values)
        settings = {"kafka": {"bootstrap_servers": kafka_bootstrap, "topics": [topic], "output_topic": out,
                              "dead_letter_topic": dlq, "group_id": "g-unclassified", "fetch_timeout_ms": 200},
                    "grouping": {"enabled": False}}
        daemon = start_daemon(tmp_path, settings)
        try:
            daemon.wait_ready()
            await wait_committed(kafka_bootstrap, "g-unclassified", topic, daemon)
            incidents = [orjson.loads(r.value) for r in await read_all(kafka_bootstrap, out, 6)]
            daemon.wait_metric("logsig_unclassified_total", 6, domain="generic")
            status, body = http_get(f"{daemon.base_url}/unclassified")
            metrics = daemon.metrics()
        finally:
            assert 0 == daemon.terminate()
        assert ({"generic"}, 1) == ({i["tier"] for i in incidents}, len({i["fingerprint"] for i in incidents}))
        assert 6.0 == metric_value(metrics, "logsig_unclassified_total", domain="generic")
        view = json.loads(body)
        top = view["templates"][0]
        assert (200, 6, 1, incidents[0]["fingerprint"], ["vllm-0", "vllm-1", "vllm-2"], "generic/error-message") == (
            status, view["total"], view["tracked"], top["fingerprint"], sorted(top["pods"]), top["signature_id"])
