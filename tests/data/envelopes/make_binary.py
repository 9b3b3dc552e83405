"""Regenerate the binary fixture values from the ``value_source`` of their JSON fixture.

    python tests/data/envelopes/make_binary.py

fluentbit_msgpack.bin: the Fluent Bit map packed as msgpack (as ``format msgpack`` writes it);
otlp_proto.bin: the OTLP/JSON batch as a protobuf ``ExportLogsServiceRequest`` (needs the
opentelemetry-proto package).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

HERE = Path(__file__).parent


def main() -> None:
    """Write both binary files next to this script."""
    fluentbit = json.loads((HERE / "fluentbit_msgpack.json").read_text())["value_source"]
    (HERE / "fluentbit_msgpack.bin").write_bytes(msgpack.packb(fluentbit))
    batch = json.loads((HERE / "otlp_proto.json").read_text())["value_source"]
    request = json_format.ParseDict(batch, ExportLogsServiceRequest())
    (HERE / "otlp_proto.bin").write_bytes(request.SerializeToString(deterministic=True))


if __name__ == "__main__":
    main()
