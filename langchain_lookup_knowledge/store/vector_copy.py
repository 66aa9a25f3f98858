"""A dense vector's copy as text: the base64 of its float32 bytes, one string a chunk.

Milvus Lite returns a FLOAT_VECTOR field of a search hit float by float (a Python step each)
and a VARCHAR as one object; the copy decodes into the same float32 numbers.

Example:
    >>> decode_vector_copies([encode_vector_copy([0.5, -1.0])], 2).tolist()
    [[0.5, -1.0]]
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence

import numpy as np

__all__ = ["decode_vector_copies", "encode_vector_copy", "vector_copy_length"]


def vector_copy_length(dimension: int) -> int:
    """Characters of the copy of a ``dimension``-float vector (its VARCHAR's size).

    Example:
        >>> vector_copy_length(384)
        2048
    """
    return 4 * ((4 * dimension + 2) // 3)


def encode_vector_copy(vector: Sequence[float] | np.ndarray) -> str:
    """The copy of ``vector``: its values as float32 (what a FLOAT_VECTOR field stores), base64."""
    raw = np.asarray(vector, dtype="<f4").tobytes()
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def decode_vector_copies(copies: Sequence[object], dimension: int) -> np.ndarray | None:
    """The vectors of ``copies`` as a float32 matrix (row i: copy i); None when any is not the
    copy of a ``dimension``-float vector (absent, or written by something else)."""
    length = vector_copy_length(dimension)
    if not all(isinstance(c, str) and len(c) == length for c in copies):
        return None
    texts: list[str] = list(copies)  # type: ignore[arg-type]  # each a str: checked above
    try:
        if (4 * dimension) % 3 == 0:  # no padding inside: the copies decode as one text
            raw = binascii.a2b_base64("".join(texts))
        else:
            raw = b"".join(binascii.a2b_base64(text) for text in texts)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 4 * dimension * len(copies):
        return None
    return np.frombuffer(raw, dtype="<f4").reshape(len(copies), dimension)
