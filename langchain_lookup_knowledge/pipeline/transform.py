"""The query preparation, written once: the question cleaned, L0 hints in the call's scope,
the query vector and the search plan (:func:`prepare_query`, which the graph, ``compare`` and
``bench`` call, so they all search the same thing).

In the graph (:func:`transform_query`) each failure on the way is recorded as data: a catalog
that cannot be read costs the L0 hints (a note); a query that cannot be embedded or a collection
that cannot be opened is a failed step (an attempt with ``status="error"``), so the lookup still
reaches assembly and its record. Elsewhere a failure raises.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.core.filters import FilterValue
from langchain_lookup_knowledge.core.models import RetrievalAttempt
from langchain_lookup_knowledge.errors import ConfigurationError, StoreUnavailableError
from langchain_lookup_knowledge.pipeline.attempts import failed_step, ms_since
from langchain_lookup_knowledge.pipeline.l0 import L0Match
from langchain_lookup_knowledge.pipeline.plan import QueryPlan, caller_filter_expr, plan_query
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.pipeline.state import pack_vector
from langchain_lookup_knowledge.query_text import clean_query_text
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = ["PreparedQuery", "prepare_query", "transform_query"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedQuery:
    """A question ready for L1: its plan and vector, and what failed on the way.

    Attributes:
        plan: What L1 searches, how and first (the cleaned text is ``plan.search_text``).
        vector: The query vector; ``None`` when L1 is off or a step failed.
        failed_steps: The steps that failed (kept only with ``keep_failures``).
        timings_ms: ``embed_query`` and ``transform_query`` in milliseconds.
        started_at: When preparation started (a ``perf_counter()`` value).
    """

    plan: QueryPlan
    vector: list[float] | None
    failed_steps: list[RetrievalAttempt] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    started_at: float = 0.0

    def first_request(self) -> SearchRequest:
        """The L1 search request of the plan's first attempt (``compare``, ``bench``)."""
        if self.vector is None:
            raise ConfigurationError("l1_enabled is false: there is no L1 search to run")
        first = self.plan.first_attempt
        return self.plan.request(first.expr if first else None, self.vector)


def prepare_query(
    runtime: LookupRuntime,
    query: Any,
    filters: dict[str, FilterValue] | None = None,
    *,
    l0: L0Match | None = None,
    embeddings: Embeddings | None = None,
    keep_failures: bool = False,
    top_k: int | None = None,
) -> PreparedQuery:
    """Clean ``query``, match it in L0 (in the call's scope), embed it and plan its search.

    Args:
        runtime: The lookup's runtime (settings, catalog, embedder, collection).
        query: The question as given (cleaned here: control characters, lone surrogates,
            the length limit; an empty one raises ``InvalidQueryError``).
        filters: The call's own authoritative filter.
        l0: The question's L0 match when the caller made it already (``bench``, untimed).
        embeddings: Embed with these instead of the runtime's cached embedder.
        keep_failures: Record a failing step (the graph) instead of raising it.
        top_k: How many evidence blocks the call returns (default: ``settings.top_k``).

    Example:
        >>> from langchain_lookup_knowledge import LookupRuntime, LookupSettings
        >>> runtime = LookupRuntime(LookupSettings(l1_enabled=False))
        >>> prepare_query(runtime, "etcd\\x00 is slow", l0=L0Match()).plan.search_text
        'etcd  is slow'
    """
    settings = runtime.settings
    start = time.perf_counter()
    text, notes = clean_query_text(query, settings.max_query_chars)
    steps: list[RetrievalAttempt] = []
    timings: dict[str, float] = {}
    store_down = False
    if l0 is None:
        l0 = L0Match()
        try:
            l0 = runtime.matcher(caller_filter_expr(settings, filters)).match(text)
        except StoreUnavailableError as exc:  # Milvus is down: the L1 attempts report it
            if not keep_failures:
                raise
            notes.append(f"L0 catalog unavailable: {describe_exception(exc)}")
            store_down = True
        except Exception as exc:  # a catalog that cannot be read costs the hints, no more
            if not keep_failures:
                raise
            logger.warning("L0 catalog unreadable: %s", describe_exception(exc))
            notes.append(f"L0 catalog unreadable: {describe_exception(exc)}")
    vector: list[float] | None = None
    layout: CollectionLayout | None = None
    if settings.l1_enabled:
        embed_start = time.perf_counter()
        try:
            vector = (embeddings or runtime.embeddings).embed_query(text)
        except Exception as exc:  # no vector, no L1: a failed step, recorded
            if not keep_failures:
                raise
            steps.append(failed_step("embed_query", "embedding", exc, embed_start))
        timings["embed_query"] = ms_since(embed_start)
        if vector is not None and not store_down:
            open_start = time.perf_counter()
            try:
                layout = runtime.layout
            except Exception as exc:  # missing collection, schema mismatch: recorded
                if not keep_failures:
                    raise
                steps.append(failed_step("open_collection", "milvus", exc, open_start))
                vector = None
    plan = plan_query(
        text,
        runtime.settings,  # read again: opening the collection resolved embedding_provider=auto
        vector=vector,
        layout=layout,
        l0=l0,
        filters=filters,
        notes=notes,
        top_k=top_k,
    )
    timings["transform_query"] = ms_since(start)
    return PreparedQuery(plan, vector, steps, timings, start)


def transform_query(
    runtime: LookupRuntime,
    query: str | None,
    filters: dict[str, FilterValue] | None,
    top_k: int | None = None,
) -> dict[str, Any]:
    """The state update of ``transform_query``: plan, packed vector, failed steps, timings."""
    prepared = prepare_query(runtime, query, filters, keep_failures=True, top_k=top_k)
    return {
        "plan": prepared.plan,
        "query_vector": pack_vector(prepared.vector) if prepared.vector is not None else None,
        "attempts": prepared.failed_steps,
        "timings_ms": prepared.timings_ms,
        "started_at": prepared.started_at,
    }
