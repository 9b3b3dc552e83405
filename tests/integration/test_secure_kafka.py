"""logsig against a secured broker from deploy/local/kafka.py: SASL_SSL with SCRAM-SHA-512, and mTLS.

Certificates are made by the test (tests/integration/tls_files.py). logsig runs at debug level and its
whole log is scanned for every secret it was given.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError

from tests.integration.daemon_proc import start_daemon
from tests.integration.kafka_util import produce, read_all
from tests.integration.local_kafka import load_kafka_script
from tests.integration.stream_check import LINE_PRIMARY, line, make_topics, wait_for
from tests.integration.tls_files import Pki, make_pki

SCRAM_PASSWORD = "scram-Secret-7f3a9"
BROKER_KEY_PASSWORD = "broker-Key-Secret-51c2"
CLIENT_KEY_PASSWORD = "client-Key-Secret-a08e"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A CA, a broker certificate for 127.0.0.1 and a client certificate."""
    return make_pki(tmp_path_factory.mktemp("pki"), BROKER_KEY_PASSWORD, CLIENT_KEY_PASSWORD)


@pytest.fixture(scope="module")
def secure_broker(request: pytest.FixtureRequest, pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A broker in the mode given by the test's parameter (one per mode and module), stopped afterwards."""
    kafka = load_kafka_script()
    tls = kafka.TlsFiles(pki.broker_keystore, pki.broker_key_password, pki.ca)
    state = tmp_path_factory.mktemp(f"secure-{request.param}")
    broker = kafka.start_secure(state, request.param, tls, {"logsig": SCRAM_PASSWORD}, timeout_s=180.0)
    try:
        yield broker
    finally:
        kafka.stop(state)


def _security(mode: str, pki: Pki) -> dict[str, Any]:
    """The documented settings of each mode (docs/operations.md#secured-kafka)."""
    if mode == "sasl_ssl":
        return {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "logsig",
                "sasl_password": SCRAM_PASSWORD, "ssl_cafile": str(pki.ca)}
    return {"security_protocol": "SSL", "ssl_cafile": str(pki.ca), "ssl_certfile": str(pki.client_cert),
            "ssl_keyfile": str(pki.client_key), "ssl_password": CLIENT_KEY_PASSWORD}


def _secrets_in(text: str) -> list[str]:
    secrets = [SCRAM_PASSWORD, BROKER_KEY_PASSWORD, CLIENT_KEY_PASSWORD, "PRIVATE KEY"]
    return [secret for secret in secrets if secret in text]


def _run_once(tmp_path: Path, kafka: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "incomplete.yaml"
    config.write_text(yaml.safe_dump({"kafka": kafka, "http": {"host": "127.0.0.1", "port": 0}}))
    return subprocess.run([sys.executable, "-m", "logsig", "run", "--config", str(config)], capture_output=True,
                          text=True, timeout=120, check=False)


class TestSecuredKafka:
    @pytest.mark.parametrize("secure_broker", ["sasl_ssl", "mtls"], indirect=True)
    async def test_logsig_consumes_and_produces_over_the_secured_listener(
            self, secure_broker: Any, pki: Pki, tmp_path: Path) -> None:
        """With the documented settings logsig reads the input and writes the incident over the secured
        listener, and its debug log holds none of the passwords or key material."""
        plain, mode = secure_broker.plaintext_bootstrap, secure_broker.mode
        await make_topics(plain, [f"{mode}-in", f"{mode}-out", f"{mode}-dlq"])
        kafka = {"bootstrap_servers": secure_broker.bootstrap, "topics": [f"{mode}-in"], "group_id": mode,
                 "output_topic": f"{mode}-out", "dead_letter_topic": f"{mode}-dlq", "fetch_timeout_ms": 200,
                 **_security(mode, pki)}
        daemon = start_daemon(tmp_path, {"kafka": kafka, "logging": {"level": "debug", "format": "json"},
                                         "grouping": {"enabled": False}})
        try:
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            await produce(plain, f"{mode}-in", [line(0)])
            incidents = [orjson.loads(r.value) for r in await read_all(plain, f"{mode}-out", 1)]
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
        log = daemon.log_path.read_text(errors="replace")
        print(f"\nsecured Kafka ({mode}): 1 incident over {secure_broker.bootstrap}; log of {len(log)} bytes "
              f"at debug level, secrets found in it: {_secrets_in(log)}")
        assert ([LINE_PRIMARY], []) == ([i["signature"]["id"] for i in incidents], _secrets_in(log))

    @pytest.mark.parametrize("secure_broker", ["sasl_ssl"], indirect=True)
    async def test_wrong_password_is_retried_and_never_logged(self, secure_broker: Any, pki: Pki,
                                                              tmp_path: Path) -> None:
        """A wrong SCRAM password: logsig stays up, unready, retrying with the broker's refusal in its debug log,
        which holds neither the password given nor any other secret."""
        wrong = "wrong-Scram-Secret-0d41"
        kafka = {"bootstrap_servers": secure_broker.bootstrap, "topics": ["wrong-in"], "output_topic": "wrong-out",
                 "dead_letter_topic": "wrong-dlq", "retry_backoff_max_seconds": 1.0, "group_id": "wrong",
                 **_security("sasl_ssl", pki), "sasl_password": wrong}
        daemon = start_daemon(tmp_path, {"kafka": kafka, "logging": {"level": "debug", "format": "json"}})
        try:
            await wait_for(lambda: "retrying" in daemon.log_path.read_text(errors="replace"), 60, "a retry")
            alive = daemon.process.poll() is None
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
        log = daemon.log_path.read_text(errors="replace")
        assert (True, True, [], False) == (alive, "Authentication failed" in log, _secrets_in(log), wrong in log)

    @pytest.mark.parametrize("secure_broker", ["mtls"], indirect=True)
    async def test_mtls_listener_refuses_a_client_without_certificate(self, secure_broker: Any, pki: Pki) -> None:
        """The mTLS listener requires a client certificate: a client trusting the CA but without one cannot connect."""
        import ssl

        context = ssl.create_default_context(cafile=str(pki.ca))
        producer = AIOKafkaProducer(bootstrap_servers=secure_broker.bootstrap, security_protocol="SSL",
                                    ssl_context=context, request_timeout_ms=5000)
        with pytest.raises(KafkaConnectionError):
            await producer.start()
        await producer.stop()

    @pytest.mark.parametrize(("kafka", "message"), [
        ({"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "logsig"},
         "needs sasl_password"),
        ({"security_protocol": "SSL", "ssl_keyfile": "client-key.pem"}, "need ssl_certfile"),
        ({"security_protocol": "SSL", "ssl_certfile": "client.pem", "ssl_keyfile": "client-key.pem"},
         "an encrypted key needs ssl_password"),
    ], ids=["sasl_without_password", "key_without_certificate", "encrypted_key_without_password"])
    def test_incomplete_settings_stop_logsig_at_start(self, pki: Pki, tmp_path: Path, kafka: dict[str, Any],
                                                      message: str) -> None:
        """`logsig run` with incomplete security settings exits 2 at once, naming what is missing."""
        files = {"client.pem": str(pki.client_cert), "client-key.pem": str(pki.client_key)}
        kafka = {key: files.get(value, value) for key, value in kafka.items()}
        result = _run_once(tmp_path, kafka)
        assert (2, True) == (result.returncode, message in result.stderr), result.stderr
