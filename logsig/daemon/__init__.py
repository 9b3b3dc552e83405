"""The asyncio service: Kafka source and sink, HTTP endpoint, and the runner that wires them.

The only package that imports aiokafka and aiohttp; the pure core (decode, match, enrich) lives
in :mod:`logsig.decode`, :mod:`logsig.matchers` and :mod:`logsig.pipeline`.
"""
