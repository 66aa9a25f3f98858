"""The result of a lookup and its retrieval error, each decided once, here.

- :func:`retrieval_error`: every step that should have searched failed (``None`` otherwise).
  It is carried in the graph's output (``error``) and in the result (``LookupResult.error``);
  the tool and the CLI read it, nothing re-derives it from the attempts or the message.
- :func:`attempt_of_record`: the attempt whose ranks count in the rerank and that the trace
  names as ``selectedAttempt``: the last L1 attempt that answered (the retry, when it ran
  and answered).
- :func:`assemble_result`: the evidence-first result contract.

Evidence semantics: the candidates of every answered attempt are fused (a filtered attempt's
hits that the retry also found, or did not, can still be evidence); each block keeps the
reasons of its best candidate only, so its hit reasons add up to its ``score``, and the trace's
``contributingAttempts`` names the attempts whose candidates became blocks.

Example:
    >>> from langchain_lookup_knowledge.core.models import RetrievalAttempt
    >>> failed = [RetrievalAttempt(name="unfiltered", path="sdk", status="error",
    ...                            error="MilvusException: collection not loaded",
    ...                            error_kind="transient")]
    >>> retrieval_error(failed, l1_enabled=True).kind
    'transient'
    >>> attempt_of_record(failed) is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_lookup_knowledge.core.models import (
    ContextPack,
    ErrorKind,
    EvidenceStatus,
    FallbackReason,
    L0Hints,
    LookupResult,
    RetrievalAttempt,
    RetrievalError,
    RetrievalLayer,
    RetrievalTrace,
    SidecarReport,
)
from langchain_lookup_knowledge.judgement.completeness import completeness_hint
from langchain_lookup_knowledge.judgement.decision import decide_evidence
from langchain_lookup_knowledge.pipeline.context_pack import pack_context
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.plan import QueryPlan
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.vocabulary_store import VocabularyRead

__all__ = [
    "NO_EVIDENCE_MESSAGE",
    "UNAVAILABLE_MESSAGE",
    "LookupParts",
    "assemble_result",
    "attempt_of_record",
    "retrieval_error",
]

NO_EVIDENCE_MESSAGE = "No knowledge evidence was found for this question."
UNAVAILABLE_MESSAGE = "Knowledge retrieval unavailable: {error}"
MISCONFIGURED_MESSAGE = "Knowledge retrieval misconfigured: {error}"
DAMAGED_MESSAGE = "Knowledge base damaged: {error}"


def retrieval_error(
    attempts: Sequence[RetrievalAttempt], *, l1_enabled: bool
) -> RetrievalError | None:
    """Why the lookup could not search, when no step answered; ``configuration`` wins.

    A configuration problem (a missing collection, a schema that does not fit the embedder)
    is reported as such even when another path failed transiently: retrying will not help.
    """
    if not l1_enabled or not attempts or any(a.status != "error" for a in attempts):
        return None
    message = "; ".join(f"{a.path}: {a.error}" for a in attempts if a.error) or "every path failed"
    kinds = {a.error_kind for a in attempts}
    kind: ErrorKind = next((k for k in ("damaged", "configuration") if k in kinds), "transient")
    return RetrievalError(kind=kind, message=message)


def attempt_of_record(attempts: Sequence[RetrievalAttempt]) -> str | None:
    """The last L1 attempt that answered (its ranks count), or ``None``."""
    answered = [a for a in attempts if a.status != "error"]
    return answered[-1].name if answered else None


@dataclass(frozen=True)
class LookupParts:
    """What the nodes before assembly produced."""

    query: str
    plan: QueryPlan | None
    attempts: list[RetrievalAttempt] = field(default_factory=list)
    selection: EvidenceSelection | None = None
    context_pack: ContextPack | None = None
    fallback_reason: FallbackReason | None = None
    path_used: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    sidecar: SidecarReport | None = None
    vocabulary: VocabularyRead | None = None  # the KB's vocabulary and profile, for the decision


def _message(found: bool, count: int, error: RetrievalError | None) -> str:
    if error is not None:
        template = {"configuration": MISCONFIGURED_MESSAGE, "damaged": DAMAGED_MESSAGE}.get(
            error.kind, UNAVAILABLE_MESSAGE
        )
        return template.format(error=error.message)
    return f"Found {count} evidence blocks." if found else NO_EVIDENCE_MESSAGE


def trace_query(parts: LookupParts) -> str:
    """The question as searched (cleaned, truncated), else as asked."""
    return parts.plan.search_text if parts.plan is not None else parts.query


def assemble_result(parts: LookupParts, settings: LookupSettings) -> LookupResult:
    """The evidence-first result contract of one lookup (its ``error`` decided here)."""
    selection = parts.selection or EvidenceSelection()
    blocks = selection.blocks
    plan = parts.plan
    hints = plan.l0.hints if plan is not None else L0Hints()
    error = retrieval_error(parts.attempts, l1_enabled=settings.l1_enabled)
    trace = RetrievalTrace(
        attempts=parts.attempts,
        selected_attempt=attempt_of_record(parts.attempts),
        contributing_attempts=selection.contributing_attempts,
        fallback_reason=parts.fallback_reason,
        path_used=parts.path_used,
        retrieval_mode=plan.retrieval_mode if plan is not None else settings.retrieval_mode,
        candidate_count=selection.candidate_count,
        final_count=len(blocks),
        timings_ms=dict(parts.timings_ms),
        notes=list(plan.notes) if plan is not None else [],
        sidecar=parts.sidecar,
    )
    decision = decide_evidence(
        selection.matched_blocks, trace_query(parts), settings, parts.vocabulary
    )
    found, level = decision.found, decision.level
    if decision.note:
        trace.notes.append(decision.note)
    trace.judgement = decision.judgement
    pack = parts.context_pack
    if blocks and not found:  # weak matches are not evidence: none reaches the agent
        blocks, pack = [], pack_context([], 0)
        trace = trace.model_copy(update={"final_count": 0})
    status: EvidenceStatus = "evidence" if found else "no_evidence"
    layer: RetrievalLayer | None = None
    if found:
        layer = "L0+L1" if any(b.retrieval_layer == "L0+L1" for b in blocks) else "L1"
    return LookupResult(
        query=plan.search_text if plan is not None else parts.query,
        found=found,
        evidence_status=status,
        message=_message(found, len(blocks), error),
        evidence_blocks=blocks,
        context_pack=pack if pack is not None else pack_context([], 0),
        retrieval_trace=trace,
        rerank_trace=selection.rerank_trace,
        relevance_level=level if found else "low",
        relevance_score=decision.score,
        completeness_hint=completeness_hint(
            blocks, relevance=level, l0_hints=hints, context_pack=pack
        ),
        l0_hints=hints,
        retrieval_layer=layer,
        error=error,
    )
