"""Read and write the L0 catalog collection in Milvus (works for Lite and remote servers)."""

from __future__ import annotations

from collections.abc import Iterable

from pymilvus import MilvusClient

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.store.filters import condition
from langchain_lookup_knowledge.store.schema import CATALOG_VECTOR_FIELD

_OUTPUT = ["source", "title", "category", "content_hash", "chunk_count", "info"]
_PAGE = 1000


def load_catalog(client: MilvusClient, collection: str) -> list[CatalogEntry]:
    """Every catalog entry, in source order; an absent collection is an empty catalog."""
    if not client.has_collection(collection):
        return []
    entries: list[CatalogEntry] = []
    iterator = client.query_iterator(
        collection, batch_size=_PAGE, filter='source != ""', output_fields=_OUTPUT
    )
    try:
        while True:
            page = iterator.next()
            if not page:
                break
            entries.extend(CatalogEntry.from_row(row) for row in page)
    finally:
        iterator.close()
    return sorted(entries, key=lambda e: e.source)


def upsert_entries(client: MilvusClient, collection: str, entries: Iterable[CatalogEntry]) -> None:
    """Write entries (after their chunks: the entry's hash marks the document as done)."""
    rows = [entry.to_row() | {CATALOG_VECTOR_FIELD: [0.0, 0.0]} for entry in entries]
    if rows:
        client.upsert(collection, rows)


def delete_entries(client: MilvusClient, collection: str, sources: list[str]) -> None:
    """Remove entries of documents that are gone."""
    if sources:
        client.delete(collection, filter=condition("source", sources))
