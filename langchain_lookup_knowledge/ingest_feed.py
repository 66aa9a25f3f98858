"""The documents of one ingest, streamed: surveyed once, then written in bounded groups.

An ingest reads its documents twice without holding them all: a survey (what changed, how many
chunks the changed ones make, the sources present, a text sample for the analyzer), then the
write, which takes the changed documents one at a time. Documents and chunks seen in the survey
are kept for the write only up to :data:`KEEP_BYTES` of text; past that, a document is read and
chunked again when its turn comes, so memory does not grow with the folder.

Example:
    >>> from langchain_lookup_knowledge.knowledge.documents import parse_document
    >>> doc = parse_document(b"# Disk full\\n\\nFree space.", "ops/disk.md")
    >>> feed = DocumentFeed.of_documents([doc])
    >>> feed.load(feed.items[0]).source
    'ops/disk.md'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.knowledge.chunking import Chunk
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import SkippedFile, load_document

KEEP_BYTES = 32 * 1024 * 1024
"""Text (document bodies and their chunks) the survey keeps for the write; beyond, re-read."""
ANALYZER_SAMPLE_DOCS = 200
ANALYZER_SAMPLE_CHARS = 2000

Loaded = KnowledgeDocument | SkippedFile


@dataclass(frozen=True)
class DocumentFeed:
    """Where an ingest's documents come from: ``items`` read by ``load`` on demand (files), or
    documents already in memory."""

    items: Sequence[Any]
    load: Callable[[Any], Loaded]

    @classmethod
    def of_files(
        cls,
        files: Sequence[Path],
        root: Path,
        max_bytes: int,
        categories: Mapping[str, str] | None,
        namespace: str,
    ) -> DocumentFeed:
        """Files of a folder walk, parsed when read (see :func:`load_document`)."""

        def load(path: Path) -> Loaded:
            return load_document(path, root, max_bytes, categories, namespace)

        return cls(files, load)

    @classmethod
    def of_documents(cls, docs: Sequence[KnowledgeDocument]) -> DocumentFeed:
        """Documents already parsed (they are in memory anyway)."""
        return cls(docs, lambda doc: doc)


@dataclass
class Planned:
    """A changed document to write: its feed item, and its document and chunks while kept."""

    item: Any
    source: str
    chunk_count: int
    doc: KnowledgeDocument | None = None
    chunks: list[Chunk] | None = None


@dataclass
class Survey:
    """What the survey of a feed found."""

    changed: list[Planned] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    present: set[str] = field(default_factory=set)
    """Sources seen, read or skipped."""
    sample: list[str] = field(default_factory=list)
    """The start of the first documents' bodies (the analyzer's choice)."""
    skipped: list[SkippedFile] = field(default_factory=list)
    """Files that could not be read, in feed order."""
    refused: list[SkippedFile] = field(default_factory=list)
    """Documents read but not to be written (``refuse`` said why)."""
    warnings: list[SkippedFile] = field(default_factory=list)

    @property
    def chunk_total(self) -> int:
        """Chunks the changed documents make."""
        return sum(p.chunk_count for p in self.changed)


def survey(
    feed: DocumentFeed,
    *,
    chunk: Callable[[KnowledgeDocument], list[Chunk]],
    unchanged: Callable[[KnowledgeDocument], bool],
    refuse: Callable[[KnowledgeDocument], str | None],
    keep_bytes: int | None = None,
) -> Survey:
    """Read every item once: sort it into unchanged, changed (with its chunk count) or
    skipped; keep changed documents and their chunks while they fit in ``keep_bytes``
    (:data:`KEEP_BYTES` by default)."""
    keep_bytes = KEEP_BYTES if keep_bytes is None else keep_bytes
    found = Survey()
    kept = 0
    for item in feed.items:
        loaded = feed.load(item)
        found.present.add(loaded.source)
        if isinstance(loaded, SkippedFile):
            found.skipped.append(loaded)
            continue
        found.warnings.extend(SkippedFile(loaded.source, w) for w in loaded.warnings)
        reason = refuse(loaded)
        if reason is not None:
            found.refused.append(SkippedFile(loaded.source, reason))
            continue
        if len(found.sample) < ANALYZER_SAMPLE_DOCS:
            found.sample.append(loaded.body[:ANALYZER_SAMPLE_CHARS])
        if unchanged(loaded):
            found.unchanged.append(loaded.source)
            continue
        chunks = chunk(loaded)
        planned = Planned(item, loaded.source, len(chunks))
        size = len(loaded.body) + sum(len(c.text) for c in chunks)
        if kept + size <= keep_bytes:
            kept += size
            planned.doc, planned.chunks = loaded, chunks
        found.changed.append(planned)
    return found


def changed_documents(
    feed: DocumentFeed,
    found: Survey,
    chunk: Callable[[KnowledgeDocument], list[Chunk]],
) -> Iterator[tuple[KnowledgeDocument, list[Chunk]] | SkippedFile]:
    """The changed documents with their chunks, one at a time (read again when not kept; a
    file that became unreadable since the survey is its :class:`SkippedFile`). Each is
    released from the survey once handed out."""
    for planned in found.changed:
        doc, chunks = planned.doc, planned.chunks
        planned.doc = planned.chunks = None
        if doc is None or chunks is None:
            loaded = feed.load(planned.item)
            if isinstance(loaded, SkippedFile):
                yield loaded
                continue
            doc, chunks = loaded, chunk(loaded)
        yield doc, chunks
