"""The indexed columns of a ``tool_invocation`` row and its ``tool_invocation_source`` rows.

Both are derived from ``retrieval_details`` alone, so the recorder (new rows) and the upgrade
(rows written before the columns existed) compute them the same way.

Example:
    >>> details = {"relevance_level": "low", "fallback_reason": None,
    ...            "query_transform": {"category_filter": "db"},
    ...            "retrieval_trace": {"attempts": [{"name": "filtered"}]}}
    >>> values = indexed_values(details, error=None, collection="kb", scope=None, query_hash=None)
    >>> values["category_filter"], values["scope"]
    ('db', '')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

RECORD_VERSION = 1
"""``record_version`` of rows whose indexed columns are filled in (NULL: not yet)."""

_EXCEPTION_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Timeout|Unavailable))\b")


def scope_key(default_filter: Mapping[str, Any] | None) -> str:
    """The ``scope`` column: canonical JSON of the authoritative ``default_filter`` ("" if none).

    Example:
        >>> scope_key({"tenant": "b", "env": "prod"})
        '{"env": "prod", "tenant": "b"}'
    """
    if not default_filter:
        return ""
    return json.dumps(dict(default_filter), sort_keys=True, ensure_ascii=False)


def error_kind(error: str | None) -> str | None:
    """A short kind for an error text: its first exception name, else ``"other"``.

    Example:
        >>> error_kind("vectorstore: MilvusException: timed out; sdk: TimeoutError: 10s")
        'MilvusException'
    """
    if not error:
        return None
    match = _EXCEPTION_NAME.search(error)
    return match.group(1)[:64] if match else "other"


def _attempts(details: Mapping[str, Any]) -> list[dict[str, Any]]:
    trace = details.get("retrieval_trace")
    attempts = trace.get("attempts") if isinstance(trace, dict) else None
    return [a for a in attempts or [] if isinstance(a, dict)]


def _score(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def indexed_values(
    details: Mapping[str, Any],
    *,
    error: str | None,
    collection: str | None,
    scope: Mapping[str, Any] | None,
    query_hash: str | None,
) -> dict[str, Any]:
    """The indexed columns of one row (``record_version`` included)."""
    attempts = _attempts(details)
    transform = details.get("query_transform")
    category = transform.get("category_filter") if isinstance(transform, dict) else None
    filtered = any(a.get("name") == "filtered" for a in attempts)
    path_fallback = next((str(a["pathFallback"]) for a in attempts if a.get("pathFallback")), None)
    return {
        "record_version": RECORD_VERSION,
        "collection": collection,
        "scope": scope_key(scope),
        "query_hash": query_hash,
        "relevance_level": details.get("relevance_level"),
        "relevance_score": _score(details.get("relevance_score")),
        "fallback_reason": details.get("fallback_reason"),
        "category_filter": str(category)[:255] if category and filtered else None,
        "path_fallback": path_fallback[:255] if path_fallback else None,
        "error_kind": error_kind(error),
    }


def source_rows(
    invocation_id: int | None, row: Mapping[str, Any], details: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One row per document the lookup cited (evidence blocks, context pack), or, when it found
    no evidence, per document it came nearest to (``nearest_sources``)."""
    if invocation_id is None:
        return []
    cited: dict[str, dict[str, Any]] = {}
    for block in details.get("evidence_blocks") or []:
        source = str(block.get("source") or "")
        if not source:
            continue
        entry = cited.setdefault(source, {"evidence_blocks": 0, "similarity": None})
        entry["evidence_blocks"] += 1
        similarity = block.get("similarity")
        if similarity is not None and (
            entry["similarity"] is None or similarity > entry["similarity"]
        ):
            entry["similarity"] = float(similarity)
    pack = details.get("context_pack_summary")
    in_context = set(pack.get("included_sources") or []) if isinstance(pack, dict) else set()
    for source in in_context:
        cited.setdefault(str(source), {"evidence_blocks": 0, "similarity": None})
    if not cited:
        for near in details.get("nearest_sources") or []:
            source = str(near.get("source") or "")
            if source:
                cited.setdefault(
                    source, {"evidence_blocks": 0, "similarity": near.get("similarity")}
                )
    return [
        {
            "invocation_id": invocation_id,
            "created_at": row["created_at"],
            "collection": row.get("collection"),
            "scope": row.get("scope"),
            "source": source[:1024],
            "evidence_blocks": entry["evidence_blocks"],
            "in_context": source in in_context,
            "similarity": entry["similarity"],
        }
        for source, entry in cited.items()
    ]
