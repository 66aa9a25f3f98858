"""Evidence blocks from reranked candidates: dedup by evidenceKey, similarity floor, caps.

Order of the steps (each one counted in :class:`EvidenceSelection`):

1. Deduplicate by ``evidence_key`` only. Candidates sharing a key (the filtered attempt and the
   unfiltered retry, or the vectorstore and the sdk path) become one block: the best-scoring
   candidate gives the score, score label, content and hit reasons (so the reasons'
   contributions add up to the block's ``score``); the others only count as having found it.
   Equal sources with different keys stay separate blocks. Candidates of several attempts are
   a deliberate fusion: :attr:`EvidenceSelection.contributing_attempts` names the attempts whose
   candidates became blocks.
2. Drop blocks whose normalized similarity (of the best candidate) is below ``min_similarity``,
   and BM25-only blocks (``kind="sparse"``: BM25 alone, e.g. a Chinese question the English-only
   embedder cannot read) that contain none of the question's significant terms: BM25 found them
   through a stopword or particle alone (``的``), and the dense similarity cannot vouch for them.
3. Keep at most ``per_document_cap`` blocks per source, in rank order. The candidates the cap
   leaves out of a document that keeps a block stay in :attr:`EvidenceSelection.also_matched`
   (best first): they are no blocks of their own, but small-to-big (:mod:`.expand`) may show
   them inside their document's block.
4. Keep the first ``top_k``.

Between 2 and 3, a table row's own chunk whose row a better block of its document shows is
dropped (:mod:`.row_blocks`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_lookup_knowledge.core.checks import require_at_least
from langchain_lookup_knowledge.core.models import (
    EvidenceBlock,
    HitReason,
    RerankEntry,
    RetrievalLayer,
)
from langchain_lookup_knowledge.pipeline.rerank import ScoredCandidate
from langchain_lookup_knowledge.pipeline.row_blocks import without_shown_rows

__all__ = ["EvidenceSelection", "build_evidence_blocks"]

L1_REASON = "l1_similarity"
COVERAGE_REASON = "query_term_coverage"


@dataclass(frozen=True)
class EvidenceSelection:
    """The evidence blocks of a lookup and the counts of every step that produced them.

    Attributes:
        blocks: Final evidence blocks, best first.
        candidate_count: Scored candidates received (before dedup).
        deduplicated_count: Distinct evidence keys among them.
        dropped_low_similarity: Distinct keys whose base similarity was under the floor.
        dropped_by_cap: Blocks dropped by the per-document cap.
        final_count: ``len(blocks)``.
        rerank_trace: One entry per returned block (rank, scores, boosts).
        dropped_by_top_k: Blocks beyond ``top_k``.
        dropped_without_query_terms: BM25-only blocks with none of the question's terms.
        dropped_shown_rows: Table rows' own chunks whose row a better block of their document
            shows (:mod:`.row_blocks`).
        contributing_attempts: The attempts whose candidates became blocks, in block order.
        also_matched: Candidates the per-document cap left out of a document that has a block,
            best first, as blocks (score, content, breadcrumb), none of them in ``blocks``.
        matched_first: The first block as retrieval matched it, when small-to-big
            (:mod:`.expand`) grew its content; None otherwise.
        matched_later: Later blocks as retrieval matched them, by index in ``blocks``, when
            their content grew (:mod:`.document_chunks`).
    """

    blocks: list[EvidenceBlock] = field(default_factory=list)
    candidate_count: int = 0
    deduplicated_count: int = 0
    dropped_low_similarity: int = 0
    dropped_by_cap: int = 0
    final_count: int = 0
    rerank_trace: list[RerankEntry] = field(default_factory=list)
    dropped_by_top_k: int = 0
    dropped_without_query_terms: int = 0
    dropped_shown_rows: int = 0
    contributing_attempts: list[str] = field(default_factory=list)
    also_matched: list[EvidenceBlock] = field(default_factory=list)
    matched_first: EvidenceBlock | None = None
    matched_later: dict[int, EvidenceBlock] = field(default_factory=dict)

    @property
    def matched_blocks(self) -> list[EvidenceBlock]:
        """The blocks with the content retrieval matched: what the evidence decision reads
        (what small-to-big grew is for the model to read, not a stronger match)."""
        if (self.matched_first is None and not self.matched_later) or not self.blocks:
            return self.blocks
        first = self.matched_first if self.matched_first is not None else self.blocks[0]
        later = [self.matched_later.get(i, b) for i, b in enumerate(self.blocks[1:], start=1)]
        return [first, *later]

    def counts(self) -> dict[str, int]:
        """The step counts, for ``retrieval_details`` and the retrieval trace."""
        return {
            "candidate_count": self.candidate_count,
            "deduplicated_count": self.deduplicated_count,
            "dropped_low_similarity": self.dropped_low_similarity,
            "dropped_without_query_terms": self.dropped_without_query_terms,
            "dropped_shown_rows": self.dropped_shown_rows,
            "dropped_by_cap": self.dropped_by_cap,
            "dropped_by_top_k": self.dropped_by_top_k,
            "final_count": self.final_count,
        }


def _merge(group: list[ScoredCandidate]) -> tuple[ScoredCandidate, list[HitReason]]:
    """The best candidate of a same-key group and its reasons (which add up to its score)."""
    best = min(group, key=ScoredCandidate.sort_key)
    return best, list(best.reasons)


def _layer(reasons: Sequence[HitReason], l0_participated: bool) -> RetrievalLayer:
    if l0_participated and any(r.kind.startswith("l0_") for r in reasons):
        return "L0+L1"
    return "L1"


def _has_lexical_support(best: ScoredCandidate, reasons: Sequence[HitReason]) -> bool:
    """A BM25-only hit must contain a significant term of the question; others pass (read
    from the rerank's term count, so a zero coverage boost does not empty the result)."""
    if best.candidate.score_label.kind != "sparse":
        return True
    return best.terms_found > 0 or any(
        r.kind == COVERAGE_REASON and r.contribution > 0 for r in reasons
    )


def build_evidence_blocks(
    scored: Sequence[ScoredCandidate],
    *,
    top_k: int,
    per_document_cap: int,
    min_similarity: float,
    l0_participated: bool,
) -> EvidenceSelection:
    """Turn reranked candidates into the final, ranked evidence blocks.

    Args:
        scored: Output of :func:`~langchain_lookup_knowledge.pipeline.rerank.rerank`, possibly
            concatenated over several attempts or paths (any order).
        top_k: Maximum blocks returned.
        per_document_cap: Maximum blocks per source.
        min_similarity: Blocks whose normalized L1 similarity is lower are not evidence.
        l0_participated: L0 hints took part in this lookup. A block's ``retrieval_layer`` is
            ``"L0+L1"`` when this is true and the block got an ``l0_*`` hit reason (its document
            matched L0, or its category is an L0 domain); otherwise ``"L1"``.

    Returns:
        The blocks, their rerank trace and the step counts.

    Raises:
        ValueError: ``top_k`` or ``per_document_cap`` is below 1.

    Example:
        >>> from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
        >>> from langchain_lookup_knowledge.pipeline.rerank import rerank
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.4, similarity=0.7, formula="")
        >>> hit = Candidate(evidence_key="a.md#1", source="a.md", content="x", rank=1,
        ...                 score_label=label)
        >>> twice = rerank([hit, hit.model_copy(update={"attempt": "retry"})], "x", None)
        >>> selection = build_evidence_blocks(twice, top_k=5, per_document_cap=2,
        ...                                   min_similarity=0.3, l0_participated=False)
        >>> selection.candidate_count, selection.final_count, selection.blocks[0].retrieval_layer
        (2, 1, 'L1')
    """
    require_at_least(1, top_k=top_k, per_document_cap=per_document_cap)

    groups: dict[str, list[ScoredCandidate]] = defaultdict(list)
    for item in scored:
        groups[item.candidate.evidence_key].append(item)
    merged = sorted((_merge(group) for group in groups.values()), key=lambda m: m[0].sort_key())

    # The floor is on the dense similarity, whatever the rerank base mixes in (hybrid rank).
    similar = [
        (best, reasons)
        for best, reasons in merged
        if best.candidate.score_label.similarity >= min_similarity
    ]
    supported = [(b, reasons) for b, reasons in similar if _has_lexical_support(b, reasons)]
    usable = without_shown_rows(supported, lambda item: item[0].candidate)
    per_source: dict[str, int] = defaultdict(int)
    capped: list[tuple[ScoredCandidate, list[HitReason]]] = []
    over_cap: list[tuple[ScoredCandidate, list[HitReason]]] = []
    for best, reasons in usable:
        source = best.candidate.source
        if per_source[source] < per_document_cap:
            per_source[source] += 1
            capped.append((best, reasons))
        else:
            over_cap.append((best, reasons))
    kept = capped[:top_k]

    def block_of(best: ScoredCandidate, reasons: list[HitReason]) -> EvidenceBlock:
        c = best.candidate
        return EvidenceBlock(
            evidence_key=c.evidence_key,
            source=c.source,
            title=c.title,
            breadcrumb=c.breadcrumb,
            category=c.category,
            retrieval_layer=_layer(reasons, l0_participated),
            content=c.content,
            score=best.final,
            score_label=c.score_label,
            hit_reasons=reasons,
        )

    blocks: list[EvidenceBlock] = []
    trace: list[RerankEntry] = []
    for rank, (best, reasons) in enumerate(kept, start=1):
        c = best.candidate
        blocks.append(block_of(best, reasons))
        trace.append(
            RerankEntry(
                rank=rank,
                evidence_key=c.evidence_key,
                source=c.source,
                base_score=best.base,
                final_score=best.final,
                boosts=[r for r in reasons if r.kind != L1_REASON],
            )
        )
    shown = {block.source for block in blocks}
    return EvidenceSelection(
        blocks=blocks,
        candidate_count=len(scored),
        deduplicated_count=len(merged),
        dropped_low_similarity=len(merged) - len(similar),
        dropped_without_query_terms=len(similar) - len(supported),
        dropped_shown_rows=len(supported) - len(usable),
        dropped_by_cap=len(usable) - len(capped),
        final_count=len(blocks),
        rerank_trace=trace,
        dropped_by_top_k=len(capped) - len(kept),
        contributing_attempts=list(dict.fromkeys(b.candidate.attempt for b, _ in kept)),
        also_matched=[block_of(b, r) for b, r in over_cap if b.candidate.source in shown],
    )
