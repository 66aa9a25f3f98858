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

import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.core.filters import and_exprs, condition
from langchain_lookup_knowledge.core.text import is_cjk_corpus
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.embeddings.identity import PROBE_TEXT, EmbedderIdentity
from langchain_lookup_knowledge.embeddings.validation import check_vectors
from langchain_lookup_knowledge.embeddings.window import window_of
from langchain_lookup_knowledge.errors import (
    ConfigurationError,
    LookupKnowledgeError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.knowledge import is_bundled_sample
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.category_map import load_category_map
from langchain_lookup_knowledge.knowledge.chunking import (
    Chunk,
    chunk_document,
    chunking_signature,
    embedding_text,
    evidence_key,
)
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import (
    MARKDOWN_SUFFIXES,
    SkippedFile,
    load_document,
    walk_knowledge_folder,
)
from langchain_lookup_knowledge.redaction import describe_exception, mask_url
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import (
    delete_entries,
    load_catalog,
    stored_chunk_keys,
    upsert_entries,
)
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.integrity import prepare_for_ingest
from langchain_lookup_knowledge.store.schema import (
    MAX_CATEGORY,
    MAX_JSON_BYTES,
    MAX_KEY,
    MAX_TEXT,
    CollectionLayout,
    apply_bm25_parameters,
    bm25_defaults_notice,
    describe_chunk_collection,
    ensure_catalog_collection,
    ensure_chunk_collection,
    explicit_bm25_parameters,
    indexed_bm25_parameters,
    is_disk_full,
    repair_missing_indexes,
)
from langchain_lookup_knowledge.store.vocabulary_store import (
    rebuild_vocabulary,
    vocabulary_is_current,
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
    rebuilt: list[str] = field(default_factory=list)
    """Collections dropped before writing (``rebuild``): everything was ingested again."""

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
            "bm25": self.bm25,
            "bm25Index": self.bm25_index,
            "bm25IndexRebuilt": self.bm25_index_rebuilt,
            "bm25IndexNotice": self.bm25_index_notice,
            "indexesRepaired": self.indexes_repaired,
            "rebuilt": self.rebuilt,
        }


def choose_analyzer(settings: LookupSettings, docs: Sequence[KnowledgeDocument]) -> str | None:
    """The BM25 analyzer: configured, or jieba when the knowledge base is CJK
    (:func:`~langchain_lookup_knowledge.core.text.is_cjk_corpus`)."""
    if settings.bm25_analyzer != "auto":
        return settings.bm25_analyzer
    sample = "".join(d.body[:2000] for d in docs[:200])
    return "jieba" if is_cjk_corpus(sample) else "standard"


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
    follow_links: bool = False,
    source_prefix: str = "",
    rebuild: bool = False,
) -> IngestReport:
    """Index every markdown file under ``path`` (incrementally) into the configured collection.

    ``follow_links``: follow symbolic links whose target is inside ``path`` (a link leading
    outside is never followed). ``source_prefix``: a namespace put before every source path
    (``team-a/runbooks/x.md``), so several folders share one collection; ``prune`` then
    removes only that namespace's documents. Without a prefix, a collection holds one folder:
    ingesting another folder into it is refused (the message names the other folder).
    ``rebuild``: drop the collection, its catalog and vocabulary first (a damaged store).

    Raises:
        ConfigurationError: ``path`` is missing, not a folder or has no markdown file (and
            ``prune`` is off), or the collection holds
            another folder's documents under the same (empty) namespace.
        StoreUnavailableError: Milvus cannot be opened or written.
        EmbeddingError: the embedder failed, or answered unusable vectors.
        DamagedStoreError: the store's files are damaged (without ``rebuild``).
    """
    settings = settings or LookupSettings()
    started = time.perf_counter()
    root = Path(path).expanduser()
    if not root.exists():
        raise ConfigurationError(f"knowledge folder not found: {root}")
    if not root.is_dir():
        raise ConfigurationError(f"not a folder: {root}")
    root = root.resolve()
    namespace = source_prefix.strip("/")
    report = IngestReport(path=str(root), collection=settings.collection)

    categories = (
        load_category_map(settings.categories_file, settings.categories_column)
        if settings.categories_file
        else None
    )
    walk = walk_knowledge_folder(root, follow_links_inside=follow_links)
    if not walk.files and not walk.skipped and not prune:
        raise ConfigurationError(
            f"no markdown files ({', '.join(MARKDOWN_SUFFIXES)}; hidden ones are ignored) in "
            f"{root}: nothing to index (if its files were deleted on purpose, --prune / "
            "prune=True removes them from the collection)"
        )
    report.skipped.extend(walk.skipped)
    report.files_seen = len(walk.files) + len(walk.skipped)
    docs: list[KnowledgeDocument] = []
    for file in walk.files:
        loaded = load_document(file, root, settings.max_file_bytes, categories, namespace)
        if isinstance(loaded, SkippedFile):
            report.skipped.append(loaded)
        else:
            docs.append(loaded)
            report.warnings.extend(SkippedFile(loaded.source, w) for w in loaded.warnings)
    for skipped in report.skipped:
        logger.info("skipped %s: %s", skipped.source, skipped.reason)
    present = {d.source for d in docs} | {s.source for s in report.skipped}
    scope = _FolderScope(str(root), namespace, present, prune)
    options = _WriteOptions(embeddings, show_progress, on_progress, on_chunk_progress)
    with _disk_full_reported(settings, report):
        _create_default_data_dir(settings)
        report.rebuilt = prepare_for_ingest(
            open_client(settings), settings, rebuild=rebuild, folder=str(path)
        )
        return _ingest(docs, settings, report, started, options, scope=scope)


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
    options = _WriteOptions(embeddings, show_progress, on_progress, on_chunk_progress)
    with _disk_full_reported(settings, report):
        return _ingest(docs, settings, report, started, options, scope=None)


@dataclass(frozen=True)
class _FolderScope:
    """What one folder ingest owns: its root, its namespace, the sources on disk."""

    root: str
    namespace: str
    present: set[str]
    prune: bool


def _check_one_root(
    known: dict[str, CatalogEntry], scope: _FolderScope, settings: LookupSettings
) -> None:
    """Refuse to mix two folders in one namespace (B would overwrite A's same paths, and
    ``--prune`` would delete all of A). A Milvus Lite database is local: when the other folder
    no longer exists, this one is taken as that folder moved."""
    if scope.namespace:
        return  # a named namespace is the identity: the folder may move (a CI checkout)
    others = sorted(
        {e.root for e in known.values() if not e.namespace and e.root and e.root != scope.root}
    )
    if settings.is_milvus_lite and not any(Path(other).is_dir() for other in others):
        if others:
            logger.warning("%s takes the place of %s (no longer on disk)", scope.root, others[0])
        return
    if others and all(is_bundled_sample(o) for o in others):  # `lookup-knowledge demo`'s
        logger.warning("%s takes the place of the bundled sample", scope.root)
        return
    if others:
        count = sum(1 for e in known.values() if e.root == others[0])
        msg = (
            f"the collection already holds {count} document(s) ingested from {others[0]}, "
            f"not from {scope.root}: ingest each folder with its own --source-prefix "
            "(namespace) to keep both, or use another --collection"
        )
        raise ConfigurationError(msg)


@dataclass(frozen=True)
class _WriteOptions:
    """How the caller of an ingest wants the write done: its embedder and progress reporting."""

    embeddings: Embeddings | None
    show_progress: bool | None
    on_progress: ProgressCallback | None
    on_chunk_progress: ChunkProgressCallback | None


@contextmanager
def _disk_full_reported(settings: LookupSettings, report: IngestReport) -> Iterator[None]:
    """Turn running out of disk space during a write into one clear StoreUnavailableError."""
    try:
        yield
    except LookupKnowledgeError:
        raise
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        msg = (
            f"no space left on the device of {mask_url(settings.resolved_milvus_uri)}: "
            "free space, then "
            "run the ingest again (documents written before are kept; the next run finishes "
            f"the rest; {len(report.indexed)} indexed in this run)"
        )
        raise StoreUnavailableError(msg) from None


def _ingest(
    docs: Sequence[KnowledgeDocument],
    settings: LookupSettings,
    report: IngestReport,
    started: float,
    options: _WriteOptions,
    *,
    scope: _FolderScope | None,
) -> IngestReport:
    """The write path shared by folders and in-memory documents."""
    _create_default_data_dir(settings)
    client = open_client(settings)
    catalog_name = ensure_catalog_collection(client, settings)
    known = {entry.source: entry for entry in load_catalog(client, catalog_name)}
    if scope is not None:
        _check_one_root(known, scope, settings)
    # Built, not loaded (a local model loads at its first embedding): its window sizes chunks.
    embedder = options.embeddings or build_embeddings(settings)
    window = window_of(embedder, settings.embedding_max_tokens)
    signature = chunking_signature(settings.chunk_size, settings.chunk_overlap, window.name)
    # The catalog is not proof: what is really stored is checked against it, per document.
    has_chunks = client.has_collection(settings.collection)
    stored: dict[str, set[str]] = {}
    if has_chunks:
        # An index build that did not finish (a process killed during a BM25 index rebuild)
        # leaves a collection nothing can search: built again here from what is stored.
        report.indexes_repaired = repair_missing_indexes(client, settings)
        existing = describe_chunk_collection(client, settings, None)
        stored = stored_chunk_keys(client, existing.name, existing.id_field)

    namespace = scope.namespace if scope is not None else ""
    claimed = {s for s, e in known.items() if e.namespace != namespace}
    writable = []
    for doc in docs:
        if doc.source in claimed:
            report.skipped.append(
                SkippedFile(
                    doc.source,
                    f"the source name belongs to namespace {known[doc.source].namespace!r} "
                    f"(ingested from {known[doc.source].root or 'elsewhere'})",
                )
            )
        else:
            writable.append(doc)
    docs = writable

    def unchanged(doc: KnowledgeDocument) -> bool:
        entry = known.get(doc.source)
        if not (
            entry is not None
            and entry.content_hash == doc.content_hash
            and entry.chunking == signature  # chunk size or the chunker changed: re-chunk
            and entry.category == doc.category  # e.g. a categories file changed
        ):
            return False
        problem = _stored_problem(entry, stored.get(doc.source, set()))
        if problem:
            report.repaired.append(SkippedFile(doc.source, problem))
            return False
        return True

    changed = [d for d in docs if not unchanged(d)]
    changed_sources = {d.source for d in changed}
    report.unchanged = [d.source for d in docs if d.source not in changed_sources]

    if changed or not has_chunks:
        # The embedder is loaded only when something is written (an unchanged re-ingest is cheap).
        probe = embedder.embed_query(PROBE_TEXT)
        check_vectors([probe], what="the dimension probe")
        # A BM25 field is built whatever retrieval_mode is, so switching modes needs no re-ingest.
        # A new collection records the embedder; an existing one's record must be this model.
        layout = ensure_chunk_collection(
            client,
            settings,
            len(probe),
            choose_analyzer(settings, docs),
            embedder=EmbedderIdentity.of(embedder, probe),
        )
        enabled = sys.stderr.isatty() if options.show_progress is None else options.show_progress
        planned = [
            (doc, chunk_document(doc, settings.chunk_size, settings.chunk_overlap, window))
            for doc in changed
        ]
        chunk_total = sum(len(chunks) for _, chunks in planned)
        progress = _Progress(
            len(changed), chunk_total, enabled, options.on_progress, options.on_chunk_progress
        )
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
                known=known,
                scope=scope,
            )
        finally:
            progress.close()
    else:
        layout = existing
    report.bm25 = layout.has_bm25
    # Only bm25_k1 / bm25_b set explicitly rebuild an existing index (it is released meanwhile);
    # bm25_defaults decided a new collection's, and for an existing one the report says what
    # it would build instead.
    have = indexed_bm25_parameters(client, layout)  # read once ({}: no BM25 field)
    report.bm25_index_rebuilt = apply_bm25_parameters(client, settings, layout, have)
    if layout.has_bm25:  # a rebuild keeps what it was not asked to change
        rebuilt = explicit_bm25_parameters(settings) if report.bm25_index_rebuilt else {}
        report.bm25_index = have | rebuilt
        report.bm25_index_notice = bm25_defaults_notice(settings, layout, report.bm25_index)
        if report.bm25_index_notice:
            logger.info("%s", report.bm25_index_notice)

    if scope is not None:
        _settle_absent(client, layout, catalog_name, known, stored, scope, report)
    client.flush(layout.name)
    client.flush(catalog_name)
    # The KB vocabulary (the evidence decision's): recounted from the stored chunks whenever
    # they changed, and added to a collection ingested before vocabularies.
    changed_rows = report.indexed or report.pruned or report.stale_chunks_deleted
    if changed_rows or report.repaired or not vocabulary_is_current(client, settings):
        rebuild_vocabulary(client, settings, layout)
    report.total_chunks = int(client.get_collection_stats(layout.name).get("row_count", 0))
    report.seconds = time.perf_counter() - started
    return report


def _stored_problem(entry: CatalogEntry, keys: set[str]) -> str | None:
    """What differs between a catalog entry and the chunks really stored (None: they agree)."""
    if entry.problems:
        return "damaged catalog row (" + "; ".join(entry.problems) + ")"
    expected = {evidence_key(entry.source, i) for i in range(entry.chunk_count)}
    if keys == expected and expected:
        return None
    missing, extra = len(expected - keys), len(keys - expected)
    parts = []
    if missing:
        parts.append(f"{missing} of {entry.chunk_count} chunks missing")
    if extra:
        parts.append(f"{extra} chunks the catalog does not list")
    if not parts:
        parts.append("the catalog lists no chunks")
    return "stored chunks differ from the catalog: " + ", ".join(parts)


def _in_namespace(source: str, namespace: str, other_prefixes: set[str]) -> bool:
    if namespace:
        return source.startswith(f"{namespace}/")
    return not any(source.startswith(f"{p}/") for p in other_prefixes)


def _settle_absent(
    client: Any,
    layout: CollectionLayout,
    catalog_name: str,
    known: dict[str, CatalogEntry],
    stored: dict[str, set[str]],
    scope: _FolderScope,
    report: IngestReport,
) -> None:
    """Documents of this namespace that are no longer on disk: pruned when asked, else
    reported; a catalog row with no chunks and no file (a hint for nothing) is removed."""
    others = {e.namespace for e in known.values() if e.namespace and e.namespace != scope.namespace}
    ours = {s for s, e in known.items() if e.namespace == scope.namespace}
    gone = sorted(ours - scope.present)
    # The demo's sample gives way to the user's folder whole (removed as if pruned).
    sample = [] if scope.prune else [s for s in gone if is_bundled_sample(known[s].root)]
    if sample:
        for batch in _batches(sample, 500):
            client.delete(layout.name, filter=condition(layout.source_ref(), batch))
        delete_entries(client, catalog_name, sample)
        report.pruned = sample
        gone = [s for s in gone if s not in set(sample)]
    # Chunks of a document that never got its catalog entry (a killed run), no file either.
    orphans = sorted(
        s
        for s in stored
        if s not in known and s not in scope.present and _in_namespace(s, scope.namespace, others)
    )
    if scope.prune:
        for batch in _batches([*gone, *orphans], 500):
            client.delete(layout.name, filter=condition(layout.source_ref(), batch))
        delete_entries(client, catalog_name, gone)
        report.pruned = gone
        return
    hollow = [s for s in gone if not stored.get(s)]
    if hollow:
        delete_entries(client, catalog_name, hollow)
        report.repaired.extend(
            SkippedFile(s, "catalog entry without chunks or file, removed") for s in hollow
        )
    report.missing = sorted({*(s for s in gone if stored.get(s)), *orphans})
    if report.missing:
        logger.warning(
            "%d indexed documents are no longer on disk (run with --prune)", len(report.missing)
        )


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


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


def _embed_by_length(
    texts: Sequence[str], embedder: Embeddings, batch: int, progress: _Progress
) -> list[list[float]]:
    """Vectors of ``texts`` in their order, embedded in batches of texts of similar length.

    A batch is padded to its longest text: SciFact's chunks in ingest order carry 35% padding
    tokens, in length order under 1%. The vectors are the same (the model masks the padding).
    Batches, not one call, so the progress bar moves while the slow part runs.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors: list[list[float]] = [[] for _ in texts]
    for start in range(0, len(order), batch):
        piece = order[start : start + batch]
        for i, vector in zip(
            piece, embedder.embed_documents([texts[i] for i in piece]), strict=True
        ):
            vectors[i] = vector
        progress.embedded(len(piece))
    return vectors


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
    known: dict[str, CatalogEntry],
    scope: _FolderScope | None,
) -> None:
    """Embed and write documents in groups; a group's catalog entries are written last.

    Before a known document's chunks change, its catalog entry loses its content hash (the
    mark): a run killed in between re-processes it, whatever the file then holds. A document
    whose rows Milvus would refuse is skipped by name before the upsert; a batch that fails
    is retried document by document, so one document costs only itself.

    ``chunking``: the chunking signature recorded in each catalog entry.
    """
    group: list[tuple[KnowledgeDocument, list[Chunk]]] = []
    group_chunks = 0
    window = window_of(embedder, settings.embedding_max_tokens)
    root = scope.root if scope is not None else ""
    namespace = scope.namespace if scope is not None else ""

    def flush_group() -> None:
        nonlocal group_chunks
        if not group:
            return
        texts = [embedding_text(c, d, window) for d, chunks in group for c in chunks]
        vectors = _embed_by_length(texts, embedder, settings.embedding_batch_size, progress)
        # Whatever embedder was passed in: NaN, infinite or zero vectors are never stored.
        keys = [c.evidence_key for _, chunks in group for c in chunks]
        check_vectors(vectors, what="chunk", names=keys)
        rows_of: list[tuple[KnowledgeDocument, list[Chunk], list[dict[str, Any]]]] = []
        offset = 0
        for doc, chunks in group:
            end = offset + len(chunks)
            rows = _chunk_rows(chunks, texts[offset:end], vectors[offset:end], layout, doc)
            offset = end
            problem = next((p for r in rows if (p := _row_problem(r, layout))), None)
            if problem:
                report.skipped.append(SkippedFile(doc.source, problem))
                progress.advance(doc.source)
            else:
                rows_of.append((doc, chunks, rows))
        marks = [
            dataclasses.replace(known[doc.source], content_hash="")
            for doc, _, _ in rows_of
            if doc.source in known
        ]
        if marks:  # the mark: these documents are being rewritten
            upsert_entries(client, catalog_name, marks)
        written = _upsert_isolated(client, settings, layout, rows_of, report)
        # Always: a killed earlier run may have left chunks the catalog does not know of. One
        # delete per group, not per document (each delete scans the collection); a key names
        # its own source, so the group's kept keys select exactly.
        if written:
            keep = [c.evidence_key for _, chunks, _ in written for c in chunks]
            stale = and_exprs(
                condition(layout.source_ref(), [doc.source for doc, _, _ in written]),
                f"not ({condition(layout.id_field, keep)})",
            )
            report.stale_chunks_deleted += _deleted_count(client.delete(layout.name, filter=stale))
        entries = []
        for doc, chunks, _ in written:
            entry = CatalogEntry.from_document(
                doc, len(chunks), chunking, root=root, namespace=namespace
            )
            entries.append(entry)
            report.indexed.append(doc.source)
            report.chunks_written += len(chunks)
        upsert_entries(client, catalog_name, entries)
        for doc, _, _ in rows_of:
            progress.advance(doc.source)
        group.clear()
        group_chunks = 0

    for doc, chunks in planned:
        group.append((doc, chunks))
        group_chunks += len(chunks)
        if group_chunks >= settings.insert_batch_size:
            flush_group()
    flush_group()


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
