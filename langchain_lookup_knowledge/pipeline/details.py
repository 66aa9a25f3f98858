"""``retrieval_details``: the compact, persisted record of one lookup (spec's snake_case keys)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_lookup_knowledge.core.models import Candidate, LookupResult
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.plan import QueryPlan

SUMMARY_CONTENT_CHARS = 160
NEAREST_SOURCES = 3


def nearest_sources(
    candidates: Sequence[Candidate], limit: int = NEAREST_SOURCES
) -> list[dict[str, Any]]:
    """The documents a lookup came nearest to (best similarity first): what a question the
    knowledge base could not answer was closest to (read by the records report)."""
    best: dict[str, float] = {}
    for candidate in candidates:
        similarity = candidate.score_label.similarity
        if similarity > best.get(candidate.source, -1.0):
            best[candidate.source] = similarity
    ranked = sorted(best.items(), key=lambda item: -item[1])[:limit]
    return [{"source": source, "similarity": round(sim, 4)} for source, sim in ranked]


def build_retrieval_details(
    result: LookupResult,
    plan: QueryPlan | None,
    selection: EvidenceSelection | None,
    nearest: list[dict[str, Any]],
) -> dict[str, Any]:
    """What ``tool_invocation.retrieval_details`` holds; evidence content is cut to a preview."""
    hints = result.l0_hints
    trace = result.retrieval_trace.to_json_dict()
    return {
        "query_transform": {
            "query": result.query,
            "notes": list(plan.notes) if plan else [],
            "category_filter": plan.category_filter if plan else None,
            "caller_filter": plan.caller_filter if plan else None,
            "retrieval_mode": plan.retrieval_mode if plan else None,
            "l0_hints": hints.to_json_dict(),
        },
        "retrieval_trace": trace,
        "fallback_reason": result.retrieval_trace.fallback_reason,
        "selected_attempt": result.retrieval_trace.selected_attempt,
        "context_pack_summary": {
            "included_sources": result.context_pack.included_sources,
            "omitted_sources": result.context_pack.omitted_sources,
            "budget": result.context_pack.budget,
            "used": result.context_pack.used,
            "truncated": result.context_pack.truncated,
        },
        "rerank_trace": [entry.to_json_dict() for entry in result.rerank_trace],
        "evidence_blocks": [
            {
                "evidence_key": block.evidence_key,
                "source": block.source,
                "title": block.title,
                "retrieval_layer": block.retrieval_layer,
                "score": round(block.score, 4),
                "similarity": block.score_label.similarity if block.score_label else None,
                "hit_reasons": [f"{r.kind}: {r.detail}" for r in block.hit_reasons],
                "content_preview": block.content[:SUMMARY_CONTENT_CHARS],
            }
            for block in result.evidence_blocks
        ],
        "l0_matched_titles": hints.matched_titles,
        "l0_matched_keywords": hints.matched_keywords,
        "l0_domains": hints.domains,
        "l0_entities": hints.entities,
        "retrieval_layer": result.retrieval_layer,
        "candidate_count": selection.candidate_count if selection else 0,
        "final_count": len(result.evidence_blocks),
        "found": result.found,
        "evidence_status": result.evidence_status,
        "relevance_level": result.relevance_level,
        "relevance_score": result.relevance_score,
        "nearest_sources": nearest,
    }
