"""What a traced lookup records for each node: compact summaries of the state, trace-only.

Each node's run (in LangSmith, or any LangChain tracer) records its input keys and its state
update, but a value that is large and repeated from node to node is recorded as a summary that
still says what the node decided: the candidates as their keys, ranks and score labels (their
text is the retriever run's ``documents``); the evidence selection as its step counts and the
rerank trace (every boost with its contribution); the context pack without its text; the result
as its decision (``found``, status, relevance, hint, the blocks' keys and scores) and its
retrieval trace. The query vector is never recorded. The full values are passed between the
nodes unchanged, and the graph run's own output (and the tool run's) is the complete result.

LangGraph applies :data:`NODE_TRACE_POLICY` (``add_node(trace_policy=...)``) to tracers only:
``stream``/``astream_events`` and checkpoints see the real values.

Example:
    >>> summarize_state({"query_vector": bytes(1536), "path_used": "sdk"})
    {'query_vector': {'float32_values': 384}, 'path_used': 'sdk'}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.types import TracePolicy

from langchain_lookup_knowledge.core.models import (
    Candidate,
    ContextPack,
    EvidenceBlock,
    LookupResult,
)
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection

__all__ = ["NODE_TRACE_POLICY", "summarize_state"]


def _vector(packed: bytes | None) -> dict[str, int] | None:
    return None if packed is None else {"float32_values": len(packed) // 4}


def _candidates(candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    """Each candidate's identity, rank and scores (its text and full score label, formula
    included, are the retriever run's documents)."""
    return [
        {
            "evidence_key": c.evidence_key,
            "source": c.source,
            "attempt": c.attempt,
            "rank": c.rank,
            "similarity": c.score_label.similarity,
            "rank_score": c.score_label.rank_score,
            "content_chars": len(c.content),
        }
        for c in candidates
    ]


def _blocks(blocks: Sequence[EvidenceBlock]) -> list[dict[str, Any]]:
    return [
        {
            "evidence_key": b.evidence_key,
            "source": b.source,
            "score": b.score,
            "similarity": b.score_label.similarity if b.score_label else None,
            "content_chars": len(b.content),
        }
        for b in blocks
    ]


def _selection(selection: EvidenceSelection | None) -> dict[str, Any] | None:
    if selection is None:
        return None
    return {
        **selection.counts(),
        "contributing_attempts": selection.contributing_attempts,
        "rerank_trace": selection.rerank_trace,  # each block: rank, scores, every boost
    }


def _context_pack(pack: ContextPack | None) -> dict[str, Any] | None:
    if pack is None:
        return None
    return pack.model_dump(exclude={"text"}) | {"text_chars": len(pack.text)}  # all but the text


def _result(result: LookupResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "found": result.found,
        "evidence_status": result.evidence_status,
        "relevance_level": result.relevance_level,
        "completeness_hint": result.completeness_hint,
        "message": result.message,
        "error": result.error,
        "retrieval_layer": result.retrieval_layer,
        "evidence_blocks": _blocks(result.evidence_blocks),
        "context_pack": _context_pack(result.context_pack),
        "retrieval_trace": result.retrieval_trace,
    }


def _result_json(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The camelCase result the graph returns (in full, on the graph run): its decision."""
    if not isinstance(result, dict):
        return result
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


def _details(details: dict[str, Any] | None) -> dict[str, Any] | None:
    """``retrieval_details`` (persisted, and in full in the graph's output): its outline."""
    if not isinstance(details, dict):
        return details
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


def summarize_state(values: Any) -> Any:
    """What a tracer records for a node's input or state update (other values: unchanged)."""
    if not isinstance(values, dict):
        return values
    return {
        key: (_SUMMARIES[key](value) if key in _SUMMARIES else value)
        for key, value in values.items()
    }


NODE_TRACE_POLICY = TracePolicy(process_inputs=summarize_state, process_outputs=summarize_state)
"""The trace policy of every node of the lookup graph (see the module docstring)."""
