"""The decode stage: record values to clean log events, with their Kubernetes source.

``decode_record(record, settings) -> DecodeResult`` decodes one record (pure, never raises);
:mod:`logsig.assemble` then joins partial lines and multi-line tracebacks per stream.
The formats and rules: ``docs/decoding.md``; what each shipper writes: ``docs/record-formats.md``.
"""

from logsig.decode.decoder import decode_record
from logsig.decode.result import DecodeResult
from logsig.decode.settings import DecodeSettings, MultilineSettings, TopicDecodeSettings

__all__ = [
    "DecodeResult",
    "DecodeSettings",
    "MultilineSettings",
    "TopicDecodeSettings",
    "decode_record",
]
