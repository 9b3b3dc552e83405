"""Preparers that fail in the reload's child process (imported there by name, so they live in a module of their own)."""

from __future__ import annotations

import os

import hyperscan

from logsig.config import CatalogSettings
from logsig.daemon.compile_process import Prepared


def vectorscan_fails(settings: CatalogSettings, max_message_bytes: int) -> Prepared:
    """Raise the error Vectorscan raises for a database it cannot build."""
    raise hyperscan.error("Pattern too large")


def out_of_memory(settings: CatalogSettings, max_message_bytes: int) -> Prepared:
    """Raise MemoryError, as a compile that exhausts memory does."""
    raise MemoryError()


def disk_gone(settings: CatalogSettings, max_message_bytes: int) -> Prepared:
    """Raise OSError, as an unreadable catalog file does."""
    raise OSError("disk gone")


def dies(settings: CatalogSettings, max_message_bytes: int) -> Prepared:
    """End the child process at once, as a crash in a native library or the kernel's OOM killer does."""
    os._exit(70)

