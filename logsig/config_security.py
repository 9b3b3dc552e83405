"""Completeness of the Kafka security settings, checked when the settings load (before any connection).

Only with ``security_protocol`` SSL or SASL_SSL are the TLS settings checked; otherwise they are
ignored, as the Kafka clients ignore them.

Each problem names the settings involved and what to set. The rules follow Python's
``ssl.SSLContext.load_cert_chain`` (certificate chain, optional key file, key password).
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logsig.config import KafkaSettings

TLS_PROTOCOLS = ("SSL", "SASL_SSL")


def kafka_security_problems(kafka: KafkaSettings) -> list[str]:
    """Problems of a :class:`logsig.config.KafkaSettings`'s client-certificate settings (empty: complete).

    The SASL settings are checked by the settings class itself.
    """
    return _tls_problems(kafka)


def _tls_problems(kafka: KafkaSettings) -> list[str]:
    if kafka.security_protocol in TLS_PROTOCOLS and (kafka.ssl_keyfile or kafka.ssl_password) \
            and not kafka.ssl_certfile:
        return ["ssl_keyfile and ssl_password need ssl_certfile (the client certificate chain, PEM)"]
    return []


def kafka_file_problems(kafka: KafkaSettings) -> list[str]:
    """Problems of the TLS files ``logsig run`` will use: unreadable, or a certificate and key that do
    not load (wrong or missing ``ssl_password``). Checked at start, not when settings merely load
    (``config show`` runs where the files are not)."""
    if kafka.security_protocol not in TLS_PROTOCOLS:
        return []
    problems = [f"{name}={path} is not a readable file" for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile")
                if (path := getattr(kafka, name)) is not None and not _readable(path)]
    if problems or not kafka.ssl_certfile:
        return problems
    return _load_problems(kafka)


def _readable(path: Path) -> bool:
    try:
        with path.open("rb"):
            return True
    except OSError:
        return False


def _load_problems(kafka: KafkaSettings) -> list[str]:
    """Load the client certificate and key as the connection will; the error says which part is wrong."""
    try:
        load_client_certificate(ssl.create_default_context(), kafka)
    except ssl.SSLError as error:
        hint = "" if kafka.ssl_password else " (an encrypted key needs ssl_password)"
        return [f"ssl_certfile/ssl_keyfile do not load as a certificate chain and its private key: "
                f"{error.reason or error}{hint}"]
    return []


def load_client_certificate(context: ssl.SSLContext, kafka: KafkaSettings) -> None:
    """Load ``ssl_certfile``/``ssl_keyfile``/``ssl_password`` into ``context`` (never prompts on a tty).

    Raises: ssl.SSLError when the files are not a certificate chain and its key, or the password is wrong.
    """
    secret = kafka.ssl_password.get_secret_value().encode() if kafka.ssl_password else b""
    context.load_cert_chain(str(kafka.ssl_certfile), str(kafka.ssl_keyfile) if kafka.ssl_keyfile else None,
                            lambda: secret)
