"""Embedding and writing documents' chunks in bounded groups, one document costing only itself.

Example:
    >>> write_documents(client, settings, layout, "kb_catalog", planned, embedder, report, progress,
    ...     chunking="v6/1000/150", known={}, stored={}, scope=None)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.core.memory import release_free_memory
from langchain_lookup_knowledge.embeddings.validation import check_vectors
from langchain_lookup_knowledge.embeddings.window import window_of
from langchain_lookup_knowledge.ingest_report import (
    IngestProgress,
    IngestReport,
)
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.chunking import (
    Chunk,
    embedding_text,
)
from langchain_lookup_knowledge.knowledge.document_tables import table_count
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import SkippedFile
from langchain_lookup_knowledge.knowledge.row_chunks import ROW_METADATA_KEY, TableRowChunk
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import upsert_entries
from langchain_lookup_knowledge.store.schema import (
    MAX_CATEGORY,
    MAX_JSON_BYTES,
    MAX_KEY,
    MAX_TEXT,
    CollectionLayout,
)
from langchain_lookup_knowledge.store.vector_copy import encode_vector_copy

if TYPE_CHECKING:
    from langchain_lookup_knowledge.profiling import ProfileQueries

__all__ = ["LITE_FLUSH_ROWS", "FolderScope", "embedded_by_length", "write_documents"]

logger = logging.getLogger(__name__)

LITE_FLUSH_ROWS = 2048
"""Rows written between two flushes of a Milvus Lite collection. Lite keeps what was written
since its last flush in a buffer of up to 128 MB that every read of the collection (a row count,
an index description, a query) and the flush itself turn into Python objects, about 20 KB a row
of 384 dimensions: a flush every few thousand rows keeps that transient small."""


def _chunk_rows(
    chunks: Sequence[Chunk],
    texts: Sequence[str],
    layout: CollectionLayout,
    doc: KnowledgeDocument,
) -> list[dict[str, Any]]:
    """The rows of one document's chunks, their vectors still to be set (``None``)."""
    rows = []
    extra = _json_safe(doc.extra)
    for chunk, text in zip(chunks, texts, strict=True):
        # Other frontmatter fields are kept as metadata (JSON-safe); known fields win.
        metadata = extra | {
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
        if isinstance(chunk, TableRowChunk):
            metadata[ROW_METADATA_KEY] = True
        row: dict[str, Any] = {
            layout.id_field: chunk.evidence_key,
            layout.content_field: text,
            layout.vector_field: None,
        }
        if layout.lexical_field:  # the BM25 input: the indexed text in its lexical form
            row[layout.lexical_field] = layout.bm25_text_of(text)
        if layout.metadata_field:
            row[layout.metadata_field] = metadata
        if layout.category_field:
            row[layout.category_field] = chunk.category[:500]
        if layout.source_field:
            row[layout.source_field] = chunk.source
        rows.append(row)
    return rows


def catalog_table_count(chunks: Sequence[Chunk]) -> int:
    """The markdown tables of a document's chunks (its table row chunks aside): the count the
    catalog keeps for the lookups' option rows."""
    return table_count(
        [(c.ordinal, c.breadcrumb, c.text) for c in chunks if not isinstance(c, TableRowChunk)]
    )


_Rows = list[tuple[KnowledgeDocument, list[Chunk], list[dict[str, Any]], str | None]]
_T = TypeVar("_T")


def _group_rows(
    group: Sequence[tuple[KnowledgeDocument, list[Chunk]]],
    texts: Sequence[str],
    layout: CollectionLayout,
) -> _Rows:
    """Per document of a group: its rows without vectors, and why Milvus would refuse them
    (None: it would not)."""
    out: _Rows = []
    for (doc, chunks), doc_texts in zip(group, _per_document(group, texts), strict=True):
        rows = _chunk_rows(chunks, doc_texts, layout, doc)
        out.append(
            (doc, chunks, rows, next((p for r in rows if (p := _row_problem(r, layout))), None))
        )
    return out


def _per_document(
    group: Sequence[tuple[KnowledgeDocument, list[Chunk]]], values: Sequence[_T]
) -> Iterator[Sequence[_T]]:
    """``values`` (one per chunk of ``group``, in its order) cut into each document's share."""
    offset = 0
    for _, chunks in group:
        yield values[offset : offset + len(chunks)]
        offset += len(chunks)


@dataclass(frozen=True)
class FolderScope:
    """What one folder ingest owns: its root, its namespace, the sources on disk."""

    root: str
    namespace: str
    present: set[str]
    prune: bool


def _row_problem(row: dict[str, Any], layout: CollectionLayout) -> str | None:
    """Why Milvus would refuse ``row`` (a field over its limit), checked before the upsert."""
    limits = [(layout.id_field, MAX_KEY), (layout.content_field, MAX_TEXT)]
    if layout.lexical_field:
        limits.append((layout.lexical_field, MAX_TEXT))
    if layout.source_field:
        limits.append((layout.source_field, MAX_KEY))
    if layout.category_field:
        limits.append((layout.category_field, MAX_CATEGORY))
    for name, limit in limits:
        size = len(str(row.get(name, "")).encode("utf-8", "surrogatepass"))
        if size > limit:
            return f"field {name!r} would hold {size:,} bytes (limit {limit:,})"
    if layout.metadata_field and layout.metadata_field in row:
        size = len(json.dumps(row[layout.metadata_field], ensure_ascii=False).encode())
        if size > MAX_JSON_BYTES:
            return (
                f"frontmatter too large for the metadata field ({size:,} bytes of JSON, "
                f"limit {MAX_JSON_BYTES:,})"
            )
    return None


def embedded_by_length(
    texts: Sequence[str], embedder: Embeddings, batch: int, progress: IngestProgress
) -> Iterator[tuple[list[int], list[list[float]]]]:
    """The indexes of ``texts`` in batches of texts of similar length, each with its vectors,
    as each batch is embedded.

    A batch is padded to its longest text: SciFact's chunks in ingest order carry 35% padding
    tokens, in length order under 1%. The vectors are the same (the model masks the padding).
    Batches, not one call, so the progress bar moves and the rows are written while the slow
    part runs.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch):
        piece = order[start : start + batch]
        vectors = embedder.embed_documents([texts[i] for i in piece])
        if len(vectors) != len(piece):
            raise ValueError(f"the embedder answered {len(vectors)} vectors for {len(piece)} texts")
        progress.embedded(len(piece))
        yield piece, vectors


def _set_vector(row: dict[str, Any], vector: Sequence[float], layout: CollectionLayout) -> None:
    row[layout.vector_field] = list(vector)
    if layout.vector_copy_field:  # what BM25 and hybrid hits return for the cosine
        row[layout.vector_copy_field] = encode_vector_copy(vector)


class _RowStream:
    """A group's rows upserted on one thread of their own as their vectors come, while the
    model embeds the next batch: after the last batch only its rows are left to write.

    Jobs run in order on ``pool`` (one worker): the rows built without vectors, then the
    marks (:meth:`write_marks`), then each batch's rows. The first
    failure stops the stream (:attr:`failed`): the group is then written as before,
    document by document when a batch fails (:func:`_upsert_isolated`)."""

    def __init__(
        self,
        client: Any,
        settings: LookupSettings,
        layout: CollectionLayout,
        pool: ThreadPoolExecutor,
        building: Future[_Rows],
        positions: Sequence[tuple[int, int]],
        catalog_name: str,
        known: Mapping[str, CatalogEntry],
    ) -> None:
        self._client = client
        self._settings = settings
        self._layout = layout
        self._pool = pool
        self._building = building
        self._positions = positions  # chunk index -> (its document in the group, its row)
        self._catalog_name = catalog_name
        self._known = known
        self.failed: BaseException | None = None
        self.stopped = False
        self.marked = False  # the marks are written
        self.sent: set[str] = set()  # keys of the rows upserted

    def write_marks(self) -> None:
        """Before a known document's rows change, its catalog entry loses its content hash:
        a run killed in between re-processes it, whatever the file then holds."""
        marks = [
            dataclasses.replace(self._known[doc.source], content_hash="")
            for doc, _, _, problem in self._building.result()
            if problem is None and doc.source in self._known
        ]
        if marks:
            upsert_entries(self._client, self._catalog_name, marks)
        self.marked = True

    def submit(self, job: Callable[[], None]) -> None:
        def guarded() -> None:
            if self.failed is not None or self.stopped:
                return
            try:
                job()
            except Exception as exc:
                self.failed = exc

        self._pool.submit(guarded)

    def write(self, piece: Sequence[int], vectors: Sequence[Sequence[float]]) -> None:
        """Set these chunks' vectors in their rows and upsert them (the refused documents'
        rows are never sent)."""

        def job() -> None:
            built = self._building.result()
            rows = []
            for i, vector in zip(piece, vectors, strict=True):
                doc_index, row_index = self._positions[i]
                _, _, doc_rows, problem = built[doc_index]
                if problem is None:
                    _set_vector(doc_rows[row_index], vector, self._layout)
                    rows.append(doc_rows[row_index])
            size = self._settings.insert_batch_size
            for start in range(0, len(rows), size):
                part = rows[start : start + size]
                self._client.upsert(self._layout.name, part)
                self.sent.update(str(row[self._layout.id_field]) for row in part)

        self.submit(job)


def write_documents(
    client: Any,
    settings: LookupSettings,
    layout: CollectionLayout,
    catalog_name: str,
    planned: Iterator[tuple[KnowledgeDocument, list[Chunk]] | SkippedFile],
    embedder: Embeddings,
    report: IngestReport,
    progress: IngestProgress,
    *,
    chunking: str,
    known: dict[str, CatalogEntry],
    stored: Mapping[str, set[str]],
    scope: FolderScope | None,
    queries: ProfileQueries | None = None,
) -> None:
    """Embed and write documents in groups; a group's catalog entries are written last.

    Before a known document's chunks change, its catalog entry loses its content hash (the
    mark): a run killed in between re-processes it, whatever the file then holds. A document
    whose rows Milvus would refuse is skipped by name before the upsert; a batch that fails
    is retried document by document, so one document costs only itself. A Milvus Lite
    collection is flushed every :data:`LITE_FLUSH_ROWS` rows and at the end.

    ``chunking``: the chunking signature recorded in each catalog entry. ``stored``: the chunk
    keys the collection held when the run began, by source (the stale ones are deleted).
    ``queries``: the profile's questions, told each document's stored texts and embedded
    beside the last group's chunks.
    """
    group: list[tuple[KnowledgeDocument, list[Chunk]]] = []
    group_chunks = 0
    window = window_of(embedder, settings.embedding_max_tokens)
    root = scope.root if scope is not None else ""
    namespace = scope.namespace if scope is not None else ""

    lite = settings.is_milvus_lite
    unflushed = 0  # rows written since the last flush

    def flush_group(*, last: bool) -> None:
        nonlocal group_chunks, unflushed
        if not group:
            if queries is not None and last:
                queries.embed_noted()
            return
        texts = [embedding_text(c, d, window) for d, chunks in group for c in chunks]
        if queries is not None:
            for (doc, _), doc_texts in zip(group, _per_document(group, texts), strict=True):
                queries.note(doc.source, doc_texts)
            if last:
                queries.embed_noted()  # embedded beside the last chunks
        # The rows but their vectors are built in a thread of their own while the model runs
        # (it releases the GIL): on two cores, beside the embedding rather than after it. The
        # same thread then writes the marks, and each batch's rows once it is embedded.
        keys = [c.evidence_key for _, chunks in group for c in chunks]
        positions = [(d, r) for d, (_, chunks) in enumerate(group) for r in range(len(chunks))]
        vectors: list[list[float]] = [[] for _ in texts]
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-rows") as pool:
            building = pool.submit(_group_rows, list(group), texts, layout)
            stream = _RowStream(
                client, settings, layout, pool, building, positions, catalog_name, known
            )
            stream.submit(stream.write_marks)
            try:
                for piece, piece_vectors in embedded_by_length(
                    texts, embedder, settings.embedding_batch_size, progress
                ):
                    # Whatever embedder was passed in: NaN, infinite or zero vectors are never
                    # stored.
                    check_vectors(piece_vectors, what="chunk", names=[keys[i] for i in piece])
                    for i, vector in zip(piece, piece_vectors, strict=True):
                        vectors[i] = vector
                    stream.write(piece, piece_vectors)
            except BaseException:
                stream.stopped = True  # what is queued is not written
                raise
            built = building.result()
        rows_of: list[tuple[KnowledgeDocument, list[Chunk], list[dict[str, Any]]]] = []
        for doc, chunks, rows, problem in built:
            if problem:
                report.skipped.append(SkippedFile(doc.source, problem))
                progress.advance(doc.source)
            else:
                rows_of.append((doc, chunks, rows))
        if stream.failed is None:
            written = rows_of
        else:  # the batch by batch write failed: the group as before, with every vector
            logger.info("streamed write stopped: %s", describe_exception(stream.failed))
            for (_, _, rows, _), doc_vectors in zip(
                built, _per_document(group, vectors), strict=True
            ):
                for row, vector in zip(rows, doc_vectors, strict=True):
                    _set_vector(row, vector, layout)
            if not stream.marked:
                stream.write_marks()
            written = _upsert_isolated(client, settings, layout, rows_of, report)
            # A document Milvus then refused alone keeps none of the rows the stream wrote.
            kept = {id(doc) for doc, _, _ in written}
            orphans = [
                c.evidence_key
                for doc, chunks, _ in rows_of
                if id(doc) not in kept
                for c in chunks
                if c.evidence_key in stream.sent
            ]
            if orphans:
                client.delete(layout.name, ids=orphans)
        # The stored chunks a written document no longer has, also those a killed earlier run
        # left that the catalog does not know of: ``stored`` is what the collection held when
        # this run began, and only this run writes to it since. Deleted by key, one delete per
        # group: a delete by filter scans the whole collection (Milvus Lite copies every row
        # it holds in memory to do so, a transient that grows with the collection).
        stale = [
            key
            for doc, chunks, _ in written
            for key in sorted(stored.get(doc.source, set()) - {c.evidence_key for c in chunks})
        ]
        if stale:
            report.stale_chunks_deleted += _deleted_count(client.delete(layout.name, ids=stale))
        entries = []
        for doc, chunks, _ in written:
            entry = CatalogEntry.from_document(
                doc,
                len(chunks),
                chunking,
                root=root,
                namespace=namespace,
                tables=catalog_table_count(chunks),
            )
            entries.append(entry)
            report.indexed.append(doc.source)
            report.chunks_written += len(chunks)
        upsert_entries(client, catalog_name, entries)
        for doc, _, _ in rows_of:
            progress.advance(doc.source)
        group.clear()
        group_chunks = 0
        unflushed += sum(len(rows) for _, _, rows in written)
        if lite and unflushed >= LITE_FLUSH_ROWS:
            flush()
        release_free_memory()  # the group's texts, vectors and messages: peak stays one group

    def flush() -> None:
        nonlocal unflushed
        client.flush(layout.name)
        unflushed = 0

    for item in planned:
        if isinstance(item, SkippedFile):  # unreadable since the survey read it
            report.skipped.append(item)
            progress.advance(item.source)
            continue
        group.append(item)
        group_chunks += len(item[1])
        if group_chunks >= settings.insert_batch_size:
            flush_group(last=False)
    flush_group(last=True)
    if lite and unflushed:  # what follows reads the collection: nothing left in the buffer
        flush()


_Written = list[tuple[KnowledgeDocument, list[Chunk], list[dict[str, Any]]]]


def _upsert_isolated(
    client: Any,
    settings: LookupSettings,
    layout: CollectionLayout,
    rows_of: _Written,
    report: IngestReport,
) -> _Written:
    """Upsert the group's rows; when a batch fails, each document alone. Returns what was
    written. A document that fails alone is skipped with the error; when every document fails
    alike, the store itself is failing: that is raised (disk full, server gone)."""
    rows = [row for _, _, doc_rows in rows_of for row in doc_rows]
    try:
        for start in range(0, len(rows), settings.insert_batch_size):
            client.upsert(layout.name, rows[start : start + settings.insert_batch_size])
        return rows_of
    except Exception as exc:
        if len(rows_of) <= 1:
            raise
        logger.warning(
            "a batch upsert failed (%s); writing document by document", describe_exception(exc)
        )
    written: _Written = []
    failures: list[tuple[KnowledgeDocument, Exception]] = []
    for item in rows_of:
        try:
            client.upsert(layout.name, item[2])
            written.append(item)
        except Exception as failure:
            failures.append((item[0], failure))
    if failures and not written:
        raise failures[0][1]
    for doc, error in failures:
        first = describe_exception(error, with_type=False)
        report.skipped.append(SkippedFile(doc.source, f"Milvus refused its rows: {first}"))
    return written


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
