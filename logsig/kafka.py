"""Kafka client options shared by the consumer, the producer and the admin client (security included)."""

from __future__ import annotations

import ssl
from typing import Any

from logsig.config import KafkaSettings
from logsig.config_security import load_client_certificate


def client_options(settings: KafkaSettings) -> dict[str, Any]:
    """aiokafka keyword arguments for bootstrap servers, client id and security.

    TLS (SSL, SASL_SSL): the server is verified against ``ssl_cafile`` (else the system CAs) and its
    host name; ``ssl_certfile``/``ssl_keyfile``/``ssl_password`` give the client certificate (mTLS).
    """
    options: dict[str, Any] = {
        "bootstrap_servers": settings.bootstrap_servers,
        "client_id": settings.client_id,
        "security_protocol": settings.security_protocol,
    }
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        context = ssl.create_default_context(cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)
        if settings.ssl_certfile is not None:
            load_client_certificate(context, settings)
        options["ssl_context"] = context
    if settings.security_protocol.startswith("SASL"):
        options["sasl_mechanism"] = settings.sasl_mechanism
        options["sasl_plain_username"] = settings.sasl_username
        options["sasl_plain_password"] = (
            settings.sasl_password.get_secret_value() if settings.sasl_password else None)
    return options
