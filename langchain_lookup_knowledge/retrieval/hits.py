"""Turn a Milvus hit (from either path) into the common :class:`Candidate` shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.store.schema import CollectionLayout


def candidate_from_fields(
    fields: Mapping[str, Any], layout: CollectionLayout, label: ScoreLabel, rank: int
) -> Candidate:
    """Build a candidate from a hit's fields (scalar fields win over metadata copies)."""
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
        metadata={k: v for k, v in metadata.items() if k not in {"pk", layout.vector_field}},
        rank=rank,
        score_label=label,
    )
