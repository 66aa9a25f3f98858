"""Typed LangGraph state of the lookup pipeline: a narrow input, the output, the working state.

``typing_extensions.TypedDict`` (not ``typing.TypedDict``): pydantic, and so LangGraph's
``get_input_jsonschema()`` / ``get_output_jsonschema()`` (what ``langgraph dev`` and Studio
show), need it on Python < 3.12.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from typing_extensions import TypedDict

from langchain_lookup_knowledge.core.filters import FilterValue
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

PathName = Literal["vectorstore", "sdk"]


def pack_vector(vector: Sequence[float]) -> bytes:
    """The query vector as float32 bytes: what Milvus stores anyway, a quarter of the JSON.

    Example:
        >>> unpack_vector(pack_vector([0.5, -1.0]))
        [0.5, -1.0]
    """
    return array("f", vector).tobytes()


def unpack_vector(packed: bytes) -> list[float]:
    """The query vector back from :func:`pack_vector`."""
    return array("f", packed).tolist()


RetrievalDetails = dict[str, Any]
"""The JSON document persisted as ``tool_invocation.retrieval_details`` (snake_case keys)."""
ContractJson = dict[str, Any]
"""A contract model as camelCase JSON (``model.to_json_dict()``; ``Model.model_validate`` back)."""


class LookupInput(TypedDict):
    """What a caller passes: the question, and optionally an authoritative filter and how many
    evidence blocks to return (``top_k``; default: the settings' ``top_k``)."""

    query: str
    filters: NotRequired[dict[str, FilterValue] | None]
    top_k: NotRequired[int | None]


class LookupOutput(TypedDict):
    """What the graph returns to a caller (and to a parent graph): plain JSON only.

    ``result`` is the camelCase result contract, the same JSON as the tool's artifact and the
    CLI's ``--json`` (``LookupResult.model_validate(out["result"])`` gives the typed model);
    ``error`` is ``None`` or ``{"kind": "configuration" | "transient", "message": ...}``
    (``RetrievalError.model_validate``). Plain JSON keeps a checkpointed parent's state small
    and loadable under strict msgpack.
    """

    result: ContractJson
    retrieval_details: RetrievalDetails
    error: ContractJson | None


class LookupState(TypedDict, total=False):
    """The full working state passed between nodes."""

    query: str
    filters: dict[str, FilterValue] | None
    top_k: int | None
    plan: QueryPlan
    query_vector: bytes | None  # float32, read by the retrieval nodes only (see pack_vector)
    nearest_sources: list[dict[str, Any]]
    attempts: Annotated[list[RetrievalAttempt], operator.add]
    candidates: Annotated[list[Candidate], operator.add]
    path_used: PathName | None
    fallback_reason: FallbackReason | None
    selection: EvidenceSelection
    context_pack: ContextPack
    timings_ms: Annotated[dict[str, float], operator.or_]
    started_at: float  # perf_counter() at transform_query: whole-lookup latency
    sidecar: SidecarReport | None
    lookup_result: LookupResult
    retrieval_error: RetrievalError | None
    retrieval_details: RetrievalDetails
    result: ContractJson
    error: ContractJson | None


# What each node and router reads (its input schema): a node's traced input is these keys only.
class StartRouteInput(TypedDict, total=False):
    """What the first router reads (whether the plan has a first attempt)."""

    plan: QueryPlan


class RouteInput(TypedDict, total=False):
    """What the routers after an attempt read."""

    attempts: list[RetrievalAttempt]


class RetrieveInput(TypedDict, total=False):
    """What the retrieval nodes read."""

    plan: QueryPlan
    query_vector: bytes | None
    attempts: list[RetrievalAttempt]
    path_used: PathName | None


class PostprocessInput(TypedDict, total=False):
    """What the rerank and evidence node reads."""

    plan: QueryPlan
    attempts: list[RetrievalAttempt]
    candidates: list[Candidate]


class PackInput(TypedDict, total=False):
    """What the context packer reads (the plan: its cleaned question)."""

    query: str
    plan: QueryPlan
    selection: EvidenceSelection


class AssembleInput(TypedDict, total=False):
    """What result assembly reads."""

    query: str
    plan: QueryPlan
    attempts: list[RetrievalAttempt]
    selection: EvidenceSelection
    context_pack: ContextPack
    fallback_reason: FallbackReason | None
    path_used: PathName | None
    timings_ms: dict[str, float]
    sidecar: SidecarReport | None
    nearest_sources: list[dict[str, Any]]


class RecordInput(TypedDict, total=False):
    """What the recording node reads."""

    lookup_result: LookupResult
    retrieval_details: RetrievalDetails
    retrieval_error: RetrievalError | None
    started_at: float
    filters: dict[str, FilterValue] | None  # the call's own: part of the recorded scope
