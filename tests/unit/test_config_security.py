"""Kafka security and delivery settings: incomplete ones are refused when the settings load, naming what is missing."""

import subprocess
from pathlib import Path

import pytest

from logsig.config import KafkaSettings, load_settings
from logsig.config_security import kafka_file_problems
from logsig.errors import ConfigError
from logsig.kafka import client_options


def _client_certificate(directory: Path, password: str | None) -> tuple[Path, Path]:
    """A self-signed certificate and its key (encrypted with ``password`` when given), made by openssl."""
    cert, key = directory / "client.pem", directory / "client-key.pem"
    encrypt = ["-passout", f"pass:{password}"] if password else ["-noenc"]
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-days", "1", "-subj", "/CN=logsig",
                    "-keyout", str(key), "-out", str(cert), *encrypt], check=True, capture_output=True)
    return cert, key


class TestSecuritySettings:
    def test_sasl_without_password_is_refused(self) -> None:
        """SASL_SSL with a mechanism and user but no password is an error naming sasl_password."""
        with pytest.raises(ConfigError, match="needs sasl_password"):
            load_settings(kafka={"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                                 "sasl_username": "logsig"})

    def test_key_without_certificate_is_refused(self, tmp_path: Path) -> None:
        """ssl_keyfile without ssl_certfile names the missing certificate chain."""
        _, key = _client_certificate(tmp_path, None)
        with pytest.raises(ConfigError, match="need ssl_certfile"):
            load_settings(kafka={"security_protocol": "SSL", "ssl_keyfile": str(key)})

    def test_missing_certificate_file_is_named(self, tmp_path: Path) -> None:
        """A certificate path that does not exist is named by the start-time check."""
        settings = KafkaSettings(security_protocol="SSL", ssl_certfile=tmp_path / "nope.pem")
        assert [f"ssl_certfile={tmp_path / 'nope.pem'} is not a readable file"] == kafka_file_problems(settings)

    def test_encrypted_key_without_password_is_named(self, tmp_path: Path) -> None:
        """An encrypted key with no ssl_password fails the start-time check with the hint, and never prompts."""
        cert, key = _client_certificate(tmp_path, "s3cret-key-pass")
        problems = kafka_file_problems(KafkaSettings(security_protocol="SSL", ssl_certfile=cert, ssl_keyfile=key))
        assert (1, True) == (len(problems), problems[0].endswith("(an encrypted key needs ssl_password)"))

    def test_wrong_key_password_is_named_without_echoing_it(self, tmp_path: Path) -> None:
        """A wrong ssl_password is a problem whose message does not contain the password."""
        cert, key = _client_certificate(tmp_path, "s3cret-key-pass")
        problems = kafka_file_problems(KafkaSettings(security_protocol="SSL", ssl_certfile=cert, ssl_keyfile=key,
                                                     ssl_password="wrong-pass-123"))
        assert (1, True, False) == (len(problems), "do not load" in problems[0], "wrong-pass-123" in problems[0])

    def test_complete_client_certificate_has_no_problem(self, tmp_path: Path) -> None:
        """The right key password passes the start-time check."""
        cert, key = _client_certificate(tmp_path, "s3cret-key-pass")
        assert [] == kafka_file_problems(KafkaSettings(security_protocol="SSL", ssl_certfile=cert, ssl_keyfile=key,
                                                       ssl_password="s3cret-key-pass"))

    def test_client_certificate_is_loaded_into_the_context(self, tmp_path: Path) -> None:
        """Complete mTLS settings give aiokafka an SSL context holding the client certificate."""
        cert, key = _client_certificate(tmp_path, "s3cret-key-pass")
        settings = KafkaSettings(security_protocol="SSL", ssl_cafile=cert, ssl_certfile=cert, ssl_keyfile=key,
                                 ssl_password="s3cret-key-pass")
        options = client_options(settings)
        assert ("SSL", 1) == (options["security_protocol"], options["ssl_context"].cert_store_stats()["x509_ca"])

    def test_secrets_are_masked_in_the_dump(self, tmp_path: Path) -> None:
        """config show masks the key password as it masks the SASL password."""
        cert, key = _client_certificate(tmp_path, "s3cret-key-pass")
        settings = load_settings(kafka={"security_protocol": "SSL", "ssl_certfile": str(cert),
                                        "ssl_keyfile": str(key), "ssl_password": "s3cret-key-pass"})
        assert "s3cret-key-pass" not in settings.model_dump_json()


class TestDeliverySettings:
    def test_exactly_once_needs_a_stable_identity(self) -> None:
        """exactly_once without group_instance_id or transactional_id is refused, naming both."""
        with pytest.raises(ConfigError, match=r"set group_instance_id .* or transactional_id"):
            load_settings(kafka={"delivery": "exactly_once"})

    def test_transactional_id_defaults_to_group_and_instance(self) -> None:
        """The transactional id is <group_id>-<group_instance_id> unless set."""
        settings = KafkaSettings(delivery="exactly_once", group_id="logsig", group_instance_id="logsig-2")
        assert "logsig-logsig-2" == settings.effective_transactional_id()

    def test_at_least_once_has_no_transactional_id(self) -> None:
        """The default mode uses the idempotent producer without transactions."""
        assert None is KafkaSettings(group_instance_id="logsig-2").effective_transactional_id()

    def test_heartbeat_must_be_below_the_session_timeout(self) -> None:
        """A heartbeat interval at or above the session timeout is refused."""
        with pytest.raises(ConfigError, match=r"heartbeat_interval_ms .* must be below session_timeout_ms"):
            load_settings(kafka={"session_timeout_ms": 6000, "heartbeat_interval_ms": 6000})
