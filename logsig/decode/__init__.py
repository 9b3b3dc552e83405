"""The decode stage: record values to clean log events, with their Kubernetes source.

``decode_record(record, settings) -> DecodeResult`` decodes one record (pure, never raises);
``Assembler`` joins partial lines and multi-line tracebacks per stream before matching.
See the README (Decoding) for the formats and rules.
"""

from logsig.decode.decoder import decode_record
from logsig.decode.multiline import Assembler
from logsig.decode.result import DecodeResult
from logsig.decode.settings import DecodeSettings, MultilineSettings, TopicDecodeSettings

__all__ = [
    "Assembler",
    "DecodeResult",
    "DecodeSettings",
    "MultilineSettings",
    "TopicDecodeSettings",
    "decode_record",
]
