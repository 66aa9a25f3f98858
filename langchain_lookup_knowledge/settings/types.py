"""The value types and bounds settings share.

Example:
    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(Seconds).validate_python(2.5)
    2.5
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

__all__ = [
    "CANDIDATES_PER_BLOCK",
    "DEFAULT_DATA_DIR",
    "ENV_PREFIX",
    "MAX_TIMEOUT_S",
    "URL_FIELDS",
    "MetricType",
    "RetrievalMode",
    "RetrievalPathMode",
    "Seconds",
    "UnitInterval",
]

DEFAULT_DATA_DIR = Path.home() / ".lookup-knowledge"
ENV_PREFIX = "LOOKUP_KNOWLEDGE_"

RetrievalPathMode = Literal["auto", "vectorstore", "sdk"]
RetrievalMode = Literal["dense", "hybrid", "sparse"]
MetricType = Literal["COSINE", "IP", "L2"]
UnitInterval = Annotated[float, Field(ge=0, le=1)]
"""A similarity, a confidence or a fusion weight: a float from 0 to 1."""
MAX_TIMEOUT_S = 3600.0
"""The longest time bound a ``*_s`` setting accepts (one hour): every wait ends."""


def _bounded_seconds(value: float) -> float:
    if not 0 < value <= MAX_TIMEOUT_S:  # also refuses nan
        raise ValueError(f"must be a time in seconds in the range (0, {MAX_TIMEOUT_S:g}]")
    return value


Seconds = Annotated[float, AfterValidator(_bounded_seconds)]
"""A time bound in seconds: more than 0, at most :data:`MAX_TIMEOUT_S` (never ``inf``)."""
URL_FIELDS = ("milvus_uri", "openai_base_url", "invocation_db_url")
"""Settings that may hold ``user:password@``: ``model_dump`` and ``repr`` mask the password."""

CANDIDATES_PER_BLOCK = 3
"""``candidate_k=None`` fetches this many L1 candidates per evidence block asked for."""
