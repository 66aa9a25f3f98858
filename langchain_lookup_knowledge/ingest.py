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

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.ingest_feed import (
    ANALYZER_SAMPLE_CHARS,
    ANALYZER_SAMPLE_DOCS,
    DocumentFeed,
)
from langchain_lookup_knowledge.ingest_report import (
    ChunkProgressCallback,
    IngestReport,
    ProgressCallback,
)
from langchain_lookup_knowledge.ingest_run import (
    WriteOptions,
    analyzer_of_sample,
    create_default_data_dir,
    disk_full_reported,
    run_ingest,
)
from langchain_lookup_knowledge.ingest_write import FolderScope
from langchain_lookup_knowledge.knowledge.category_map import read_category_map
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import (
    MARKDOWN_SUFFIXES,
    check_source_prefix,
    walk_knowledge_folder,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.integrity import prepare_for_ingest

__all__ = [
    "ChunkProgressCallback",
    "IngestReport",
    "ProgressCallback",
    "WriteOptions",
    "analyzer_of_sample",
    "choose_analyzer",
    "create_default_data_dir",
    "disk_full_reported",
    "ingest_documents",
    "ingest_folder",
    "run_ingest",
]

logger = logging.getLogger(__name__)


def choose_analyzer(settings: LookupSettings, docs: Sequence[KnowledgeDocument]) -> str | None:
    """The BM25 analyzer: configured, or jieba when the knowledge base is CJK
    (:func:`~langchain_lookup_knowledge.core.text.is_cjk_corpus`)."""
    sample = [d.body[:ANALYZER_SAMPLE_CHARS] for d in docs[:ANALYZER_SAMPLE_DOCS]]
    return analyzer_of_sample(settings, sample)


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
    namespace = check_source_prefix(source_prefix)
    report = IngestReport(path=str(root), collection=settings.collection)

    table = (
        read_category_map(settings.categories_file, settings.categories_column)
        if settings.categories_file
        else None
    )
    categories = table.mapping if table is not None else None
    walk = walk_knowledge_folder(root, follow_links_inside=follow_links)
    if not walk.files and not walk.skipped and not prune:
        raise ConfigurationError(
            f"no markdown files ({', '.join(MARKDOWN_SUFFIXES)}; hidden ones are ignored) in "
            f"{root}: nothing to index (if its files were deleted on purpose, --prune / "
            "prune=True removes them from the collection)"
        )
    report.skipped.extend(walk.skipped)
    report.files_seen = len(walk.files) + len(walk.skipped)
    if table is not None:
        on_disk = {f.relative_to(root).as_posix() for f in walk.files}
        on_disk |= {s.source for s in walk.skipped}
        ignored = table.ignored + table.unmatched(on_disk)
        report.category_rows_ignored = sorted(ignored, key=lambda row: row.line)
    feed = DocumentFeed.of_files(walk.files, root, settings.max_file_bytes, categories, namespace)
    present = {s.source for s in report.skipped}  # the survey adds the files it reads
    scope = FolderScope(str(root), namespace, present, prune)
    options = WriteOptions(embeddings, show_progress, on_progress, on_chunk_progress)
    with disk_full_reported(settings, report):
        create_default_data_dir(settings)
        report.rebuilt = prepare_for_ingest(
            open_client(settings), settings, rebuild=rebuild, folder=str(path)
        )
        return run_ingest(feed, settings, report, started, options, scope=scope)


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
    options = WriteOptions(embeddings, show_progress, on_progress, on_chunk_progress)
    with disk_full_reported(settings, report):
        return run_ingest(
            DocumentFeed.of_documents(docs), settings, report, started, options, scope=None
        )
