"""The L0 knowledge catalog: one entry per document (title, terms, category), built at ingest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument


@dataclass(frozen=True)
class CatalogEntry:
    """What L0 knows of one document. Never evidence: only hints for L1."""

    source: str
    title: str
    category: str
    keywords: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    content_hash: str = ""
    chunk_count: int = 0
    chunking: str = ""  # chunking_signature the chunks were made with ("": before signatures)

    @classmethod
    def from_document(
        cls, doc: KnowledgeDocument, chunk_count: int, chunking: str = ""
    ) -> CatalogEntry:
        """The catalog entry of a parsed document (chunked as ``chunking`` says)."""
        return cls(
            source=doc.source,
            title=doc.title,
            category=doc.category,
            keywords=doc.keywords,
            entities=doc.entities,
            aliases=doc.aliases,
            content_hash=doc.content_hash,
            chunk_count=chunk_count,
            chunking=chunking,
        )

    def to_row(self) -> dict[str, Any]:
        """The Milvus row of this entry (catalog collection)."""
        return {
            "source": self.source,
            "title": self.title[:2000],
            "category": self.category[:500],
            "content_hash": self.content_hash,
            "chunk_count": self.chunk_count,
            "info": {
                "keywords": list(self.keywords),
                "entities": list(self.entities),
                "aliases": list(self.aliases),
                "chunking": self.chunking,
            },
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CatalogEntry:
        """Inverse of :meth:`to_row`."""
        info = row.get("info") or {}
        return cls(
            source=str(row["source"]),
            title=str(row.get("title") or ""),
            category=str(row.get("category") or ""),
            keywords=tuple(info.get("keywords") or ()),
            entities=tuple(info.get("entities") or ()),
            aliases=tuple(info.get("aliases") or ()),
            content_hash=str(row.get("content_hash") or ""),
            chunk_count=int(row.get("chunk_count") or 0),
            chunking=str(info.get("chunking") or ""),
        )
