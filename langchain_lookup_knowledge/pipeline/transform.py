"""The query transformation: the question cleaned, L0 hints in the call's scope, the query
vector and the search plan, each failure on the way recorded as data.

A catalog that cannot be read costs the L0 hints (a note); a query that cannot be embedded or a
collection that cannot be opened is a failed step (an attempt with ``status="error"``), so the
lookup still reaches assembly and its record.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langchain_lookup_knowledge.core.filters import FilterValue
from langchain_lookup_knowledge.core.models import RetrievalAttempt
from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.pipeline.attempts import describe, failed_step, ms_since
from langchain_lookup_knowledge.pipeline.l0 import L0Match
from langchain_lookup_knowledge.pipeline.plan import caller_filter_expr, plan_query
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.pipeline.state import pack_vector
from langchain_lookup_knowledge.query_text import clean_query_text
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = ["transform_query"]

logger = logging.getLogger(__name__)


def transform_query(
    runtime: LookupRuntime, query: str | None, filters: dict[str, FilterValue] | None
) -> dict[str, Any]:
    """The state update of ``transform_query``: plan, packed vector, failed steps, timings."""
    settings = runtime.settings
    start = time.perf_counter()
    text, notes = clean_query_text(query, settings.max_query_chars)
    steps: list[RetrievalAttempt] = []
    timings: dict[str, float] = {}
    match, store_down = L0Match(), False
    try:
        match = runtime.matcher(caller_filter_expr(settings, filters)).match(text)
    except StoreUnavailableError as exc:  # Milvus is down: the L1 attempts report it
        notes.append(f"L0 catalog unavailable: {describe(exc)}")
        store_down = True
    except Exception as exc:  # a catalog that cannot be read costs the hints, no more
        logger.warning("L0 catalog unreadable: %s", describe(exc))
        notes.append(f"L0 catalog unreadable: {describe(exc)}")
    vector: list[float] | None = None
    layout: CollectionLayout | None = None
    if settings.l1_enabled:
        embed_start = time.perf_counter()
        try:
            vector = runtime.embeddings.embed_query(text)
        except Exception as exc:  # no vector, no L1: a failed step, recorded
            steps.append(failed_step("embed_query", "embedding", exc, embed_start))
        timings["embed_query"] = ms_since(embed_start)
        if vector is not None and not store_down:
            open_start = time.perf_counter()
            try:
                layout = runtime.layout
            except Exception as exc:  # missing collection, schema mismatch: recorded
                steps.append(failed_step("open_collection", "milvus", exc, open_start))
                vector = None
    plan = plan_query(
        text,
        settings,
        vector=vector,
        layout=layout,
        l0=match,
        filters=filters,
        notes=notes,
    )
    timings["transform_query"] = ms_since(start)
    return {
        "plan": plan,
        "query_vector": pack_vector(vector) if vector is not None else None,
        "attempts": steps,
        "timings_ms": timings,
        "started_at": start,
    }
