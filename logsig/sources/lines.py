"""The line source: a file or stdin, one raw record per line, in chunks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from logsig.records import Origin, RawRecord


def line_chunks(stream: BinaryIO, name: str, size: int) -> Iterator[list[RawRecord]]:
    """Lists of up to ``size`` records, one per line of ``stream`` (line ending removed).

    Each record's origin is ``file=name`` and its 1-based ``line_number``.
    """
    chunk: list[RawRecord] = []
    for number, line in enumerate(stream, start=1):
        chunk.append(RawRecord(value=line.rstrip(b"\r\n"), origin=Origin(file=name, line_number=number)))
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
