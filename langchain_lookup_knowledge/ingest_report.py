"""What an ingest reports while it runs (progress callbacks, the bar) and when it ends.

Example:
    >>> IngestReport(path="kb", collection="kb").chunks_written
    0
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_lookup_knowledge.knowledge.category_map import IgnoredRow
from langchain_lookup_knowledge.knowledge.loader import SkippedFile

__all__ = ["ChunkProgressCallback", "IngestProgress", "IngestReport", "ProgressCallback"]


ProgressCallback = Callable[[str, int, int], None]


# (chunks embedded so far, chunks to embed): embedding is the slow part of an ingest.
ChunkProgressCallback = Callable[[int, int], None]


@dataclass
class IngestReport:
    """What one ingest run did."""

    path: str
    collection: str
    files_seen: int = 0
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    warnings: list[SkippedFile] = field(default_factory=list)
    """Files indexed with a change (a truncated field): source and what was changed."""
    repaired: list[SkippedFile] = field(default_factory=list)
    """Documents whose stored state did not match the catalog, and what was wrong."""
    missing: list[str] = field(default_factory=list)
    """Indexed documents no longer on disk (still served until ``prune``)."""
    chunks_written: int = 0
    stale_chunks_deleted: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    profile_seconds: float | None = None
    """Seconds this run spent measuring the KB profile of the judgement (None: it was
    current)."""
    profile_error: str | None = None
    """Why the KB profile could not be measured (lookups then use a typical profile)."""
    bm25: bool = False
    bm25_index: dict[str, float] = field(default_factory=dict)
    """The BM25 parameters the sparse index is built with ({}: the engine's defaults)."""
    bm25_index_rebuilt: bool = False
    """This ingest rebuilt an existing sparse index with other BM25 parameters (only
    ``bm25_k1`` / ``bm25_b`` set explicitly do that)."""
    bm25_index_notice: str | None = None
    """When the existing sparse index differs from what ``bm25_defaults`` builds for a new
    collection: what it has, what they would build and how to apply it (None: it does not)."""
    indexes_repaired: list[str] = field(default_factory=list)
    """Fields of the collection whose missing index this run built again (an interrupted
    index build); nothing was re-embedded."""
    category_rows_ignored: list[IgnoredRow] = field(default_factory=list)
    """Rows of the categories file that gave no file a category, with their line and why."""
    rebuilt: list[str] = field(default_factory=list)
    """Collections dropped before writing (``rebuild``): everything was ingested again."""
    embedder: str | None = None
    """The embedder that wrote the chunks (None: nothing was embedded)."""
    embedder_reason: str | None = None
    """Why that embedder (``embedding_provider=auto``; None: it was configured)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "path": self.path,
            "collection": self.collection,
            "files": self.files_seen,
            "indexed": len(self.indexed),
            "unchanged": len(self.unchanged),
            "skipped": [{"source": s.source, "reason": s.reason} for s in self.skipped],
            "pruned": self.pruned,
            "warnings": [{"source": w.source, "warning": w.reason} for w in self.warnings],
            "repaired": [{"source": r.source, "reason": r.reason} for r in self.repaired],
            "missing": self.missing,
            "chunksWritten": self.chunks_written,
            "staleChunksDeleted": self.stale_chunks_deleted,
            "totalChunks": self.total_chunks,
            "seconds": round(self.seconds, 3),
            "profileSeconds": None
            if self.profile_seconds is None
            else round(self.profile_seconds, 3),
            "profileError": self.profile_error,
            "bm25": self.bm25,
            "bm25Index": self.bm25_index,
            "bm25IndexRebuilt": self.bm25_index_rebuilt,
            "bm25IndexNotice": self.bm25_index_notice,
            "indexesRepaired": self.indexes_repaired,
            "categoryRowsIgnored": [
                {"line": r.line, "path": r.path, "reason": r.reason}
                for r in self.category_rows_ignored
            ],
            "rebuilt": self.rebuilt,
            "embedder": self.embedder,
            "embedderReason": self.embedder_reason,
        }


class IngestProgress:
    """Files written (the callback) and chunks embedded (the bar, the chunk callback)."""

    def __init__(
        self,
        total: int,
        chunks: int,
        enabled: bool,
        callback: ProgressCallback | None,
        chunk_callback: ChunkProgressCallback | None = None,
    ) -> None:
        self.callback = callback
        self.chunk_callback = chunk_callback
        self.bar = None
        if enabled and chunks:
            from tqdm import tqdm

            self.bar = tqdm(total=chunks, unit="chunk", desc="embed", file=sys.stderr, leave=False)
        self.done = 0
        self.total = total
        self.chunks_done = 0
        self.chunks = chunks

    def advance(self, source: str) -> None:
        self.done += 1
        if self.callback is not None:
            self.callback(source, self.done, self.total)

    def embedded(self, n: int) -> None:
        self.chunks_done += n
        if self.bar is not None:
            self.bar.update(n)
        if self.chunk_callback is not None:
            self.chunk_callback(self.chunks_done, self.chunks)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
