"""What an opened chunk collection has: its fields, limits, index and search parameters.

Example:
    >>> MAX_KEY
    1024
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pymilvus import DataType

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.core.search_depth import hybrid_list_depth
from langchain_lookup_knowledge.errors import SchemaMismatchError
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "CATALOG_VECTOR_FIELD",
    "CONSISTENCY_LEVEL",
    "DENSE_VECTOR_TYPES",
    "MAX_CATEGORY",
    "MAX_JSON_BYTES",
    "MAX_KEY",
    "MAX_TEXT",
    "CollectionLayout",
    "analyzer_of",
    "bm25_input_of",
    "dense_index_params",
    "dense_search_params",
    "lexical_form_of",
]


CATALOG_VECTOR_FIELD = "_placeholder_vector"  # Milvus requires a vector field in every collection


MAX_TEXT = 65535
"""VARCHAR limit of the chunk text field (Milvus's largest)."""


MAX_KEY = 1024
"""VARCHAR limit of the primary key and the source field."""


MAX_CATEGORY = 512


MAX_JSON_BYTES = 65536
"""Milvus servers' default limit on one JSON value (Milvus Lite does not enforce it)."""


DENSE_VECTOR_TYPES = {DataType.FLOAT_VECTOR, DataType.FLOAT16_VECTOR, DataType.BFLOAT16_VECTOR}


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
    vector_copy_field: str | None = None  # each dense vector as base64 of its float32 bytes

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
    def returned_vector_field(self) -> str:
        """The field a search returns for each hit's dense vector: the vector's copy when the
        collection has one (one string a hit), else the vector field (a float at a time in
        Milvus Lite)."""
        return self.vector_copy_field or self.vector_field

    @property
    def fields_with_vector(self) -> list[str]:
        """:attr:`scalar_fields` and the dense vector (for the cosine of BM25 / fused hits)."""
        return [*self.scalar_fields, self.returned_vector_field]

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


def lexical_form_of(collection: str, function_name: str) -> LexicalForm | None:
    """The lexical form recorded in a BM25 function's name (None: its input is plain text)."""
    try:
        return LexicalForm.parse(function_name)
    except ValueError as exc:
        msg = (
            f"collection {collection!r}: {exc}: ingest the knowledge base into a new "
            "collection (or drop this one and ingest again)"
        )
        raise SchemaMismatchError(msg) from None


def analyzer_of(fields: Mapping[str, Any], bm25_input: str) -> str:
    """The analyzer of the BM25 input field ``bm25_input`` (its described field params)."""
    params = str(fields.get(bm25_input, {}).get("params", {}).get("analyzer_params", ""))
    return "jieba" if "jieba" in params else "standard"


def bm25_input_of(info: dict[str, Any], sparse_field: str) -> tuple[str | None, str]:
    """The input field and the name of the BM25 function writing ``sparse_field`` (None, "":
    no such function)."""
    for function in info.get("functions", []) or []:
        outputs = function.get("output_field_names") or []
        kind = str(function.get("type", ""))
        if sparse_field in outputs and ("BM25" in kind.upper() or kind == "1"):
            inputs = function.get("input_field_names") or []
            return (str(inputs[0]) if inputs else None), str(function.get("name", ""))
    return None, ""
