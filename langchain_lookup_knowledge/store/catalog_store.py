"""Read and write the L0 catalog collection in Milvus (works for Lite and remote servers)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.store.schema import CATALOG_VECTOR_FIELD, ensure_loaded

logger = logging.getLogger(__name__)

_OUTPUT = ["source", "title", "category", "content_hash", "chunk_count", "info"]
_PAGE = 1000
_WINDOW = 16384


def query_all(
    client: MilvusClient, collection: str, expr: str, fields: list[str]
) -> list[dict[str, Any]]:
    """Every row of ``collection`` matching ``expr``, with ``fields``: one query while the rows
    fit Milvus's query window (16,384), else paged through a query iterator.

    Example:
        >>> rows = query_all(client, "kb_catalog", 'source != ""', ["source"])  # doctest: +SKIP
        >>> rows[0]  # doctest: +SKIP
        {'source': 'databases/pgbouncer-connection-exhaustion.md'}
    """
    rows = client.query(collection, filter=expr, output_fields=fields, limit=_WINDOW)
    if len(rows) < _WINDOW:
        return list(rows)
    return [row for page in query_pages(client, collection, expr, fields) for row in page]


def query_pages(
    client: MilvusClient, collection: str, expr: str, fields: list[str], size: int = _PAGE
) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``collection`` matching ``expr`` a page of ``size`` at a time, so a caller
    that counts or folds them never holds them all.

    Example:
        >>> pages = query_pages(client, "kb", 'pk != ""', ["pk"])  # doctest: +SKIP
        >>> sum(len(page) for page in pages)  # doctest: +SKIP
        4791
    """
    iterator = client.query_iterator(collection, batch_size=size, filter=expr, output_fields=fields)
    try:
        while page := iterator.next():
            yield page
    finally:
        iterator.close()


def load_catalog(client: MilvusClient, collection: str) -> list[CatalogEntry]:
    """Every catalog entry, in source order; an absent collection is an empty catalog.

    A damaged row never fails the load (lookups and ingests read the catalog): a field of the
    wrong type is read as empty and named in the entry's ``problems`` (logged; the next ingest
    rewrites the row).
    """
    if not client.has_collection(collection):
        return []
    ensure_loaded(client, collection)
    rows = query_all(client, collection, 'source != ""', _OUTPUT)
    entries = []
    for row in rows:
        try:
            entry = CatalogEntry.from_row(row)
        except Exception as exc:  # a row without a source: nothing to attach it to
            logger.warning("catalog %s: unreadable row ignored (%s)", collection, exc)
            continue
        if entry.problems:
            logger.warning(
                "catalog %s: row %r is damaged (%s); the next ingest repairs it",
                collection,
                entry.source,
                "; ".join(entry.problems),
            )
        entries.append(entry)
    return sorted(entries, key=lambda e: e.source)


def source_of_chunk_key(key: str) -> str:
    """The source a chunk key names (a key is ``<source>#<ordinal>``; one without ``#`` is its
    own source).

    Example:
        >>> source_of_chunk_key("ops/a#b.md#3"), source_of_chunk_key("loose")
        ('ops/a#b.md', 'loose')
    """
    source, hash_sign, _ = key.rpartition("#")
    return source if hash_sign else key


def chunk_ordinal(key: str) -> int:
    """The ordinal a chunk key ends with (its place in the document), -1 when it has none.

    Example:
        >>> chunk_ordinal("ops/a#b.md#3"), chunk_ordinal("loose")
        (3, -1)
    """
    _, hash_sign, ordinal = key.rpartition("#")
    return int(ordinal) if hash_sign and ordinal.isdigit() else -1


def stored_chunk_keys(client: MilvusClient, collection: str, id_field: str) -> dict[str, set[str]]:
    """The chunk keys really stored, by source (a key is ``<source>#<ordinal>``)."""
    keys: dict[str, set[str]] = {}
    for row in query_all(client, collection, f'{id_field} != ""', [id_field]):
        key = str(row[id_field])
        keys.setdefault(source_of_chunk_key(key), set()).add(key)
    return keys


def sources_in_scope(
    client: MilvusClient, collection: str, source_field: str, expr: str
) -> set[str]:
    """The sources that have at least one chunk matching ``expr`` (a deployment's scope)."""
    rows = query_all(client, collection, expr, [source_field])
    return {str(row[source_field]) for row in rows}


def upsert_entries(client: MilvusClient, collection: str, entries: Iterable[CatalogEntry]) -> None:
    """Write entries (after their chunks: the entry's hash marks the document as done)."""
    rows = [entry.to_row() | {CATALOG_VECTOR_FIELD: [0.0, 0.0]} for entry in entries]
    if rows:
        client.upsert(collection, rows)


def delete_entries(client: MilvusClient, collection: str, sources: list[str]) -> None:
    """Remove entries of documents that are gone."""
    if sources:
        client.delete(collection, filter=condition("source", sources))
