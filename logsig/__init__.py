"""logsig: known-failure detection for LLM inference-server logs.

Pipeline: source (Kafka, file/stdin) -> decode -> match -> enrich -> sink (Kafka, stdout,
Alertmanager), with telemetry beside them, wired in :mod:`logsig.daemon.runner` and
:mod:`logsig.scan`.
"""

__version__ = "0.1.0"
