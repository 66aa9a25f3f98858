"""The L0 knowledge catalog: one entry per document (title, terms, category), built at ingest."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from langchain_lookup_knowledge.knowledge.documents import DocumentTerms, KnowledgeDocument


@dataclass(frozen=True)
class CatalogEntry(DocumentTerms):
    """What L0 knows of one document: its terms, and how it was ingested. Never evidence: only
    hints for L1."""

    content_hash: str = ""
    chunk_count: int = 0
    chunking: str = ""  # chunking_signature the chunks were made with ("": before signatures)
    root: str = ""  # the folder the document was ingested from ("": unknown, documents API)
    namespace: str = ""  # the source_prefix it was ingested under ("": none)
    # markdown tables its stored chunks hold (document_tables); None: not counted (an entry
    # written before the count was kept), so a reader must read the document to know
    tables: int | None = None
    problems: tuple[str, ...] = ()  # what was wrong with the stored row (tolerated, reported)

    @classmethod
    def from_document(
        cls,
        doc: KnowledgeDocument,
        chunk_count: int,
        chunking: str = "",
        *,
        root: str = "",
        namespace: str = "",
        tables: int | None = None,
    ) -> CatalogEntry:
        """The catalog entry of a parsed document (chunked as ``chunking`` says, its chunks
        holding ``tables`` markdown tables)."""
        return cls(
            **{f.name: getattr(doc, f.name) for f in fields(DocumentTerms)},
            content_hash=doc.content_hash,
            chunk_count=chunk_count,
            chunking=chunking,
            root=root,
            namespace=namespace,
            tables=tables,
        )

    def to_row(self) -> dict[str, Any]:
        """The Milvus row of this entry (catalog collection)."""
        info: dict[str, Any] = {
            "keywords": list(self.keywords),
            "entities": list(self.entities),
            "aliases": list(self.aliases),
            "chunking": self.chunking,
            "root": self.root,
            "namespace": self.namespace,
        }
        if self.tables is not None:
            info["tables"] = self.tables
        return {
            "source": self.source,
            "title": self.title[:2000],
            "category": self.category[:500],
            "content_hash": self.content_hash,
            "chunk_count": self.chunk_count,
            "info": info,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CatalogEntry:
        """Inverse of :meth:`to_row`, tolerant of a damaged row: a field of the wrong type is
        read as empty and named in :attr:`problems` (ingest repairs such a row).

        Example:
            >>> entry = CatalogEntry.from_row({"source": "a.md", "info": {"keywords": 42}})
            >>> entry.keywords, entry.problems
            ((), ("'keywords' is int, not a list",))
        """
        problems: list[str] = []
        info = row.get("info")
        if info is None:
            info = {}
        elif not isinstance(info, dict):
            problems.append(f"'info' is {type(info).__name__}, not a mapping")
            info = {}
        try:
            chunk_count = int(row.get("chunk_count") or 0)
        except (TypeError, ValueError):
            problems.append(f"'chunk_count' is {type(row.get('chunk_count')).__name__}")
            chunk_count = 0
        return cls(
            source=str(row["source"]),
            title=_text(row.get("title")),
            category=_text(row.get("category")),
            keywords=_terms(info.get("keywords"), "keywords", problems),
            entities=_terms(info.get("entities"), "entities", problems),
            aliases=_terms(info.get("aliases"), "aliases", problems),
            content_hash=_text(row.get("content_hash")),
            chunk_count=chunk_count,
            chunking=_text(info.get("chunking")),
            root=_text(info.get("root")),
            namespace=_text(info.get("namespace")),
            tables=_count(info.get("tables"), "tables", problems),
            problems=tuple(problems),
        )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _count(value: Any, name: str, problems: list[str]) -> int | None:
    """A stored count; absent is unknown (None), and so is anything but a whole number >= 0,
    a named problem.

    Example:
        >>> problems = []
        >>> _count(3, "tables", problems), _count(None, "tables", problems), problems
        (3, None, [])
        >>> _count("3", "tables", problems), problems
        (None, ["'tables' is str, not a count"])
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"'{name}' is {type(value).__name__}, not a count")
        return None
    return value


def _terms(value: Any, name: str, problems: list[str]) -> tuple[str, ...]:
    """A stored term list; anything else is no terms, and a named problem."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        problems.append(f"'{name}' is {type(value).__name__}, not a list")
        return ()
    terms = tuple(item for item in value if isinstance(item, str))
    if len(terms) != len(value):
        problems.append(f"'{name}' holds values that are not text")
    return terms
