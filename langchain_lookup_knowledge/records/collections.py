"""Which collections a report may name: those with recorded lookups and those ingested in the
store. A ``--collection`` that is neither is an error listing both (not an empty report).

Example:
    >>> print(unknown_collection_message("kb", ["knowledge"], ["knowledge", "docs"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    collection 'kb' is unknown: no lookup of it is recorded and the store has no such
    collection (recorded: knowledge; ingested: docs, knowledge)
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Engine

from langchain_lookup_knowledge.errors import CollectionNotFoundError
from langchain_lookup_knowledge.records.tables import tool_invocation as t
from langchain_lookup_knowledge.settings import LookupSettings


def recorded_collections(engine: Engine) -> list[str]:
    """Every collection some recorded lookup searched (any period, any scope), sorted."""
    query = select(t.c.collection).where(t.c.collection.is_not(None)).distinct()
    with engine.connect() as conn:
        return sorted(str(row[0]) for row in conn.execute(query))


def _ingested(settings: LookupSettings) -> list[str] | None:
    """The store's ingested collections (None: the store could not be read)."""
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.schema import ingested_collections

    try:
        return ingested_collections(open_client(settings))
    except Exception:  # a store that cannot be opened only takes the hint away
        return None


def unknown_collection_message(name: str, recorded: list[str], ingested: list[str] | None) -> str:
    """The error for a collection that is neither recorded nor ingested, naming those that are."""
    store = (
        "; ingested: " + (", ".join(sorted(ingested)) or "none")
        if ingested is not None
        else ("; the store could not be read")
    )
    return (
        f"collection {name!r} is unknown: no lookup of it is recorded and the store has no such "
        f"collection (recorded: {', '.join(recorded) or 'none'}{store})"
    )


def require_known_collection(engine: Engine, settings: LookupSettings, name: str) -> None:
    """Raise :class:`CollectionNotFoundError` unless ``name`` is recorded or ingested."""
    recorded = recorded_collections(engine)
    if name in recorded:
        return
    ingested = _ingested(settings)
    if ingested is not None and name in ingested:
        return
    raise CollectionNotFoundError(unknown_collection_message(name, recorded, ingested))
