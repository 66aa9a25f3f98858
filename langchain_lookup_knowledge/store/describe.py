"""Reading an existing chunk collection's real schema and index into a CollectionLayout.

Example:
    >>> ingested_collections(client)  # doctest: +SKIP
    ['knowledge']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.embeddings import Embeddings
from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.embeddings.identity import PROBE_TEXT, EmbedderIdentity
from langchain_lookup_knowledge.errors import (
    CollectionNotFoundError,
    MissingIndexError,
    SchemaMismatchError,
)
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.embedder_record import check_embedder
from langchain_lookup_knowledge.store.index_repair import (
    missing_index_message,
    unindexed_fields,
)
from langchain_lookup_knowledge.store.layout import (
    DENSE_VECTOR_TYPES,
    CollectionLayout,
    analyzer_of,
    bm25_input_of,
    lexical_form_of,
)
from langchain_lookup_knowledge.store.lifecycle import ensure_loaded
from langchain_lookup_knowledge.store.vector_copy import vector_copy_length

__all__ = [
    "describe_chunk_collection",
    "describe_for_embedder",
    "ingested_collections",
    "require_chunk_collection",
]


def require_chunk_collection(client: MilvusClient, settings: LookupSettings) -> None:
    """Fail with what to do when the configured chunk collection was never ingested.

    Raises:
        CollectionNotFoundError: it does not exist (the message names it, the database and
            the command that creates it).
    """
    name = settings.collection
    if not client.has_collection(name):
        msg = (
            f"collection {name!r} does not exist at {mask_url(settings.resolved_milvus_uri)}: "
            "run `lookup-knowledge ingest PATH` first (or set LOOKUP_KNOWLEDGE_COLLECTION)"
        )
        ingested = ingested_collections(client)
        if ingested:
            msg += "; ingested there: " + ", ".join(ingested)
        raise CollectionNotFoundError(msg)


def ingested_collections(client: MilvusClient) -> list[str]:
    """The chunk collections an ingest made (each has its ``<name>_catalog``), sorted; [] when
    they cannot be listed."""
    try:
        names = set(client.list_collections())
    except Exception:  # only a hint for a message: never the error itself
        return []
    return sorted(n for n in names if f"{n}_catalog" in names)


def describe_for_embedder(
    client: MilvusClient, settings: LookupSettings, embeddings: Embeddings
) -> tuple[CollectionLayout, list[float]]:
    """The chunk collection as a lookup opens it: :func:`describe_chunk_collection` checked
    against ``embeddings`` (their dimension and identity, read from their vector of
    :data:`~langchain_lookup_knowledge.embeddings.identity.PROBE_TEXT`), and that vector.

    Example:
        >>> layout, probe = describe_for_embedder(client, settings, embedder)  # doctest: +SKIP
        >>> layout.name == settings.collection, len(probe)  # doctest: +SKIP
        (True, 384)
    """
    probe = embeddings.embed_query(PROBE_TEXT)  # the dimension, and which model
    identity = EmbedderIdentity.of(embeddings, probe)
    return describe_chunk_collection(client, settings, len(probe), embedder=identity), probe


def describe_chunk_collection(
    client: MilvusClient,
    settings: LookupSettings,
    dimension: int | None,
    *,
    embedder: EmbedderIdentity | None = None,
) -> CollectionLayout:
    """Read an existing collection's schema and index; fail clearly when it does not fit.

    ``embedder``: the configured embedder, checked against the one the collection records
    (:class:`~langchain_lookup_knowledge.errors.EmbedderMismatchError` when it is another).
    """
    name = settings.collection
    require_chunk_collection(client, settings)
    info = client.describe_collection(name)
    fields = {f["name"]: f for f in info.get("fields", [])}
    for role, field_name in (
        ("id_field", settings.id_field),
        ("content_field", settings.content_field),
        ("vector_field", settings.vector_field),
    ):
        if field_name not in fields:
            msg = (
                f"collection {name!r} has no field {field_name!r} (setting {role}); "
                f"its fields are {sorted(fields)}"
            )
            raise SchemaMismatchError(msg)
    vector = fields[settings.vector_field]
    if vector.get("type") not in DENSE_VECTOR_TYPES:
        msg = (
            f"field {settings.vector_field!r} of collection {name!r} is not a dense float vector "
            f"(type {vector.get('type')!r}): set vector_field to the dense vector field"
        )
        raise SchemaMismatchError(msg)
    actual_dim = int(vector.get("params", {}).get("dim", 0))
    if dimension is not None and actual_dim != dimension:
        msg = (
            f"collection {name!r} stores {actual_dim}-dimensional vectors but the embedder "
            f"makes {dimension}-dimensional ones: use the embedder the collection was built "
            "with, or ingest into a new collection"
        )
        raise SchemaMismatchError(msg)
    if embedder is not None:
        check_embedder(info, settings, name, embedder)  # the description read above
    unindexed = unindexed_fields(client, name, info, settings)
    if unindexed:
        raise MissingIndexError(missing_index_message(name, unindexed))
    index = client.describe_index(name, settings.vector_field) or {}
    metric = str(index.get("metric_type") or settings.metric_type).upper()
    if metric != settings.metric_type:
        msg = (
            f"collection {name!r} indexes {settings.vector_field!r} with metric {metric}, "
            f"but metric_type is {settings.metric_type}: set LOOKUP_KNOWLEDGE_METRIC_TYPE={metric}"
        )
        raise SchemaMismatchError(msg)
    sparse = settings.sparse_field if settings.sparse_field in fields else None
    bm25_input, function_name = bm25_input_of(info, sparse) if sparse is not None else (None, "")
    if bm25_input is None or bm25_input not in fields:
        sparse = bm25_input = None
    analyzer = None
    lexical_field: str | None = None
    lexical_form: LexicalForm | None = None
    if bm25_input is not None:
        analyzer = analyzer_of(fields, bm25_input)
        if bm25_input != settings.content_field:
            lexical_field = bm25_input
            lexical_form = lexical_form_of(name, function_name)
    metadata = settings.metadata_field if settings.metadata_field in fields else None
    ensure_loaded(client, name, settings.milvus_load_timeout_s)
    try:
        row_count = int(client.get_collection_stats(name).get("row_count", 0))
    except Exception:
        row_count = 0
    return CollectionLayout(
        name=name,
        id_field=settings.id_field,
        content_field=settings.content_field,
        vector_field=settings.vector_field,
        dimension=actual_dim,
        metric_type=metric,
        index_type=str(index.get("index_type") or settings.index_type).upper(),
        sparse_field=sparse,
        metadata_field=metadata,
        category_field=settings.category_field if settings.category_field in fields else None,
        source_field=settings.source_field if settings.source_field in fields else None,
        analyzer=analyzer,
        row_count=row_count,
        lexical_field=lexical_field,
        lexical_form=lexical_form,
        vector_copy_field=_vector_copy_field(fields, settings, actual_dim),
    )


def _vector_copy_field(
    fields: Mapping[str, Any], settings: LookupSettings, dimension: int
) -> str | None:
    """``settings.vector_copy_field`` when the collection has it as a copy of float32 vectors of
    ``dimension`` can be (a VARCHAR long enough, beside a FLOAT_VECTOR field); else None."""
    name = settings.vector_copy_field
    field = fields.get(name or "")
    if not name or field is None or field.get("type") != DataType.VARCHAR:
        return None
    if fields[settings.vector_field].get("type") != DataType.FLOAT_VECTOR:
        return None
    length = int(field.get("params", {}).get("max_length", 0) or 0)
    return name if length >= vector_copy_length(dimension) else None
