"""Bounds on time and size: every wait ends, every input has a largest size.

Example:
    >>> LimitSettings().milvus_timeout_s
    10.0
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from langchain_lookup_knowledge.settings.types import Seconds

__all__ = ["LimitSettings"]


class LimitSettings(BaseModel):
    """Time bounds (each at most an hour) and size bounds."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    milvus_timeout_s: Seconds = Field(
        default=10.0, description="Bound on every Milvus call (connect, search, insert)."
    )
    milvus_load_timeout_s: Seconds = Field(
        default=120.0,
        description="Bound on opening the chunk collection for lookups: loading it, then one "
        "dense and one BM25 search of one hit, which pay what Milvus Lite prepares lazily "
        "(the first BM25 search of a 3,485-chunk collection: 1.1-3.5 s on a loaded 2-core "
        "machine), so that milvus_timeout_s bounds each lookup's search alone.",
    )
    embedding_timeout_s: Seconds = Field(default=30.0, description="Embedding call timeout.")
    embedding_max_retries: int = Field(default=2, ge=0, le=10, description="Embedding retries.")
    sidecar_timeout_s: Seconds = Field(default=2.0, description="Sidecar time bound.")
    record_timeout_s: Seconds = Field(
        default=2.0,
        description="Most a write of a record may take (connect, lock, insert), and so the most "
        "a lookup waits for it under record_wait. Past it the write goes on in the background "
        "(trace: recording.row = 'pending').",
    )
    record_retry_after_s: Seconds = Field(
        default=30.0,
        description="After a failed or timed-out write, lookups stop trying the records "
        "database for this long: their rows wait in memory and are written when it is back.",
    )
    max_query_chars: int = Field(
        default=8000, ge=16, description="Longer queries are truncated (noted in the trace)."
    )
    max_file_bytes: int = Field(default=2_000_000, ge=1, description="Larger files are skipped.")
