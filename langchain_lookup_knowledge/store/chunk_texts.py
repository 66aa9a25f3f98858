"""Read the stored chunks' texts document by document, a bounded batch of documents per query.

Example:
    >>> keys = stored_chunk_keys(client, layout.name, layout.id_field)  # doctest: +SKIP
    >>> next(iter_texts_by_source(client, layout, keys, sorted(keys)))  # doctest: +SKIP
    ('db/replica-lag.md', ['Replica lag ...', '...'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from pymilvus import MilvusClient

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.store.catalog_store import (
    chunk_ordinal,
    query_pages,
    source_of_chunk_key,
)
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = ["iter_texts_by_source"]


def iter_texts_by_source(
    client: MilvusClient,
    layout: CollectionLayout,
    keys: Mapping[str, set[str]],
    sources: Sequence[str],
    *,
    batch: int = 64,
    max_keys: int = 2_048,
) -> Iterator[tuple[str, list[str]]]:
    """``(source, chunk texts in chunk order)`` for each of ``sources`` in ``keys`` (the chunk
    keys by source, :func:`~.catalog_store.stored_chunk_keys`), in the order given, reading
    up to ``batch`` sources' chunks per query, and no more than ``max_keys`` chunks unless one
    source alone has more: a reader that stops early (the profile's pseudo-questions) never
    reads the rest, and none holds more than one query's texts."""
    fields = [layout.id_field, layout.content_field]
    for part in _source_batches([s for s in sources if keys.get(s)], keys, batch, max_keys):
        texts: dict[str, list[tuple[int, str]]] = {source: [] for source in part}
        expr = condition(layout.id_field, [key for source in part for key in keys[source]])
        for page in query_pages(client, layout.name, expr, fields):
            for row in page:
                key = str(row[layout.id_field])
                texts[source_of_chunk_key(key)].append(
                    (chunk_ordinal(key), str(row.get(layout.content_field) or ""))
                )
        for source in part:
            yield source, [text for _, text in sorted(texts[source])]


def _source_batches(
    sources: Sequence[str], keys: Mapping[str, set[str]], batch: int, max_keys: int
) -> Iterator[list[str]]:
    """``sources`` cut into runs of at most ``batch`` sources and ``max_keys`` keys (a source
    with more keys than that is a run of its own)."""
    part: list[str] = []
    size = 0
    for source in sources:
        if part and (len(part) >= batch or size + len(keys[source]) > max_keys):
            yield part
            part, size = [], 0
        part.append(source)
        size += len(keys[source])
    if part:
        yield part
