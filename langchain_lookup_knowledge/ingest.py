"""Incremental, crash-safe ingestion of a markdown folder into Milvus.

Per changed document: its chunks are upserted (the evidenceKey is the primary key, so a re-run
never duplicates), its stale chunks deleted, and only then its catalog entry written. The catalog
entry's content hash is the commit mark: a run killed at any point re-processes the unfinished
documents next time and converges to the state of a clean run.

Example:
    >>> from langchain_lookup_knowledge import LookupSettings, ingest_folder
    >>> report = ingest_folder("docs/runbooks", LookupSettings())  # doctest: +SKIP
    >>> report.chunks_written  # doctest: +SKIP
    177
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.embeddings.validation import check_vectors
from langchain_lookup_knowledge.errors import ConfigurationError, StoreUnavailableError
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.category_map import load_category_map
from langchain_lookup_knowledge.knowledge.chunking import (
    Chunk,
    chunk_document,
    chunking_signature,
    cjk_ratio,
    embedding_text,
)
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import (
    SkippedFile,
    iter_markdown_files,
    load_document,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import (
    delete_entries,
    load_catalog,
    upsert_entries,
)
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.filters import and_exprs, condition
from langchain_lookup_knowledge.store.schema import (
    CollectionLayout,
    describe_chunk_collection,
    ensure_catalog_collection,
    ensure_chunk_collection,
)

logger = logging.getLogger(__name__)

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
    chunks_written: int = 0
    stale_chunks_deleted: int = 0
    total_chunks: int = 0
    seconds: float = 0.0
    bm25: bool = False

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
            "chunksWritten": self.chunks_written,
            "staleChunksDeleted": self.stale_chunks_deleted,
            "totalChunks": self.total_chunks,
            "seconds": round(self.seconds, 3),
            "bm25": self.bm25,
        }


def choose_analyzer(settings: LookupSettings, docs: Sequence[KnowledgeDocument]) -> str | None:
    """The BM25 analyzer: configured, or jieba when the knowledge base is mostly CJK."""
    if settings.bm25_analyzer != "auto":
        return settings.bm25_analyzer
    sample = "".join(d.body[:2000] for d in docs[:200])
    return "jieba" if cjk_ratio(sample) > 0.3 else "standard"


def _chunk_rows(
    chunks: Sequence[Chunk],
    texts: Sequence[str],
    vectors: Sequence[Sequence[float]],
    layout: CollectionLayout,
    doc: KnowledgeDocument,
) -> list[dict[str, Any]]:
    rows = []
    for chunk, text, vector in zip(chunks, texts, vectors, strict=True):
        # Other frontmatter fields are kept as metadata (JSON-safe); known fields win.
        metadata = _json_safe(doc.extra) | {
            "source": chunk.source,
            "title": chunk.title,
            "breadcrumb": chunk.breadcrumb,
            "category": chunk.category,
            "ordinal": chunk.ordinal,
            "evidence_key": chunk.evidence_key,
            "keywords": list(doc.keywords),
            "entities": list(doc.entities),
            "aliases": list(doc.aliases),
            # The indexed text starts with a header (breadcrumb, terms) that helps retrieval;
            # evidence shows the chunk from this offset on.
            "body_offset": len(text) - len(chunk.text) if text.endswith(chunk.text) else 0,
        }
        row: dict[str, Any] = {
            layout.id_field: chunk.evidence_key,
            layout.content_field: text,
            layout.vector_field: list(vector),
        }
        if layout.metadata_field:
            row[layout.metadata_field] = metadata
        if layout.category_field:
            row[layout.category_field] = chunk.category[:500]
        if layout.source_field:
            row[layout.source_field] = chunk.source
        rows.append(row)
    return rows


class _Progress:
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


def ingest_folder(
    path: str | Path,
    settings: LookupSettings | None = None,
    *,
    prune: bool = False,
    embeddings: Embeddings | None = None,
    show_progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
    on_chunk_progress: ChunkProgressCallback | None = None,
) -> IngestReport:
    """Index every markdown file under ``path`` (incrementally) into the configured collection.

    Raises:
        ConfigurationError: ``path`` is missing or not a folder.
        StoreUnavailableError: Milvus cannot be opened.
    """
    settings = settings or LookupSettings()
    started = time.perf_counter()
    root = Path(path).expanduser()
    if not root.exists():
        raise ConfigurationError(f"knowledge folder not found: {root}")
    if not root.is_dir():
        raise ConfigurationError(f"not a folder: {root}")
    root = root.resolve()
    report = IngestReport(path=str(root), collection=settings.collection)

    categories = (
        load_category_map(settings.categories_file, settings.categories_column)
        if settings.categories_file
        else None
    )
    files = list(iter_markdown_files(root))
    report.files_seen = len(files)
    docs: list[KnowledgeDocument] = []
    for file in files:
        loaded = load_document(file, root, settings.max_file_bytes, categories)
        if isinstance(loaded, SkippedFile):
            report.skipped.append(loaded)
            logger.info("skipped %s: %s", loaded.source, loaded.reason)
        else:
            docs.append(loaded)
    present = {d.source for d in docs} | {s.source for s in report.skipped}
    return _ingest(
        docs,
        settings,
        report,
        started,
        embeddings=embeddings,
        show_progress=show_progress,
        on_progress=on_progress,
        on_chunk_progress=on_chunk_progress,
        prune_to=present if prune else None,
    )


def ingest_documents(
    docs: Sequence[KnowledgeDocument],
    settings: LookupSettings | None = None,
    *,
    label: str = "<documents>",
    embeddings: Embeddings | None = None,
    show_progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
    on_chunk_progress: ChunkProgressCallback | None = None,
) -> IngestReport:
    """Index already-parsed documents (e.g. a BEIR corpus) through the same write path.

    Incremental like :func:`ingest_folder` (unchanged content hashes are skipped); no pruning.
    """
    settings = settings or LookupSettings()
    started = time.perf_counter()
    report = IngestReport(path=label, collection=settings.collection, files_seen=len(docs))
    return _ingest(
        docs,
        settings,
        report,
        started,
        embeddings=embeddings,
        show_progress=show_progress,
        on_progress=on_progress,
        on_chunk_progress=on_chunk_progress,
        prune_to=None,
    )


def _ingest(
    docs: Sequence[KnowledgeDocument],
    settings: LookupSettings,
    report: IngestReport,
    started: float,
    *,
    embeddings: Embeddings | None,
    show_progress: bool | None,
    on_progress: ProgressCallback | None,
    on_chunk_progress: ChunkProgressCallback | None,
    prune_to: set[str] | None,
) -> IngestReport:
    """The write path shared by folders and in-memory documents."""
    _create_default_data_dir(settings)
    client = open_client(settings)
    catalog_name = ensure_catalog_collection(client, settings)
    known = {entry.source: entry for entry in load_catalog(client, catalog_name)}
    signature = chunking_signature(settings.chunk_size, settings.chunk_overlap)

    def unchanged(doc: KnowledgeDocument) -> bool:
        entry = known.get(doc.source)
        return (
            entry is not None
            and entry.content_hash == doc.content_hash
            and entry.chunking == signature  # chunk size or the chunker changed: re-chunk
            and entry.category == doc.category  # e.g. a categories file changed
        )

    changed = [d for d in docs if not unchanged(d)]
    changed_sources = {d.source for d in changed}
    report.unchanged = [d.source for d in docs if d.source not in changed_sources]

    if changed or not client.has_collection(settings.collection):
        # The embedder is loaded only when something is written (an unchanged re-ingest is cheap).
        embedder = embeddings or build_embeddings(settings)
        dimension = len(embedder.embed_query("dimension probe"))
        # A BM25 field is built whatever retrieval_mode is, so switching modes needs no re-ingest.
        layout = ensure_chunk_collection(
            client, settings, dimension, choose_analyzer(settings, docs)
        )
        enabled = sys.stderr.isatty() if show_progress is None else show_progress
        planned = [
            (doc, chunk_document(doc, settings.chunk_size, settings.chunk_overlap))
            for doc in changed
        ]
        chunk_total = sum(len(chunks) for _, chunks in planned)
        progress = _Progress(len(changed), chunk_total, enabled, on_progress, on_chunk_progress)
        try:
            _write_documents(
                client,
                settings,
                layout,
                catalog_name,
                planned,
                embedder,
                report,
                progress,
                chunking=signature,
            )
        finally:
            progress.close()
    else:
        layout = describe_chunk_collection(client, settings, None)
    report.bm25 = layout.has_bm25

    if prune_to is not None:
        gone = sorted(set(known) - prune_to)
        for source in gone:
            client.delete(layout.name, filter=condition(layout.source_ref(), source))
        delete_entries(client, catalog_name, gone)
        report.pruned = gone
        # Chunks left by a run killed before a new document's catalog entry was written.
        if prune_to:
            orphan_expr = f"not ({condition(layout.source_ref(), sorted(prune_to))})"
            client.delete(layout.name, filter=orphan_expr)
    client.flush(layout.name)
    client.flush(catalog_name)
    report.total_chunks = int(client.get_collection_stats(layout.name).get("row_count", 0))
    report.seconds = time.perf_counter() - started
    return report


def _write_documents(
    client: Any,
    settings: LookupSettings,
    layout: CollectionLayout,
    catalog_name: str,
    planned: Sequence[tuple[KnowledgeDocument, list[Chunk]]],
    embedder: Embeddings,
    report: IngestReport,
    progress: _Progress,
    *,
    chunking: str,
) -> None:
    """Embed and write documents in groups; a group's catalog entries are written last.

    ``chunking``: the chunking signature recorded in each catalog entry.
    """
    group: list[tuple[KnowledgeDocument, list[Chunk]]] = []
    group_chunks = 0

    def flush_group() -> None:
        nonlocal group_chunks
        if not group:
            return
        texts = [embedding_text(c, d) for d, chunks in group for c in chunks]
        vectors: list[list[float]] = []
        # In embedding batches, so the progress bar moves while the slow part runs.
        batch = settings.embedding_batch_size
        for start in range(0, len(texts), batch):
            piece = texts[start : start + batch]
            vectors.extend(embedder.embed_documents(piece))
            progress.embedded(len(piece))
        # Whatever embedder was passed in: NaN, infinite or zero vectors are never stored.
        keys = [c.evidence_key for _, chunks in group for c in chunks]
        check_vectors(vectors, what="chunk", names=keys)
        rows: list[dict[str, Any]] = []
        offset = 0
        for doc, chunks in group:
            end = offset + len(chunks)
            rows.extend(_chunk_rows(chunks, texts[offset:end], vectors[offset:end], layout, doc))
            offset = end
        for start in range(0, len(rows), settings.insert_batch_size):
            client.upsert(layout.name, rows[start : start + settings.insert_batch_size])
        # Always: a killed earlier run may have left chunks the catalog does not know of. One
        # delete per group, not per document (each delete scans the collection); a key names
        # its own source, so the group's kept keys select exactly.
        keep = [c.evidence_key for _, chunks in group for c in chunks]
        stale = and_exprs(
            condition(layout.source_ref(), [doc.source for doc, _ in group]),
            f"not ({condition(layout.id_field, keep)})",
        )
        report.stale_chunks_deleted += _deleted_count(client.delete(layout.name, filter=stale))
        entries = []
        for doc, chunks in group:
            entries.append(CatalogEntry.from_document(doc, len(chunks), chunking))
            report.indexed.append(doc.source)
            report.chunks_written += len(chunks)
        upsert_entries(client, catalog_name, entries)
        for doc, _ in group:
            progress.advance(doc.source)
        group.clear()
        group_chunks = 0

    for doc, chunks in planned:
        group.append((doc, chunks))
        group_chunks += len(chunks)
        if group_chunks >= settings.insert_batch_size:
            flush_group()
    flush_group()


def _create_default_data_dir(settings: LookupSettings) -> None:
    """Create the default data folder on first use; a folder the user named must exist."""
    if not settings.is_milvus_lite or settings.milvus_uri is not None:
        return
    folder = Path(settings.resolved_milvus_uri).expanduser().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the data folder {folder}: {exc.strerror or exc}"
        raise StoreUnavailableError(msg) from None


def _json_safe(extra: dict[str, Any]) -> dict[str, Any]:
    """Frontmatter values as JSON (YAML dates and other objects become text)."""
    return dict(json.loads(json.dumps(extra, default=str, ensure_ascii=False)))


def _deleted_count(result: Any) -> int:
    # pymilvus returns the deleted primary keys when the server lists them (Milvus Lite does),
    # else {"delete_count": n}.
    if isinstance(result, list):
        return len(result)
    if isinstance(result, dict):
        return int(result.get("delete_count", 0) or 0)
    return int(getattr(result, "delete_count", 0) or 0)
