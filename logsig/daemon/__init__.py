"""The asyncio service: the runner that wires source, pipeline and sinks; reload; HTTP endpoints.

Kafka and HTTP clients live at the edges (:mod:`logsig.sources`, :mod:`logsig.sinks`); the pure core
(decode, assemble, match, enrich) lives in :mod:`logsig.decode`, :mod:`logsig.assemble`,
:mod:`logsig.matchers`, :mod:`logsig.enrich` and :mod:`logsig.pipeline`.
"""
