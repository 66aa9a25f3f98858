"""Turn a Milvus hit (from either path) into the common :class:`Candidate` shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pymilvus import DataType

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.store.schema import CollectionLayout
from langchain_lookup_knowledge.store.vector_copy import decode_vector_copies


def candidate_from_fields(
    fields: Mapping[str, Any],
    layout: CollectionLayout,
    label: ScoreLabel,
    rank: int,
    attempt: str = "",
) -> Candidate:
    """Build a candidate from a hit's fields (scalar fields win over metadata copies), of the
    attempt named ``attempt``."""
    metadata = dict(fields.get(layout.metadata_field or "", None) or {})
    for name in (layout.category_field, layout.source_field):
        if name and name in fields and name not in metadata:
            metadata[name] = fields[name]
    key = str(fields.get(layout.id_field) or metadata.get("pk") or metadata.get("evidence_key"))
    source = str(
        (fields.get(layout.source_field) if layout.source_field else None)
        or metadata.get("source")
        or key.rsplit("#", 1)[0]
    )
    scalar_category = fields.get(layout.category_field) if layout.category_field else None
    category = scalar_category or metadata.get("category", "")
    content = fields.get(layout.content_field)
    if content is None:
        content = metadata.get(layout.content_field, "")
    offset = metadata.get("body_offset")
    if isinstance(offset, int) and 0 < offset < len(str(content)):
        content = str(content)[offset:]
    return Candidate(
        evidence_key=key,
        source=source,
        title=str(metadata.get("title") or ""),
        breadcrumb=str(metadata.get("breadcrumb") or ""),
        category=str(category or ""),
        content=str(content),
        metadata={
            k: v
            for k, v in metadata.items()
            if k not in {"pk", layout.vector_field, layout.vector_copy_field}
        },
        rank=rank,
        score_label=label,
        attempt=attempt,
    )


def take_dense_vectors(hits: Sequence[Any], field: str) -> np.ndarray | None:
    """The stored vectors of ``field`` of one query's search hits, as a float32 matrix (row i:
    hit i), taken out of the result before pymilvus decodes them.

    pymilvus decodes a vector field hit by hit, each into a list of Python floats, which the
    cosine then turns back into an array; this reads the response's packed floats once. The
    values are the same float32 numbers. ``None`` (the vectors stay in each hit's ``entity``)
    when ``hits`` is not pymilvus's lazily decoded result or the field is not a plain float
    vector of every hit.
    """
    lazy = getattr(hits, "lazy_field_data", None)
    start = getattr(hits, "start", None)
    if (
        not isinstance(lazy, list)
        or not isinstance(start, int)
        or getattr(hits, "has_materialized", True)
    ):
        return None
    for field_data in lazy:
        if field_data.field_name != field:
            continue
        if field_data.type != DataType.FLOAT_VECTOR or len(field_data.valid_data):
            return None
        dim = int(field_data.vectors.dim)
        flat = np.array(field_data.vectors.float_vector.data, dtype=np.float32)
        rows = len(hits)  # a list's length: reading it decodes nothing
        if dim <= 0 or flat.size < (start + rows) * dim:
            return None
        lazy.remove(field_data)  # materializing the hits now leaves this field out
        return flat.reshape(-1, dim)[start : start + rows]
    return None


def take_hit_vectors(hits: Sequence[Any], layout: CollectionLayout) -> np.ndarray | None:
    """The stored dense vectors of one query's search hits as a float32 matrix (row i: hit i),
    taken out of the result: the vector copies (:attr:`CollectionLayout.returned_vector_field`)
    decoded when the collection has them, else the vector field's packed floats
    (:func:`take_dense_vectors`). ``None``: not every hit's vector is there that way; each
    hit's entity keeps what it has (:func:`entity_vector`)."""
    if not layout.vector_copy_field:
        return take_dense_vectors(hits, layout.vector_field)
    entities = [hit["entity"] for hit in hits]
    field = layout.vector_copy_field
    vectors = decode_vector_copies([e.get(field) for e in entities], layout.dimension)
    if vectors is not None:
        for entity in entities:
            del entity[field]  # read: no copy of 2 KB a hit travels on as a field
    return vectors


def entity_vector(entity: dict[str, Any], layout: CollectionLayout) -> Any:
    """One hit's stored dense vector from its fields: its copy decoded (the copy leaves the
    fields), else its vector field; None when it has neither (a row written without a copy).

    Example:
        >>> entity_vector({"pk": "a#0", "vector": [0.6, 0.8]}, layout)  # doctest: +SKIP
        [0.6, 0.8]
    """
    copy = entity.pop(layout.vector_copy_field, None) if layout.vector_copy_field else None
    vectors = decode_vector_copies([copy], layout.dimension) if copy is not None else None
    return vectors[0] if vectors is not None else entity.get(layout.vector_field)


def fetch_dense_vectors(
    client: Any, layout: CollectionLayout, keys: Sequence[str], *, timeout: float
) -> dict[str, Any]:
    """The stored dense vectors of the chunks ``keys``, by key, in one query (one more round
    trip: for hits that came without them)."""
    rows = client.query(
        layout.name,
        filter=condition(layout.id_field, list(keys)),
        output_fields=[layout.id_field, layout.vector_field],
        timeout=timeout,
    )
    return {str(r[layout.id_field]): r[layout.vector_field] for r in rows}
