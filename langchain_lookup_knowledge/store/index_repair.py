"""Indexes a collection lacks (a crash between create and index): found, named, rebuilt.

Example:
    >>> missing_index_message("kb", ["vector"]).startswith("collection 'kb'")
    True
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.bm25_index import (
    bm25_of_index,
    bm25_parameters,
    explicit_bm25_parameters,
    sparse_index_params,
)
from langchain_lookup_knowledge.store.index_record import (
    IndexSpec,
    add_index_arguments,
    described_spec,
    record_indexes,
    recorded_indexes,
)
from langchain_lookup_knowledge.store.layout import (
    analyzer_of,
    bm25_input_of,
    dense_index_params,
)

__all__ = ["missing_index_message", "repair_missing_indexes", "unindexed_fields"]

logger = logging.getLogger(__name__)


def unindexed_fields(
    client: MilvusClient, name: str, info: dict[str, Any], settings: LookupSettings
) -> list[str]:
    """The dense vector field and the BM25 field of collection ``name`` (when it has them) that
    have no index: Milvus cannot load or search a collection in that state."""
    fields = {f["name"] for f in info.get("fields", [])}
    wanted = [settings.vector_field]
    if settings.sparse_field in fields and bm25_input_of(info, settings.sparse_field)[0]:
        wanted.append(settings.sparse_field)
    return [f for f in wanted if f in fields and not client.list_indexes(name, field_name=f)]


def missing_index_message(name: str, unindexed: list[str]) -> str:
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
    unindexed = unindexed_fields(client, name, info, settings)
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
        bm25 = bm25_of_index(spec) | explicit_bm25_parameters(settings)
    else:
        bm25 = bm25_parameters(
            settings, analyzer_of(fields, bm25_input_of(info, field_name)[0] or "")
        )
    return sparse_index_params(bm25)
