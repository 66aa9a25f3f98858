"""Create or open the chunk and catalog collections, and check they fit the configuration.

The chunk collection: ``pk`` (evidenceKey), ``text`` (the chunk as shown), ``lexical`` (its
lexical form, :mod:`~langchain_lookup_knowledge.core.lexical`, the BM25 input of an English
collection; a Chinese one, or one built before, analyses ``text`` itself), ``vector``, ``sparse``
(BM25 function output), ``metadata`` (JSON), ``category`` and ``source`` (scalars: filtering on
a JSON path is ~30x slower), and beside BM25 ``vector_b64`` (each vector as the base64 of its
float32 bytes: what BM25 and hybrid hits return for their cosine). Field names are
configuration; an existing collection's real schema and index decide what is used (its lexical
form too: it is recorded in the field's description).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.embeddings.identity import EmbedderIdentity
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.bm25_index import (
    PASSAGE_BM25,
    add_bm25_field,
    apply_bm25_parameters,
    bm25_defaults_notice,
    bm25_of_index,
    bm25_parameters,
    explicit_bm25_parameters,
    indexed_bm25_parameters,
    rebuild_sparse_index,
    server_lacks_bm25,
    sparse_index_params,
)
from langchain_lookup_knowledge.store.describe import (
    describe_chunk_collection,
    ingested_collections,
    require_chunk_collection,
)
from langchain_lookup_knowledge.store.embedder_record import embedder_properties
from langchain_lookup_knowledge.store.index_record import (
    add_index_arguments,
    described_spec,
    record_indexes,
)
from langchain_lookup_knowledge.store.index_repair import repair_missing_indexes
from langchain_lookup_knowledge.store.layout import (
    CATALOG_VECTOR_FIELD,
    CONSISTENCY_LEVEL,
    MAX_CATEGORY,
    MAX_JSON_BYTES,
    MAX_KEY,
    MAX_TEXT,
    CollectionLayout,
    dense_index_params,
    dense_search_params,
)
from langchain_lookup_knowledge.store.lifecycle import (
    clear_unfinished_lite_collection,
    create_indexed_collection,
    ensure_loaded,
    is_disk_full,
    warm_up,
)
from langchain_lookup_knowledge.store.vector_copy import vector_copy_length

__all__ = [
    "CATALOG_VECTOR_FIELD",
    "CONSISTENCY_LEVEL",
    "MAX_CATEGORY",
    "MAX_JSON_BYTES",
    "MAX_KEY",
    "MAX_TEXT",
    "PASSAGE_BM25",
    "CollectionLayout",
    "apply_bm25_parameters",
    "bm25_defaults_notice",
    "bm25_of_index",
    "bm25_parameters",
    "clear_unfinished_lite_collection",
    "configured_lexical_form",
    "create_indexed_collection",
    "create_with_bm25_or_dense",
    "dense_index_params",
    "dense_search_params",
    "describe_chunk_collection",
    "ensure_catalog_collection",
    "ensure_chunk_collection",
    "ensure_loaded",
    "explicit_bm25_parameters",
    "indexed_bm25_parameters",
    "ingested_collections",
    "is_disk_full",
    "rebuild_sparse_index",
    "repair_missing_indexes",
    "require_chunk_collection",
    "server_lacks_bm25",
    "sparse_index_params",
    "warm_up",
]

logger = logging.getLogger(__name__)


def configured_lexical_form(settings: LookupSettings, analyzer: str | None) -> LexicalForm | None:
    """The lexical form a new collection's BM25 input gets; None: the plain text.

    Identifier parts when ``bm25_split_identifiers`` is on, for the ``standard`` and ``jieba``
    analyzers (jieba segments the Chinese, which the form leaves as written; English
    identifiers inside Chinese text, ``proxy-cache`` or ``tidb_gc_life_time``, get their words).
    A new collection is never stemmed; one whose recorded form has stems is read as built.

    Example:
        >>> configured_lexical_form(LookupSettings(), "standard")
        LexicalForm(stem=False, split_identifiers=True)
        >>> configured_lexical_form(LookupSettings(bm25_split_identifiers=False), "jieba") is None
        True
    """
    if analyzer not in ("standard", "jieba") or not settings.bm25_split_identifiers:
        return None
    return LexicalForm(stem=False, split_identifiers=True)


def _analyzed(analyzer: str) -> dict[str, Any]:
    params = {"type": "standard"} if analyzer == "standard" else {"tokenizer": analyzer}
    return {"enable_analyzer": True, "analyzer_params": params}


def _create_chunk_collection(
    client: MilvusClient,
    settings: LookupSettings,
    dimension: int,
    analyzer: str | None,
    properties: dict[str, str] | None,
) -> None:
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field(settings.id_field, DataType.VARCHAR, max_length=MAX_KEY, is_primary=True)
    form = configured_lexical_form(settings, analyzer)
    bm25_input = settings.lexical_field if form is not None else settings.content_field
    text_kwargs: dict[str, Any] = {"max_length": MAX_TEXT}
    if analyzer and form is None:
        text_kwargs |= _analyzed(analyzer)
    schema.add_field(settings.content_field, DataType.VARCHAR, **text_kwargs)
    if analyzer and form is not None:
        schema.add_field(
            settings.lexical_field,
            DataType.VARCHAR,
            max_length=MAX_TEXT,
            **_analyzed(analyzer),
        )
    schema.add_field(settings.vector_field, DataType.FLOAT_VECTOR, dim=dimension)
    copy_length = vector_copy_length(dimension)
    if analyzer and settings.vector_copy_field and copy_length <= MAX_TEXT:
        # What BM25 and hybrid hits return for their cosine; only they ask for hit vectors.
        # Nullable: rows another writer adds without it still fit (their vectors are read).
        schema.add_field(
            settings.vector_copy_field, DataType.VARCHAR, max_length=copy_length, nullable=True
        )
    schema.add_field(settings.metadata_field, DataType.JSON)
    if settings.category_field:
        schema.add_field(settings.category_field, DataType.VARCHAR, max_length=MAX_CATEGORY)
    if settings.source_field:
        schema.add_field(settings.source_field, DataType.VARCHAR, max_length=MAX_KEY)
    index = client.prepare_index_params()
    # nested too: Milvus Lite reads only a nested params JSON (hnsw_m was dropped silently)
    index.add_index(settings.vector_field, **add_index_arguments(dense_index_params(settings)))
    if analyzer:
        add_bm25_field(
            schema,
            source=bm25_input,
            sparse=settings.sparse_field,
            # The lexical form is recorded in the name (Milvus Lite keeps no descriptions).
            name=f"{bm25_input}_bm25" + (f"_{form.marker}" if form is not None else ""),
        )
        bm25 = bm25_parameters(settings, analyzer)
        index.add_index(settings.sparse_field, **sparse_index_params(bm25))
    create_indexed_collection(client, settings.collection, schema, index, properties)
    indexed = [settings.vector_field] + ([settings.sparse_field] if analyzer else [])
    record_indexes(  # what Milvus built, so a repair builds the same (store.index_record)
        client,
        settings.collection,
        {f: described_spec(client.describe_index(settings.collection, f) or {}) for f in indexed},
    )


def ensure_chunk_collection(
    client: MilvusClient,
    settings: LookupSettings,
    dimension: int,
    analyzer: str | None,
    *,
    embedder: EmbedderIdentity | None = None,
) -> CollectionLayout:
    """Open the chunk collection, creating it (with BM25 where the server supports it).

    ``embedder``: the embedder about to write into it, recorded with a new collection and
    checked against an existing one's record (:mod:`.embedder_record`).
    """
    properties = embedder_properties(embedder) if embedder is not None else None
    if not client.has_collection(settings.collection):
        clear_unfinished_lite_collection(settings, settings.collection)

        def create(bm25: bool) -> None:
            lexical = analyzer if bm25 else None
            _create_chunk_collection(client, settings, dimension, lexical, properties)

        if analyzer is None:
            create(False)
        else:
            dense_only = create_with_bm25_or_dense(client, settings.collection, create)
            if dense_only:
                logger.warning(
                    "%s: creating a dense-only collection (hybrid searches dense)", dense_only
                )
    return describe_chunk_collection(client, settings, dimension, embedder=embedder)


def create_with_bm25_or_dense(
    client: MilvusClient, name: str, create: Callable[[bool], None]
) -> str | None:
    """Create collection ``name`` by ``create(True)`` (with its BM25 field), or dense only by
    ``create(False)`` where Milvus has no BM25: a server that says so by its version
    (:func:`server_lacks_bm25`: Milvus < 2.5), or one that refuses the BM25 field (a full disk
    is no such refusal: raised). None, or why the collection has no BM25.

    Example:
        >>> create_with_bm25_or_dense(client, "kb", create)  # doctest: +SKIP
        'Milvus server v2.3.5 has no BM25 function (needs 2.5 or later)'
    """
    lacks = server_lacks_bm25(client)
    if lacks:
        create(False)
        return lacks
    try:
        create(True)
        return None
    except Exception as exc:
        if is_disk_full(exc):
            raise
        if client.has_collection(name):
            client.drop_collection(name)
        create(False)
        return f"this Milvus cannot build a BM25 field ({describe_exception(exc, limit=200)})"


def ensure_catalog_collection(client: MilvusClient, settings: LookupSettings) -> str:
    """Open (or create) the L0 catalog collection; it lives in Milvus so remote servers work."""
    name = settings.resolved_catalog_collection
    if client.has_collection(name):
        ensure_loaded(client, name)
        return name
    clear_unfinished_lite_collection(settings, name)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("source", DataType.VARCHAR, max_length=1024, is_primary=True)
    schema.add_field("title", DataType.VARCHAR, max_length=2048)
    schema.add_field("category", DataType.VARCHAR, max_length=512)
    schema.add_field("content_hash", DataType.VARCHAR, max_length=64)
    schema.add_field("chunk_count", DataType.INT64)
    schema.add_field("info", DataType.JSON)
    schema.add_field(CATALOG_VECTOR_FIELD, DataType.FLOAT_VECTOR, dim=2)
    index = client.prepare_index_params()
    index.add_index(CATALOG_VECTOR_FIELD, index_type="FLAT", metric_type="L2")
    create_indexed_collection(client, name, schema, index)
    return name
