"""What a traced lookup records for each node: compact summaries of the state, trace-only.

Each node's run (in LangSmith, or any LangChain tracer) records its input keys and its state
update, but a value that is large and repeated from node to node is recorded once, as a summary
on the run of the node that produced it, and as a short reference on the runs of the nodes that
read it. The summaries still say what each node decided: the candidates as their keys in rank
order (their text, scores and score labels are the node's retriever run's ``documents``); the
evidence selection as its step counts and the rerank trace (every boost with its contribution);
the context pack without its text; the result as its decision (``found``, status, relevance,
hint, the blocks' keys and scores) and its retrieval trace (the attempts by name: they are the
assembling node's input). A reference is what the reader needs to follow along (the
plan's search text and filters, the candidates' count per attempt, the selected evidence keys).
The query vector is never recorded. The full values are passed between the nodes unchanged, and
the graph run's own output (and the tool run's) is the complete result.

LangGraph applies :data:`NODE_TRACE_POLICY` (``add_node(trace_policy=...)``) to tracers only:
``stream``/``astream_events`` and checkpoints see the real values.

Example:
    >>> summarize_update({"query_vector": bytes(1536), "path_used": "sdk"})
    {'query_vector': {'float32_values': 384}, 'path_used': 'sdk'}
    >>> summarize_input({"candidates": []})
    {'candidates': {'count': 0, 'by_attempt': {}}}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.types import TracePolicy

from langchain_lookup_knowledge.core.models import (
    Candidate,
    ContextPack,
    EvidenceBlock,
    LookupResult,
    RetrievalTrace,
)
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.plan import QueryPlan

__all__ = ["NODE_TRACE_POLICY", "summarize_input", "summarize_update"]


def _fields(value: Any, names: Sequence[str]) -> dict[str, Any]:
    """The named attributes of ``value``, as a summary records them."""
    return {name: getattr(value, name) for name in names}


def _vector(packed: bytes) -> dict[str, int]:
    return {"float32_values": len(packed) // 4}


def _candidates(candidates: Sequence[Candidate]) -> dict[str, Any]:
    """The candidates a retrieval node found, by key in rank order: their text, scores and score
    label are the documents of the node's own retriever run, which are not recorded twice."""
    return _candidates_reference(candidates) | {
        "evidence_keys": [c.evidence_key for c in candidates]
    }


def _blocks(blocks: Sequence[EvidenceBlock]) -> list[dict[str, Any]]:
    return [
        _fields(b, ("evidence_key", "source", "score"))
        | {
            "similarity": b.score_label.similarity if b.score_label else None,
            "content_chars": len(b.content),
        }
        for b in blocks
    ]


def _selection(selection: EvidenceSelection) -> dict[str, Any]:
    return {
        **selection.counts(),
        "contributing_attempts": selection.contributing_attempts,
        "rerank_trace": selection.rerank_trace,  # each block: rank, scores, every boost
    }


def _context_pack(pack: ContextPack) -> dict[str, Any]:
    return pack.model_dump(exclude={"text"}) | {"text_chars": len(pack.text)}  # all but the text


def _retrieval_trace(trace: RetrievalTrace) -> dict[str, Any]:
    """The retrieval trace the result carries, its attempts by name: the attempts themselves and
    the timings are the assembling node's input."""
    return trace.model_dump(exclude={"attempts", "timings_ms"}) | {
        "attempts": [a.name for a in trace.attempts]
    }


_RESULT_DECISION = (
    "found",
    "evidence_status",
    "relevance_level",
    "completeness_hint",
    "message",
    "error",
    "retrieval_layer",
)


def _result(result: LookupResult) -> dict[str, Any]:
    return _fields(result, _RESULT_DECISION) | {
        "evidence_blocks": _blocks(result.evidence_blocks),
        "context_pack": None if result.context_pack is None else _context_pack(result.context_pack),
        "retrieval_trace": _retrieval_trace(result.retrieval_trace),
    }


def _result_json(result: dict[str, Any]) -> dict[str, Any]:
    """The camelCase result the graph returns (in full, on the graph run): its decision."""
    trace = result.get("retrievalTrace") or {}
    return {
        "found": result.get("found"),
        "evidenceStatus": result.get("evidenceStatus"),
        "relevanceLevel": result.get("relevanceLevel"),
        "evidenceKeys": [b.get("evidenceKey") for b in result.get("evidenceBlocks") or []],
        "recording": trace.get("recording"),
        "timingsMs": trace.get("timingsMs"),
    }


_DETAILS_OUTLINE = (
    "found",
    "evidence_status",
    "relevance_level",
    "selected_attempt",
    "fallback_reason",
    "candidate_count",
    "final_count",
)


def _details(details: dict[str, Any]) -> dict[str, Any]:
    """``retrieval_details`` (persisted, and in full in the graph's output): its outline."""
    return {key: details.get(key) for key in _DETAILS_OUTLINE}


_SUMMARIES: dict[str, Callable[[Any], Any]] = {
    "query_vector": _vector,
    "candidates": _candidates,
    "selection": _selection,
    "context_pack": _context_pack,
    "lookup_result": _result,
    "result": _result_json,
    "retrieval_details": _details,
}


def _plan_reference(plan: QueryPlan) -> dict[str, Any]:
    first = plan.first_attempt
    return _fields(plan, ("search_text", "retrieval_mode", "category_filter", "caller_filter")) | {
        "first_attempt": first.name if first is not None else None
    }


def _candidates_reference(candidates: Sequence[Candidate]) -> dict[str, Any]:
    return {"count": len(candidates), "by_attempt": dict(Counter(c.attempt for c in candidates))}


def _selection_reference(selection: EvidenceSelection) -> dict[str, Any]:
    keys = [b.evidence_key for b in selection.blocks]
    return {"final_count": selection.final_count, "evidence_keys": keys}


def _result_reference(result: LookupResult) -> dict[str, Any]:
    keys = [b.evidence_key for b in result.evidence_blocks]
    return _fields(result, ("found", "relevance_level")) | {"evidence_keys": keys}


_REFERENCES: dict[str, Callable[[Any], Any]] = {
    **_SUMMARIES,
    "plan": _plan_reference,
    "candidates": _candidates_reference,
    "selection": _selection_reference,
    "lookup_result": _result_reference,
}


def _apply(values: Any, table: dict[str, Callable[[Any], Any]]) -> Any:
    """``values`` with each key of ``table`` recorded as its summary; ``None`` stays ``None``."""
    if not isinstance(values, dict):
        return values
    return {
        key: value if value is None or key not in table else table[key](value)
        for key, value in values.items()
    }


def summarize_update(values: Any) -> Any:
    """What a tracer records for a node's state update: large values as their summary."""
    return _apply(values, _SUMMARIES)


def summarize_input(values: Any) -> Any:
    """What a tracer records for a node's input: values another node produced, by reference."""
    return _apply(values, _REFERENCES)


NODE_TRACE_POLICY = TracePolicy(process_inputs=summarize_input, process_outputs=summarize_update)
"""The trace policy of every node of the lookup graph (see the module docstring)."""
