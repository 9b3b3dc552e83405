"""The line source: a file or stdin, one raw record per line, in batches; gzip and zstd files and
stdin are decompressed on the fly (recognised by their magic bytes, RFC 1952 and RFC 8878, not by name).

A corrupt or truncated compressed stream gives every line decompressed before the damage (the last,
unterminated, one too), then raises OSError naming the input, as zcat writes what it could before
its error.

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
from typing import Any, BinaryIO, cast

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


CORRUPT = (zstandard.ZstdError, gzip.BadGzipFile, zlib.error, EOFError)
"""What a corrupt or truncated gzip or zstd stream raises while it is read."""


class _Prefixed(io.RawIOBase):
    """``head`` (bytes already read from ``rest``) and then the rest of ``rest``: a pipe read again from its start."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data, self._head = (self._head[:len(buffer)], self._head[len(buffer):]) if self._head else (
            _read1(self._rest, len(buffer)), b"")
        buffer[:len(data)] = data
        return len(data)


def _read1(stream: BinaryIO, size: int) -> bytes:
    """At most ``size`` bytes of ``stream`` in one read where the stream can (``read1``), else ``read``."""
    read1 = getattr(stream, "read1", None)
    return cast(bytes, read1(size) if read1 is not None else stream.read(size))


def _head(stream: BinaryIO, size: int) -> bytes:
    """The first ``size`` bytes of ``stream`` (fewer at its end), across short reads of a pipe."""
    head = b""
    while len(head) < size and (chunk := stream.read(size - len(head))):
        head += chunk
    return head


def _decompressed(raw: BinaryIO) -> BinaryIO:
    """``raw`` decompressed when it starts with gzip's or zstd's magic bytes, else ``raw``; a stream that
    cannot seek (stdin) is read again from its start through :class:`_Prefixed`."""
    if raw.seekable():
        magic = raw.read(4)
        raw.seek(0)
    else:
        magic = _head(raw, 4)
        raw = cast(BinaryIO, io.BufferedReader(_Prefixed(magic, raw)))
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
        try:
            yield Input("<stdin>", _decompressed(sys.stdin.buffer))
        except CORRUPT as error:
            raise OSError(f"<stdin>: corrupt compressed input: {error}") from error
        return
    with open(path, "rb") as raw:
        stream = _decompressed(raw)
        try:
            yield Input(path, stream, raw, os.fstat(raw.fileno()).st_size)
        except CORRUPT as error:
            raise OSError(f"{path}: corrupt compressed input: {error}") from error
        finally:
            if stream is not raw:
                stream.close()


def line_batches(stream: BinaryIO, name: str, block_bytes: int = BLOCK_BYTES) -> Iterator[RecordBatch]:
    """Batches of the lines of ``stream``, about ``block_bytes`` at a time; origin ``file=name`` and the
    1-based ``line_number``.

    Raises: what :data:`CORRUPT` names, once every line before the damage was given.
    """
    carry, number, first = b"", 1, True
    try:
        for block in _blocks(stream, block_bytes):
            if first:
                block, first = block.removeprefix(UTF8_BOM), False
            block = carry + block
            lines = block.split(b"\n")
            carry = lines.pop()
            if lines:
                yield batch_of_lines(_strip(lines) if b"\r" in block else lines, name, number)
                number += len(lines)
    except CORRUPT:
        if carry:
            yield batch_of_lines(_strip([carry]), name, number)
        raise
    if carry:
        yield batch_of_lines(_strip([carry]), name, number)


def _blocks(stream: BinaryIO, block_bytes: int) -> Iterator[bytes]:
    """``stream`` in blocks of about ``block_bytes``, read a chunk at a time so that what a corrupt
    compressed stream decompressed before its damage is given before the error is raised."""
    parts: list[bytes] = []
    size = 0
    try:
        while chunk := _read1(stream, block_bytes - size):
            parts.append(chunk)
            size += len(chunk)
            if size >= block_bytes:
                yield b"".join(parts)
                parts, size = [], 0
    except CORRUPT:
        if parts:
            yield b"".join(parts)
        raise
    if parts:
        yield b"".join(parts)


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
