"""Argument checks the pure steps share, each naming the argument and the value it was given."""

from __future__ import annotations


def require_at_least(minimum: int, **values: int) -> None:
    """Raise ``ValueError`` naming the first of ``values`` below ``minimum``.

    Example:
        >>> require_at_least(1, top_k=5, per_document_cap=0)
        Traceback (most recent call last):
        ...
        ValueError: per_document_cap must be >= 1, got 0
    """
    for name, value in values.items():
        if value < minimum:
            msg = f"{name} must be >= {minimum}, got {value}"
            raise ValueError(msg)
