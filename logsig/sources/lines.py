"""The line source: a file or stdin, one raw record per line, in batches; gzip and zstd files are
decompressed on the fly (recognised by their magic bytes, RFC 1952 and RFC 8878, not by name).

A line is what binary-mode iteration of the file gives (split at ``\\n``), with its line ending
removed (trailing ``\\r`` and ``\\n`` characters); a UTF-8 byte order mark at the start of a file
is dropped. :func:`line_batches` builds no record object: a :class:`~logsig.batch.RecordBatch` makes
one only for a line that needs it.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, cast

import zstandard

from logsig.batch import RecordBatch, batch_of_lines
from logsig.records import Origin, RawRecord

BLOCK_BYTES = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
UTF8_BOM = b"\xef\xbb\xbf"  # what Windows editors put first in a UTF-8 file; not part of the line


@dataclass(frozen=True, slots=True)
class Input:
    """An opened input: ``stream`` yields the (decompressed) lines; ``raw`` is the file on disk and
    ``size`` its length in bytes (both None for stdin), so ``raw.tell()`` measures progress."""

    name: str
    stream: BinaryIO
    raw: BinaryIO | None = None
    size: int | None = None

    def position(self) -> int:
        """Bytes of the file on disk read so far (0 for stdin)."""
        return self.raw.tell() if self.raw is not None and not self.raw.closed else 0


def _decompressed(raw: BinaryIO) -> BinaryIO:
    magic = raw.read(4)
    raw.seek(0)
    if magic.startswith(GZIP_MAGIC):
        return cast(BinaryIO, gzip.GzipFile(fileobj=raw, mode="rb"))
    if magic == ZSTD_MAGIC:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return cast(BinaryIO, io.BufferedReader(reader))
    return raw


@contextmanager
def open_input(path: str) -> Iterator[Input]:
    """Open ``path`` (``-`` is stdin) for :func:`line_batches`.

    Raises:
        OSError: the file cannot be opened, or is a corrupt gzip or zstd stream (the message names it).
    """
    if path == "-":
        yield Input("<stdin>", sys.stdin.buffer)
        return
    with open(path, "rb") as raw:
        stream = _decompressed(raw)
        try:
            yield Input(path, stream, raw, os.fstat(raw.fileno()).st_size)
        except (zstandard.ZstdError, gzip.BadGzipFile, zlib.error, EOFError) as error:
            raise OSError(f"{path}: corrupt compressed input: {error}") from error
        finally:
            if stream is not raw:
                stream.close()


def line_batches(stream: BinaryIO, name: str, block_bytes: int = BLOCK_BYTES) -> Iterator[RecordBatch]:
    """Batches of the lines of ``stream``, about ``block_bytes`` at a time; origin ``file=name`` and the
    1-based ``line_number``."""
    carry, number, first = b"", 1, True
    while block := stream.read(block_bytes):
        if first:
            block, first = block.removeprefix(UTF8_BOM), False
        block = carry + block
        lines = block.split(b"\n")
        carry = lines.pop()
        if lines:
            yield batch_of_lines(_strip(lines) if b"\r" in block else lines, name, number)
            number += len(lines)
    if carry:
        yield batch_of_lines(_strip([carry]), name, number)


def _strip(lines: list[bytes]) -> list[bytes]:
    """Lines without trailing ``\\r`` (the ``\\n`` is already gone)."""
    return [line.rstrip(b"\r") for line in lines]


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
