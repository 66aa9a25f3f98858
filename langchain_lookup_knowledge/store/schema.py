"""Create or open the chunk and catalog collections, and check they fit the configuration.

The chunk collection: ``pk`` (evidenceKey), ``text`` (the chunk as shown), ``lexical`` (its
lexical form, :mod:`~langchain_lookup_knowledge.core.lexical`, the BM25 input of an English
collection; a Chinese one, or one built before, analyses ``text`` itself), ``vector``, ``sparse``
(BM25 function output), ``metadata`` (JSON), ``category`` and ``source`` (scalars: filtering on
a JSON path is ~30x slower). Field names are configuration; an existing collection's real schema
and index decide what is used (its lexical form too: it is recorded in the field's description).
"""

from __future__ import annotations

import errno
import logging
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pymilvus import DataType, Function, FunctionType, MilvusClient

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.core.search_depth import hybrid_list_depth
from langchain_lookup_knowledge.embeddings.identity import EmbedderIdentity
from langchain_lookup_knowledge.errors import (
    CollectionNotFoundError,
    MissingIndexError,
    SchemaMismatchError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.redaction import describe_exception, mask_url
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.embedder_record import check_embedder, embedder_properties
from langchain_lookup_knowledge.store.index_record import (
    IndexSpec,
    add_index_arguments,
    described_spec,
    record_indexes,
    recorded_indexes,
)

logger = logging.getLogger(__name__)

CATALOG_VECTOR_FIELD = "_placeholder_vector"  # Milvus requires a vector field in every collection
MAX_TEXT = 65535
"""VARCHAR limit of the chunk text field (Milvus's largest)."""
MAX_KEY = 1024
"""VARCHAR limit of the primary key and the source field."""
MAX_CATEGORY = 512
MAX_JSON_BYTES = 65536
"""Milvus servers' default limit on one JSON value (Milvus Lite does not enforce it)."""
_DENSE_VECTOR_TYPES = {DataType.FLOAT_VECTOR, DataType.FLOAT16_VECTOR, DataType.BFLOAT16_VECTOR}
# Session consistency: a process reads its own writes (a lookup right after an ingest sees the new
# chunks) without paying for "Strong" on every search; Milvus's default "Bounded" may miss them.
CONSISTENCY_LEVEL = "Session"


@dataclass(frozen=True)
class CollectionLayout:
    """What an opened chunk collection really has (None: the field is absent)."""

    name: str
    id_field: str
    content_field: str
    vector_field: str
    dimension: int
    metric_type: str
    index_type: str
    sparse_field: str | None
    metadata_field: str | None
    category_field: str | None
    source_field: str | None
    analyzer: str | None
    row_count: int = 0  # entities when the collection was opened (0: unknown)
    lexical_field: str | None = None  # the BM25 input when it is not content_field
    lexical_form: LexicalForm | None = None  # how lexical_field was made (None: plain text)

    def bm25_text_of(self, text: str) -> str:
        """What the BM25 input field holds for ``text`` (a chunk's or a question's)."""
        return self.lexical_form.apply(text) if self.lexical_form is not None else text

    @property
    def has_bm25(self) -> bool:
        """True when the collection has a BM25 sparse field (hybrid / sparse retrieval)."""
        return self.sparse_field is not None

    @property
    def scalar_fields(self) -> list[str]:
        """Output fields to request with every search."""
        fields = [self.id_field, self.content_field]
        for name in (self.metadata_field, self.category_field, self.source_field):
            if name and name not in fields:
                fields.append(name)
        return fields

    @property
    def fields_with_vector(self) -> list[str]:
        """:attr:`scalar_fields` and the dense vector (for the cosine of BM25 / fused hits)."""
        return [*self.scalar_fields, self.vector_field]

    def category_ref(self) -> str | None:
        """The field a category filter is put on: the scalar field, else ``<metadata>["category"]``.

        None when the collection has neither (no category filter is possible there).
        """
        if self.category_field:
            return self.category_field
        if self.metadata_field:
            return f'{self.metadata_field}["category"]'
        return None

    def source_ref(self) -> str:
        """The field a source filter is put on."""
        if self.source_field:
            return self.source_field
        return f'{self.metadata_field or "metadata"}["source"]'


def dense_index_params(settings: LookupSettings) -> dict[str, Any]:
    """Explicit dense index parameters (never rely on the server's defaults); ``add_index``
    takes them through :func:`.index_record.add_index_arguments`, which Milvus Lite reads."""
    params: dict[str, Any] = {}
    if settings.index_type == "HNSW":
        params = {"M": settings.hnsw_m, "efConstruction": settings.hnsw_ef_construction}
    elif settings.index_type == "IVF_FLAT":
        params = {"nlist": 128}
    return {
        "index_type": settings.index_type,
        "metric_type": settings.metric_type,
        "params": params,
    }


def dense_search_params(
    layout: CollectionLayout, settings: LookupSettings, pool: int | None = None
) -> dict[str, Any]:
    """Explicit dense search parameters for the collection's index, for searches of ``pool``
    candidates (default: the configured rerank pool)."""
    params: dict[str, Any] = {}
    if layout.index_type == "HNSW":
        # ef below a search's limit is an error: the rerank pool, or a hybrid list's depth
        depth = hybrid_list_depth(
            pool or settings.rerank_pool, settings.hybrid_fetch_factor, settings.hybrid_list_depth
        )
        params = {"ef": max(settings.hnsw_ef, depth)}
    elif layout.index_type == "IVF_FLAT":
        params = {"nprobe": 16}
    return {"metric_type": layout.metric_type, "params": params}


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
    schema.add_field(settings.metadata_field, DataType.JSON)
    if settings.category_field:
        schema.add_field(settings.category_field, DataType.VARCHAR, max_length=MAX_CATEGORY)
    if settings.source_field:
        schema.add_field(settings.source_field, DataType.VARCHAR, max_length=MAX_KEY)
    index = client.prepare_index_params()
    # nested too: Milvus Lite reads only a nested params JSON (hnsw_m was dropped silently)
    index.add_index(settings.vector_field, **add_index_arguments(dense_index_params(settings)))
    if analyzer:
        schema.add_field(settings.sparse_field, DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                # The lexical form is recorded in the name (Milvus Lite keeps no descriptions).
                name=f"{bm25_input}_bm25" + (f"_{form.marker}" if form is not None else ""),
                function_type=FunctionType.BM25,
                input_field_names=[bm25_input],
                output_field_names=[settings.sparse_field],
            )
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


PASSAGE_BM25: dict[str, float] = {"bm25_k1": 0.9, "bm25_b": 0.4}
"""``bm25_defaults=auto`` for a collection with the standard analyzer: BEIR's BM25 (Anserini's
passage setting). Chunks are passages whatever the documents were (at most ``chunk_size``
characters: 42-167 words from p10 to p90 in the SciFact, runbooks-en and APISIX en chunks)."""


def bm25_parameters(settings: LookupSettings, analyzer: str | None = None) -> dict[str, float]:
    """The BM25 parameters the settings ask of a sparse index built with ``analyzer`` ({}: the
    engine's defaults, or for an existing index: as built).

    ``bm25_k1`` / ``bm25_b`` when set; each one unset takes :data:`PASSAGE_BM25` for the
    standard analyzer under ``bm25_defaults=auto``, nothing otherwise (jieba, or ``engine``).

    Example:
        >>> bm25_parameters(LookupSettings(), "standard")
        {'bm25_k1': 0.9, 'bm25_b': 0.4}
        >>> bm25_parameters(LookupSettings(bm25_b=0.75), "standard")
        {'bm25_k1': 0.9, 'bm25_b': 0.75}
        >>> bm25_parameters(LookupSettings(), "jieba"), bm25_parameters(LookupSettings(bm25_k1=1.2))
        ({}, {'bm25_k1': 1.2})
        >>> bm25_parameters(LookupSettings(bm25_defaults="engine"), "standard")
        {}
    """
    auto = settings.bm25_defaults == "auto" and analyzer == "standard"
    return (dict(PASSAGE_BM25) if auto else {}) | explicit_bm25_parameters(settings)


def sparse_index_params(bm25: dict[str, float]) -> dict[str, Any]:
    """``add_index`` arguments of the BM25 sparse field, with ``bm25`` parameters ({}: none).

    pymilvus sends ``params`` flattened, each key its own pair, which a Milvus server reads;
    Milvus Lite reads only a nested ``params`` JSON and drops the rest silently, so the BM25
    parameters go both ways (a server merges the nested copy into the same keys).

    Example:
        >>> sparse_index_params({"bm25_b": 0.4})["params"]
        {'inverted_index_algo': 'DAAT_MAXSCORE', 'bm25_b': 0.4, 'params': {'bm25_b': 0.4}}
    """
    params: dict[str, Any] = {"inverted_index_algo": "DAAT_MAXSCORE", **bm25}
    if bm25:
        params["params"] = dict(bm25)
    return {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25", "params": params}


def indexed_bm25_parameters(client: MilvusClient, layout: CollectionLayout) -> dict[str, float]:
    """The BM25 parameters ``layout``'s sparse index was built with ({}: engine defaults)."""
    if layout.sparse_field is None:
        return {}
    return _bm25_of(described_spec(client.describe_index(layout.name, layout.sparse_field) or {}))


def _bm25_of(spec: IndexSpec) -> dict[str, float]:
    """The BM25 parameters of a sparse index's ``spec`` ({}: the engine's defaults)."""
    params = spec.get("params") or {}
    return {name: float(params[name]) for name in ("bm25_k1", "bm25_b") if name in params}


def rebuild_sparse_index(
    client: MilvusClient, layout: CollectionLayout, bm25: dict[str, float]
) -> None:
    """Build ``layout``'s BM25 index again with exactly ``bm25`` ({}: the engine's defaults).

    Milvus reads BM25 parameters when the index is built (a search's parameters do not change
    them); the index is made from the stored term counts, so nothing is embedded or written.
    The collection's indexes are recorded before they are dropped, and again once built
    (:mod:`.index_record`): a process killed in between leaves what a repair needs.
    """
    if layout.sparse_field is None:
        raise SchemaMismatchError(f"collection {layout.name!r} has no BM25 field to index")
    name, sparse = layout.name, layout.sparse_field
    before = {n: client.describe_index(name, n) or {} for n in client.list_indexes(name)}
    specs = {
        str(d["field_name"]): described_spec(d) for d in before.values() if d.get("field_name")
    }
    record_indexes(client, name, specs)
    client.release_collection(name)
    for index_name in client.list_indexes(name, field_name=sparse):
        client.drop_index(name, index_name)
    index = client.prepare_index_params()
    sparse_index = sparse_index_params(bm25)
    index.add_index(sparse, **sparse_index)
    # Milvus Lite resolves a dropped index's name only as "<field>_idx" and otherwise drops
    # every index of the collection: what went with it is built again as it was described.
    left = set(client.list_indexes(name))
    for index_name, described in before.items():
        field = described.get("field_name")
        if index_name not in left and field and field != sparse:
            index.add_index(field, **add_index_arguments(described_spec(described)))
    client.create_index(name, index, sync=False)
    record_indexes(client, name, specs | {sparse: described_spec(sparse_index)})
    client.load_collection(name)


def explicit_bm25_parameters(settings: LookupSettings) -> dict[str, float]:
    """The BM25 parameters the user set (``bm25_k1`` / ``bm25_b`` not None), whatever
    ``bm25_defaults`` is: the only ones that rebuild an existing collection's index.

    Example:
        >>> explicit_bm25_parameters(LookupSettings()), explicit_bm25_parameters(
        ...     LookupSettings(bm25_b=0.4))
        ({}, {'bm25_b': 0.4})
    """
    wanted = {"bm25_k1": settings.bm25_k1, "bm25_b": settings.bm25_b}
    return {name: float(value) for name, value in wanted.items() if value is not None}


def apply_bm25_parameters(
    client: MilvusClient,
    settings: LookupSettings,
    layout: CollectionLayout,
    have: dict[str, float] | None = None,
) -> bool:
    """Rebuild an existing collection's BM25 index when ``bm25_k1`` / ``bm25_b``, set
    explicitly, ask for other values than it has (a parameter left unset keeps the index's);
    True when rebuilt. ``have``: the index's parameters when the caller read them already
    (:func:`indexed_bm25_parameters`); the index is then rebuilt with ``have`` | the explicit.

    ``bm25_defaults`` never rebuilds one: it decides the index of a NEW collection. A rebuild
    releases the collection until its indexes are built again (seconds on Milvus Lite), so
    every lookup of every process fails meanwhile: that is the user's choice, not a default's
    (:func:`bm25_defaults_notice` says when the index differs from what the defaults build).
    """
    wanted = explicit_bm25_parameters(settings)
    if not wanted or layout.sparse_field is None:
        return False
    have = indexed_bm25_parameters(client, layout) if have is None else have
    if all(have.get(name) == value for name, value in wanted.items()):
        return False
    logger.info("rebuilding the BM25 index of %s: %s -> %s", layout.name, have, wanted)
    rebuild_sparse_index(client, layout, have | wanted)
    return True


def _described(bm25: dict[str, float]) -> str:
    return " / ".join(f"{k} {v:g}" for k, v in sorted(bm25.items())) or "the engine's defaults"


def bm25_defaults_notice(
    settings: LookupSettings, layout: CollectionLayout, have: dict[str, float]
) -> str | None:
    """What to tell the user when an existing collection's BM25 index (built with ``have``)
    differs from what the settings build for a new collection of its analyzer (None: it does
    not, or there is no BM25 field): what it has, what they would build, how to apply it.

    Example:
        >>> layout = CollectionLayout("kb", "pk", "text", "vector", 384, "COSINE", "HNSW",
        ...     "sparse", None, None, None, "standard")
        >>> print(bm25_defaults_notice(LookupSettings(), layout, {}))  # doctest: +ELLIPSIS
        collection 'kb' keeps its BM25 index (the engine's defaults): ...BM25_K1=0.9 ...
        >>> bm25_defaults_notice(LookupSettings(bm25_defaults="engine"), layout, {}) is None
        True
    """
    if layout.sparse_field is None:
        return None
    would = bm25_parameters(settings, layout.analyzer)
    if all(have.get(name) == value for name, value in would.items()):
        return None
    assign = " ".join(f"LOOKUP_KNOWLEDGE_{k.upper()}={v:g}" for k, v in sorted(would.items()))
    return (
        f"collection {layout.name!r} keeps its BM25 index ({_described(have)}): "
        f"bm25_defaults={settings.bm25_defaults} builds a new collection of its analyzer "
        f"({layout.analyzer}) with {_described(would)}, and a default never rebuilds an "
        f"existing index. To rebuild it so, run the ingest with {assign} (nothing is "
        "re-embedded; the collection is released until its indexes are built again, seconds "
        "on Milvus Lite: on a server, do it at a quiet time); to keep it and drop this note, "
        "LOOKUP_KNOWLEDGE_BM25_DEFAULTS=engine"
    )


def server_lacks_bm25(client: MilvusClient) -> str | None:
    """Why this Milvus cannot build a BM25 function field (server < 2.5), or None when it can.

    Milvus Lite reports ``milvus_lite-X.Y.Z`` (its engine has BM25); a server ``vX.Y.Z``.
    """
    try:
        version = str(client.get_server_version())
    except Exception:  # unknown: try, and fall back if creation fails
        return None
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match and (int(match.group(1)), int(match.group(2))) < (2, 5):
        return f"Milvus server {version} has no BM25 function (needs 2.5 or later)"
    return None


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
        lacks = server_lacks_bm25(client) if analyzer else None
        if lacks:
            logger.warning("%s: creating a dense-only collection (hybrid searches dense)", lacks)
            analyzer = None
        clear_unfinished_lite_collection(settings, settings.collection)
        try:
            _create_chunk_collection(client, settings, dimension, analyzer, properties)
        except Exception as exc:
            if analyzer is None or is_disk_full(exc):
                raise
            # Milvus < 2.5 has no BM25 function: keep a dense-only collection, say so.
            logger.warning(
                "this Milvus cannot build a BM25 field (%s); creating a dense-only collection",
                describe_exception(exc, limit=200),
            )
            if client.has_collection(settings.collection):
                client.drop_collection(settings.collection)
            _create_chunk_collection(client, settings, dimension, None, properties)
    return describe_chunk_collection(client, settings, dimension, embedder=embedder)


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
    if vector.get("type") not in _DENSE_VECTOR_TYPES:
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
    unindexed = _unindexed_fields(client, name, info, settings)
    if unindexed:
        raise MissingIndexError(_missing_index_message(name, unindexed))
    index = client.describe_index(name, settings.vector_field) or {}
    metric = str(index.get("metric_type") or settings.metric_type).upper()
    if metric != settings.metric_type:
        msg = (
            f"collection {name!r} indexes {settings.vector_field!r} with metric {metric}, "
            f"but metric_type is {settings.metric_type}: set LOOKUP_KNOWLEDGE_METRIC_TYPE={metric}"
        )
        raise SchemaMismatchError(msg)
    sparse = settings.sparse_field if settings.sparse_field in fields else None
    bm25_input, function_name = _bm25_input(info, sparse) if sparse is not None else (None, "")
    if bm25_input is None or bm25_input not in fields:
        sparse = bm25_input = None
    analyzer = None
    lexical_field: str | None = None
    lexical_form: LexicalForm | None = None
    if bm25_input is not None:
        analyzer = _analyzer_of(fields, bm25_input)
        if bm25_input != settings.content_field:
            lexical_field = bm25_input
            lexical_form = _lexical_form_of(name, function_name)
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
    )


def _lexical_form_of(collection: str, function_name: str) -> LexicalForm | None:
    """The lexical form recorded in a BM25 function's name (None: its input is plain text)."""
    try:
        return LexicalForm.parse(function_name)
    except ValueError as exc:
        msg = (
            f"collection {collection!r}: {exc}: ingest the knowledge base into a new "
            "collection (or drop this one and ingest again)"
        )
        raise SchemaMismatchError(msg) from None


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or its cause) is "no space left on device" (also as Milvus's text)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        text = str(seen)
        if "No space left on device" in text or "[Errno 28]" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def clear_unfinished_lite_collection(settings: LookupSettings, name: str) -> None:
    """Remove what a Milvus Lite collection creation killed by a full disk left behind.

    Milvus Lite makes the collection's folder, then writes ``schema.json`` (via
    ``schema.json.tmp``); when that write fails (no space left), the folder stays and every
    later creation fails with "File exists", even after space is freed. A folder without
    ``schema.json`` is no collection (Milvus Lite itself says so): when it holds nothing but
    the unfinished schema it is removed; anything else there is left, with what to do.
    """
    if not settings.is_milvus_lite or settings.milvus_db_name not in (None, "", "default"):
        return
    folder = Path(settings.resolved_milvus_uri).expanduser() / "collections" / name
    if not folder.is_dir() or (folder / "schema.json").exists():
        return
    leftovers = {p.name for p in folder.iterdir()}
    if leftovers <= {"schema.json.tmp"}:
        logger.warning("removing %s: a collection creation that never finished", folder)
        shutil.rmtree(folder)
        return
    msg = (
        f"{folder} is an unfinished Milvus Lite collection (no schema.json; it holds "
        f"{sorted(leftovers)}), left by a creation that failed (a full disk?): move it "
        "away, then run the ingest again"
    )
    raise StoreUnavailableError(msg)


def create_indexed_collection(
    client: MilvusClient,
    name: str,
    schema: Any,
    index: Any,
    properties: dict[str, str] | None = None,
) -> None:
    """Create (with ``properties``), index and load a collection.

    ``create_collection(index_params=...)`` waits for the index through ``AllocTimestamp``,
    which Milvus Lite does not implement (its server logs a traceback per call): index without
    waiting, then load, which waits for the index itself.
    """
    extra: dict[str, Any] = {"properties": properties} if properties else {}
    client.create_collection(name, schema=schema, consistency_level=CONSISTENCY_LEVEL, **extra)
    client.create_index(name, index, sync=False)
    client.load_collection(name)


def ensure_loaded(client: MilvusClient, name: str, timeout: float | None = None) -> None:
    """Load a collection into memory if it is not (a reopened collection starts released);
    ``timeout``: the most the load may take (None: the client's own bound)."""
    state = client.get_load_state(name)
    loaded = str(state.get("state", "")) if isinstance(state, dict) else str(state)
    if "Loaded" not in loaded:
        client.load_collection(name, **({"timeout": timeout} if timeout is not None else {}))


def warm_up(
    client: MilvusClient, layout: CollectionLayout, settings: LookupSettings, vector: list[float]
) -> None:
    """Run one dense and (with BM25) one BM25 search of one hit, each bounded by
    ``settings.milvus_load_timeout_s``.

    Milvus Lite reports a reopened collection loaded at once but prepares its BM25 search on
    the first one (1.1-3.5 s for 3,485 chunks on a loaded 2-core machine, then 0.04 s): done
    here, when a lookup runtime opens the collection, a lookup's search timeout bounds the
    search alone. A failure is logged, never raised: the lookup's own search then decides.
    """
    searches: list[tuple[str, list[Any], dict[str, Any]]] = [
        (layout.vector_field, [vector], dense_search_params(layout, settings))
    ]
    timeout = settings.milvus_load_timeout_s
    if layout.sparse_field is not None:
        searches.append((layout.sparse_field, ["warm up"], {"metric_type": "BM25"}))
    for field, data, params in searches:
        try:
            client.search(
                layout.name,
                data=data,
                anns_field=field,
                search_params=params,
                limit=1,
                output_fields=[layout.id_field],
                timeout=timeout,
            )
        except Exception as exc:
            logger.warning(
                "collection %r: the first search of %r failed within %gs "
                "(milvus_load_timeout_s): %s",
                layout.name,
                field,
                timeout,
                describe_exception(exc, limit=200),
            )


def _unindexed_fields(
    client: MilvusClient, name: str, info: dict[str, Any], settings: LookupSettings
) -> list[str]:
    """The dense vector field and the BM25 field of collection ``name`` (when it has them) that
    have no index: Milvus cannot load or search a collection in that state."""
    fields = {f["name"] for f in info.get("fields", [])}
    wanted = [settings.vector_field]
    if settings.sparse_field in fields and _bm25_input(info, settings.sparse_field)[0]:
        wanted.append(settings.sparse_field)
    return [f for f in wanted if f in fields and not client.list_indexes(name, field_name=f)]


def _missing_index_message(name: str, unindexed: list[str]) -> str:
    what = " and ".join(repr(f) for f in unindexed)
    return (
        f"collection {name!r} has no index on {what}: an index build did not finish (e.g. "
        "a process killed while an ingest rebuilt the BM25 index). Run `lookup-knowledge "
        "ingest PATH` with the same settings to build the missing index again (nothing is "
        "re-embedded); lookups work again once it has run"
    )


def repair_missing_indexes(client: MilvusClient, settings: LookupSettings) -> list[str]:
    """Build the indexes an existing chunk collection lacks; the fields repaired ([]: none).

    Each index is built as the collection recorded it (:mod:`.index_record`): the dense index
    as it was, whatever ``index_type`` / ``metric_type`` say today; the BM25 index with its
    recorded parameters, ``bm25_k1`` / ``bm25_b`` set explicitly on top (what the rebuild that
    was cut short was building; ``bm25_defaults`` never changes an existing collection's). A
    field without a record (a collection made without index records, never rebuilt since) is built
    as a new collection's (:func:`dense_index_params`, :func:`bm25_parameters`), with a
    warning. The stored vectors and term counts are indexed as they are: nothing is embedded or
    written. The collection cannot be searched while an index is missing, so releasing it
    costs nothing.
    """
    name = settings.collection
    if not client.has_collection(name):
        return []
    info = client.describe_collection(name)
    unindexed = _unindexed_fields(client, name, info, settings)
    if not unindexed:
        return []
    logger.warning("collection %r has no index on %s: building it again", name, unindexed)
    fields = {f["name"]: f for f in info.get("fields", [])}
    recorded = recorded_indexes(info, name)
    index = client.prepare_index_params()
    built: dict[str, IndexSpec] = {}
    for field_name in unindexed:
        arguments = _repair_arguments(info, fields, settings, field_name, recorded.get(field_name))
        index.add_index(field_name, **arguments)
        built[field_name] = described_spec(arguments)
    client.release_collection(name)
    client.create_index(name, index, sync=False)
    record_indexes(client, name, recorded | built)
    client.load_collection(name)
    return unindexed


def _repair_arguments(
    info: dict[str, Any],
    fields: Mapping[str, Any],
    settings: LookupSettings,
    field_name: str,
    spec: IndexSpec | None,
) -> IndexSpec:
    """The ``add_index`` arguments that build ``field_name``'s missing index: as recorded
    (``spec``), else as a new collection's, with a warning."""
    if spec is None:
        logger.warning(
            "collection %r recorded no index for %r (made without index records): building it "
            "as the settings build a new collection's",
            settings.collection,
            field_name,
        )
    if field_name == settings.vector_field:
        return add_index_arguments(spec or dense_index_params(settings))
    if spec is not None:
        bm25 = _bm25_of(spec) | explicit_bm25_parameters(settings)
    else:
        bm25 = bm25_parameters(
            settings, _analyzer_of(fields, _bm25_input(info, field_name)[0] or "")
        )
    return sparse_index_params(bm25)


def _analyzer_of(fields: Mapping[str, Any], bm25_input: str) -> str:
    """The analyzer of the BM25 input field ``bm25_input`` (its described field params)."""
    params = str(fields.get(bm25_input, {}).get("params", {}).get("analyzer_params", ""))
    return "jieba" if "jieba" in params else "standard"


def _bm25_input(info: dict[str, Any], sparse_field: str) -> tuple[str | None, str]:
    """The input field and the name of the BM25 function writing ``sparse_field`` (None, "":
    no such function)."""
    for function in info.get("functions", []) or []:
        outputs = function.get("output_field_names") or []
        kind = str(function.get("type", ""))
        if sparse_field in outputs and ("BM25" in kind.upper() or kind == "1"):
            inputs = function.get("input_field_names") or []
            return (str(inputs[0]) if inputs else None), str(function.get("name", ""))
    return None, ""


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
