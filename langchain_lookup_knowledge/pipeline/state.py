"""Typed LangGraph state of the lookup pipeline: a narrow input, the output, the working state.

``typing_extensions.TypedDict`` (not ``typing.TypedDict``): pydantic, and so LangGraph's
``get_input_jsonschema()`` / ``get_output_jsonschema()`` (what ``langgraph dev`` and Studio
show), need it on Python < 3.12.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired

from typing_extensions import TypedDict

from langchain_lookup_knowledge.core.models import (
    Candidate,
    ContextPack,
    FallbackReason,
    LookupResult,
    RetrievalAttempt,
    RetrievalError,
    SidecarReport,
)
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.plan import QueryPlan
from langchain_lookup_knowledge.store.filters import FilterValue

PathName = Literal["vectorstore", "sdk"]
RetrievalDetails = dict[str, Any]
"""The JSON document persisted as ``tool_invocation.retrieval_details`` (snake_case keys)."""


class LookupInput(TypedDict):
    """What a caller passes: the question, and optionally an authoritative filter."""

    query: str
    filters: NotRequired[dict[str, FilterValue] | None]


class LookupOutput(TypedDict):
    """What the graph returns to a caller (and to a parent graph)."""

    result: LookupResult
    retrieval_details: RetrievalDetails
    error: RetrievalError | None


class LookupState(TypedDict, total=False):
    """The full working state passed between nodes."""

    query: str
    filters: dict[str, FilterValue] | None
    plan: QueryPlan
    attempts: Annotated[list[RetrievalAttempt], operator.add]
    candidates: Annotated[list[Candidate], operator.add]
    path_used: PathName | None
    fallback_reason: FallbackReason | None
    selection: EvidenceSelection
    context_pack: ContextPack
    timings_ms: Annotated[dict[str, float], operator.or_]
    started_at: float  # perf_counter() at transform_query: whole-lookup latency
    sidecar: SidecarReport | None
    result: LookupResult
    retrieval_details: RetrievalDetails
    error: RetrievalError | None
