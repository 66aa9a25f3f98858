"""Give freed heap memory back to the operating system between an ingest's batches.

glibc keeps the memory a batch freed (its rows, vectors, gRPC messages) in the process and
reuses it only for allocations that fit, so a long ingest's resident size creeps up batch by
batch. ``malloc_trim`` hands it back; elsewhere (macOS, musl, Windows) this does nothing.

Example:
    >>> release_free_memory()  # after a batch is written
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache
from typing import Any

__all__ = ["release_free_memory"]


@lru_cache(maxsize=1)
def _malloc_trim() -> Any | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_free_memory() -> None:
    """Return the heap's free pages to the operating system (glibc), a few ms; no-op elsewhere."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
