"""The indexes a chunk collection was built with, kept in the collection's properties.

Milvus Lite drops every index of a collection when one is dropped, so a process killed while
an ingest rebuilds the BM25 index leaves a collection without any: the next ingest builds them
again (:func:`~langchain_lookup_knowledge.store.schema.repair_missing_indexes`). What to build
cannot be read from the indexes any more, nor taken from today's settings (an ``index_type`` or
``bm25_defaults`` changed since would silently change the collection): it is recorded as the
collection property :data:`INDEXES_PROPERTY` when the collection is created and each time its
BM25 index is rebuilt (before the indexes are dropped, and after), as the ``add_index``
arguments of each indexed field. A collection without the record (made before the package
recorded indexes, and never rebuilt since) is repaired with the configured settings, with a warning.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pymilvus import MilvusClient

logger = logging.getLogger(__name__)

INDEXES_PROPERTY = "lookup_knowledge.indexes"
IndexSpec = dict[str, Any]
"""``add_index`` arguments of one field: ``index_type``, ``metric_type``, ``params``."""

# Keys of a ``describe_index`` answer that are not index parameters (a Milvus server lists the
# parameters flattened beside them; Milvus Lite nests them under "params").
_DESCRIPTION_KEYS = frozenset(
    {
        "field_name",
        "index_name",
        "index_type",
        "metric_type",
        "params",
        "total_rows",
        "indexed_rows",
        "pending_index_rows",
        "state",
    }
)


def described_spec(described: Mapping[str, Any]) -> IndexSpec:
    """The ``add_index`` arguments that build again the index ``described`` (a
    ``describe_index`` answer, Milvus Lite's or a server's, or ``add_index`` arguments).

    Example:
        >>> described_spec({"index_type": "HNSW", "metric_type": "COSINE", "M": "16",
        ...                 "field_name": "vector", "state": "Finished"})
        {'index_type': 'HNSW', 'metric_type': 'COSINE', 'params': {'M': '16'}}
    """
    nested = described.get("params")
    if isinstance(nested, Mapping):  # Milvus Lite's, or add_index arguments (a nested copy)
        params = {k: v for k, v in nested.items() if k != "params"}
    else:
        params = {k: v for k, v in described.items() if k not in _DESCRIPTION_KEYS}
    return {
        "index_type": str(described.get("index_type", "")),
        "metric_type": str(described.get("metric_type", "")),
        "params": params,
    }


def add_index_arguments(spec: IndexSpec) -> IndexSpec:
    """``spec`` as ``add_index`` keyword arguments that every Milvus reads: the parameters
    flattened (a server) and nested (Milvus Lite reads only a nested ``params`` JSON).

    Example:
        >>> add_index_arguments({"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25",
        ...                      "params": {"bm25_b": 0.4}})["params"]
        {'bm25_b': 0.4, 'params': {'bm25_b': 0.4}}
    """
    params = {k: v for k, v in dict(spec.get("params") or {}).items() if k != "params"}
    return {
        "index_type": spec["index_type"],
        "metric_type": spec["metric_type"],
        "params": {**params, "params": dict(params)} if params else {},
    }


def index_properties(specs: Mapping[str, IndexSpec]) -> dict[str, str]:
    """The collection properties that record ``specs`` (field name -> its index)."""
    return {INDEXES_PROPERTY: json.dumps(dict(specs), sort_keys=True)}


def record_indexes(client: MilvusClient, collection: str, specs: Mapping[str, IndexSpec]) -> None:
    """Record ``specs`` (field name -> its index) with ``collection``, in place of any record."""
    client.alter_collection_properties(collection, properties=index_properties(specs))


def recorded_indexes(description: Mapping[str, Any], collection: str) -> dict[str, IndexSpec]:
    """The indexes recorded in ``description`` (``describe_collection``'s answer for
    ``collection``) by field name; {} when it has no (readable) record."""
    text = (description.get("properties") or {}).get(INDEXES_PROPERTY)
    if not text:
        return {}
    try:
        specs = json.loads(str(text))
        if not isinstance(specs, dict) or not all(
            isinstance(s, dict) and "index_type" in s and "metric_type" in s for s in specs.values()
        ):
            raise ValueError(f"not a mapping of field to index: {str(text)[:200]}")
    except ValueError as exc:
        logger.warning("collection %r: its index record is unreadable: %s", collection, exc)
        return {}
    return {str(field): dict(spec) for field, spec in specs.items()}
