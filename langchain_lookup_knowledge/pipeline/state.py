"""Typed LangGraph state of the lookup pipeline: a narrow input, the full working state."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_lookup_knowledge.core.models import (
    Candidate,
    ContextPack,
    L0Hints,
    LookupResult,
    RetrievalAttempt,
)


class LookupInput(TypedDict):
    """What a caller passes: the question, and optionally an authoritative filter."""

    query: str
    filters: NotRequired[dict[str, Any] | None]


class LookupOutput(TypedDict):
    """What the graph returns to a caller (and to a parent graph)."""

    result: LookupResult
    retrieval_details: dict[str, Any]


class LookupState(TypedDict, total=False):
    """The full working state passed between nodes."""

    query: str
    filters: dict[str, Any] | None
    search_text: str
    query_vector: list[float]
    notes: Annotated[list[str], operator.add]
    l0_hints: L0Hints
    l0_matched: dict[str, list[tuple[str, str]]]
    category_filter: str | None
    caller_expr: str | None
    retrieval_mode: str
    attempts: Annotated[list[RetrievalAttempt], operator.add]
    candidates: Annotated[list[Candidate], operator.add]
    pending_attempt: dict[str, Any] | None
    path_used: str | None
    fallback_reason: str | None
    selection: Any
    context_pack: ContextPack
    timings_ms: Annotated[dict[str, float], operator.or_]
    started_at: float  # perf_counter() at transform_query: whole-lookup latency
    sidecar: Any
    result: LookupResult
    retrieval_details: dict[str, Any]
    error: str | None
