"""Where the knowledge lives: the Milvus store, its collections, fields, index and BM25 index.

Example:
    >>> StoreSettings().collection
    'knowledge'
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from langchain_lookup_knowledge.settings.types import DEFAULT_DATA_DIR, MetricType, UnitInterval

__all__ = ["FIELD_NAME_SETTINGS", "StoreSettings"]

FIELD_NAME_SETTINGS = (
    "id_field",
    "content_field",
    "vector_field",
    "vector_copy_field",
    "sparse_field",
    "lexical_field",
    "metadata_field",
    "category_field",
    "source_field",
)
"""The settings that name a Milvus field (each must name a different one)."""


class StoreSettings(BaseModel):
    """The Milvus store: where it is, the collections and fields, the dense and BM25 indexes."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    data_dir: Path = Field(
        default=DEFAULT_DATA_DIR,
        description="Folder for the embedded defaults (Milvus Lite database, SQLite records).",
    )
    milvus_uri: str | None = Field(
        default=None,
        description=(
            "Milvus URI: a local path ending in .db (Milvus Lite), or http(s)://host:port for a "
            "Milvus server / Zilliz. Default: <data_dir>/milvus.db (Milvus Lite)."
        ),
    )
    milvus_token: SecretStr | None = Field(
        default=None, description="Milvus token or 'user:password'. Never logged."
    )
    milvus_db_name: str | None = Field(default=None, description="Milvus database name (server).")
    collection: str = Field(default="knowledge", description="Milvus collection of chunks.")
    catalog_collection: str | None = Field(
        default=None,
        description="Milvus collection holding the L0 catalog. Default: <collection>_catalog.",
    )
    id_field: str = Field(default="pk", description="Primary-key field (holds the evidenceKey).")
    content_field: str = Field(default="text", description="Chunk text field.")
    vector_field: str = Field(default="vector", description="Dense vector field.")
    vector_copy_field: str | None = Field(
        default="vector_b64",
        description="A new collection with BM25 also keeps each chunk's dense vector in this "
        "VARCHAR field, as the base64 of its float32 bytes: hybrid and BM25 searches return it "
        "for each hit's cosine instead of the vector field, which Milvus Lite returns float by "
        "float (15 hits of 384 dimensions: 1.3 ms of a 5.8 ms search). The cosine is the same "
        "number. It costs 2 KB a chunk of 384 dimensions. None: new collections get no copy; "
        "a collection without the field returns the vector field.",
    )
    sparse_field: str = Field(default="sparse", description="BM25 sparse vector field.")
    lexical_field: str = Field(
        default="lexical",
        description="BM25 input field of a new collection: the chunk text in its lexical form "
        "(bm25_split_identifiers); the text field keeps the original.",
    )
    metadata_field: str = Field(default="metadata", description="JSON metadata field.")
    category_field: str | None = Field(
        default="category",
        description=(
            "Scalar category field used by the L0 filter. Empty/None: filter on "
            "metadata['category'] instead (slower; for collections without the column)."
        ),
    )
    source_field: str | None = Field(
        default="source", description="Scalar source-path field (None: metadata['source'])."
    )
    metric_type: MetricType = Field(default="COSINE", description="Dense metric.")
    index_type: Literal["FLAT", "HNSW", "AUTOINDEX", "IVF_FLAT"] = Field(
        default="FLAT", description="Dense index; HNSW for large collections."
    )
    hnsw_m: int = Field(default=16, ge=4, le=64, description="HNSW M.")
    hnsw_ef_construction: int = Field(default=200, ge=8, description="HNSW efConstruction.")
    hnsw_ef: int = Field(default=64, ge=8, description="HNSW search ef.")
    bm25_analyzer: Literal["auto", "standard", "jieba"] = Field(
        default="auto",
        description="BM25 analyzer; auto picks jieba when the knowledge base is mostly CJK.",
    )
    bm25_split_identifiers: bool = Field(
        default=True,
        description="A new collection indexes identifiers (KubeNodeReadinessFlapping, "
        "proxy_cache, limit-count) as their whole token plus their words, for BM25. Decided "
        "when the collection is created: an existing one keeps the form it was built with.",
    )
    bm25_k1: float | None = Field(
        default=None,
        gt=0,
        le=10,
        description="BM25 term-frequency saturation of the sparse index. Milvus reads it when "
        "the index is built, not per search: set, an ingest rebuilds the sparse index of an "
        "existing collection whose value differs (no re-embedding; the collection is released, "
        "so no process can look it up, until the rebuild ends: seconds on Milvus Lite, on a "
        "server do it at a quiet time). None: what bm25_defaults gives a new collection (auto: "
        "0.9 in an English one); an existing one keeps its index.",
    )
    bm25_b: UnitInterval | None = Field(
        default=None,
        description="BM25 document-length normalisation of the sparse index (0: none, 1: "
        "full), set like bm25_k1 (set, it rebuilds an existing collection's index). None: what "
        "bm25_defaults gives a new collection (auto: 0.4 in an English one).",
    )
    bm25_defaults: Literal["auto", "engine"] = Field(
        default="auto",
        description="What bm25_k1 / bm25_b left unset mean. auto: a collection with the "
        "standard analyzer (English) is indexed with k1 0.9 / b 0.4, the passage setting of "
        "BEIR's BM25 (chunks are passages; docs/evaluation.md, BEIR SciFact), a jieba one as "
        "engine (0.9 / 0.4 ranks lower on the Chinese dev sets). engine: ask nothing, so a new "
        "collection gets the engine's defaults (Milvus 1.2 / 0.75, Milvus Lite 1.5 / 0.75). "
        "Either way it decides a NEW collection's index only: a default never rebuilds (and "
        "releases) an existing collection; its ingest report says when its index differs "
        "from what auto would build (bm25IndexNotice) and how to apply it (bm25_k1 / bm25_b).",
    )

    @field_validator("collection", "catalog_collection")
    @classmethod
    def _collection_name_is_valid(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from langchain_lookup_knowledge.core.filters import validate_identifier

        return validate_identifier(value, what="collection name")

    @property
    def resolved_milvus_uri(self) -> str:
        """The Milvus URI in force (Milvus Lite file under ``data_dir`` by default)."""
        return self.milvus_uri or str(self.data_dir / "milvus.db")

    @property
    def resolved_catalog_collection(self) -> str:
        """The catalog collection name in force."""
        return self.catalog_collection or f"{self.collection}_catalog"

    @property
    def is_milvus_lite(self) -> bool:
        """True when the URI points at a local Milvus Lite database file."""
        uri = self.resolved_milvus_uri
        return not uri.startswith(("http://", "https://", "tcp://", "unix:", "grpc://"))
