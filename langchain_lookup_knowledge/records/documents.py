"""Which documents carry the load and which are never used.

Most cited: lookups that had the document among their evidence blocks or in their context pack
(``tool_invocation_source``, aggregated by the database). Never cited: catalog documents (read
through the store's catalog code, in the tenant's scope under a ``default_filter``) that no
lookup of the period cited: candidates for review or removal.

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> records = RecordFilter(Period.parse("7d"))
    >>> most_cited(engine, records), cited_sources(engine, records)
    ([], set())
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlalchemy import case, distinct, func, or_, select
from sqlalchemy.engine import Engine

from langchain_lookup_knowledge.core.filters import filter_to_expr
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.records.tables import tool_invocation_source as s
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "Period",
    "catalog_in_scope",
    "cited_sources",
    "document_names",
    "most_cited",
    "never_cited",
]
MOST_CITED = 20


def _cited() -> Any:
    return or_(s.c.evidence_blocks > 0, s.c.in_context.is_(True))


def most_cited(
    engine: Engine, records: RecordFilter, limit: int = MOST_CITED
) -> list[dict[str, Any]]:
    """The documents cited by the most lookups, with evidence-block and context-pack counts;
    one entry per collection and source (one path in two collections is two documents)."""
    lookups = func.count(distinct(s.c.invocation_id)).label("lookups")
    query = (
        select(
            s.c.collection,
            s.c.source,
            lookups,
            func.sum(s.c.evidence_blocks).label("evidence_blocks"),
            func.sum(case((s.c.in_context.is_(True), 1), else_=0)).label("in_context"),
        )
        .where(_cited(), *records.where(s))
        .group_by(s.c.collection, s.c.source)
        .order_by(lookups.desc(), s.c.source, s.c.collection)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [
            {
                "collection": row.collection,
                "source": row.source,
                "lookups": int(row.lookups),
                "evidence_blocks": int(row.evidence_blocks or 0),
                "in_context": int(row.in_context or 0),
            }
            for row in conn.execute(query)
        ]


def document_names(cited: Iterable[dict[str, Any]]) -> list[str]:
    """How the report names each most-cited document: its source, prefixed with its collection
    when the entries come from more than one collection.

    Example:
        >>> document_names([{"collection": "kb", "source": "a.md"}])
        ['a.md']
        >>> document_names([{"collection": "kb", "source": "a.md"},
        ...                 {"collection": "docs", "source": "a.md"}])
        ['kb: a.md', 'docs: a.md']
    """
    entries = list(cited)
    several = len({e.get("collection") for e in entries}) > 1
    return [f"{e.get('collection')}: {e['source']}" if several else e["source"] for e in entries]


def cited_sources(engine: Engine, records: RecordFilter) -> set[str]:
    """Every document cited at least once in the period (as many rows as documents)."""
    query = select(s.c.source).distinct().where(_cited(), *records.where(s))
    with engine.connect() as conn:
        return {str(row[0]) for row in conn.execute(query)}


def never_cited(catalog: Iterable[CatalogEntry], cited: set[str]) -> dict[str, Any]:
    """Catalog documents no lookup cited, with their categories (and a count per category).

    Example:
        >>> entries = [CatalogEntry("a.md", "A", "db"), CatalogEntry("b.md", "B", "net")]
        >>> never_cited(entries, {"a.md"})["documents"]
        [{'source': 'b.md', 'title': 'B', 'category': 'net'}]
    """
    entries = list(catalog)
    missing = [e for e in entries if e.source not in cited]
    return {
        "catalog_documents": len(entries),
        "documents": [
            {"source": e.source, "title": e.title, "category": e.category} for e in missing
        ],
        "by_category": dict(Counter(e.category or "(none)" for e in missing).most_common()),
    }


def catalog_in_scope(settings: LookupSettings) -> list[CatalogEntry]:
    """The catalog of ``settings.collection`` as the lookups see it (the tenant's documents only
    under a ``default_filter``); raises :class:`StoreUnavailableError` when Milvus is not there.

    Only the store is read: the chunk collection's source field comes from its schema, so no
    embedding model is loaded for it.
    """
    from langchain_lookup_knowledge.store.catalog_store import load_catalog, sources_in_scope
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.schema import describe_chunk_collection

    client = open_client(settings)
    entries = load_catalog(client, settings.resolved_catalog_collection)
    scope = filter_to_expr(settings.default_filter)
    if not scope or not entries:
        return entries
    layout = describe_chunk_collection(client, settings, dimension=None)
    if layout.source_field is None:
        return []
    allowed = sources_in_scope(client, layout.name, layout.source_field, scope)
    return [e for e in entries if e.source in allowed]
