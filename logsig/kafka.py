"""Kafka client options shared by the consumer, the producer and the admin client (security included)."""

from __future__ import annotations

import ssl
from typing import Any

from logsig.config import KafkaSettings


def client_options(settings: KafkaSettings) -> dict[str, Any]:
    """aiokafka keyword arguments for bootstrap servers, client id and security."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.bootstrap_servers,
        "client_id": settings.client_id,
        "security_protocol": settings.security_protocol,
    }
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        options["ssl_context"] = ssl.create_default_context(
            cafile=str(settings.ssl_cafile) if settings.ssl_cafile else None)
    if settings.security_protocol.startswith("SASL"):
        options["sasl_mechanism"] = settings.sasl_mechanism
        options["sasl_plain_username"] = settings.sasl_username
        options["sasl_plain_password"] = (
            settings.sasl_password.get_secret_value() if settings.sasl_password else None)
    return options
