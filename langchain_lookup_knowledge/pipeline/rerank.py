"""Rule-based rerank of L1 candidates: the L1 similarity plus small, explained boosts.

Every boost is a :class:`HitReason` with its contribution, so ``final - base`` is exactly the sum
of the boost contributions and the rerank trace can show why a block ranks where it does.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_lookup_knowledge.core.models import Candidate, HitReason
from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.core.term_match import (
    TEXT_TERMS_CACHE_SIZE,
    pool_idf,
    query_term_matches,
    query_terms,
)
from langchain_lookup_knowledge.core.text import cjk_bigrams
from langchain_lookup_knowledge.pipeline.l0 import L0Match
from langchain_lookup_knowledge.pipeline.rerank_score import (
    ScoredCandidate,
    boosted_domains,
    l1_base,
    score_one,
)
from langchain_lookup_knowledge.pipeline.tie_break import sibling_tie_breaks

__all__ = [
    "TEXT_TERMS_CACHE_SIZE",
    "RerankWeights",
    "ScoredCandidate",
    "l1_base",
    "query_term_matches",
    "query_terms",
    "rerank",
    "score_one",
]


def _matches(
    candidate: Candidate, terms: Sequence[str], bigrams: frozenset[str], stemmed: bool = False
) -> tuple[list[str], list[str]]:
    heading = f"{candidate.title}\n{candidate.breadcrumb}"
    return query_term_matches(terms, bigrams, heading, candidate.content, stemmed=stemmed)


def rerank(
    candidates: Sequence[Candidate],
    query: str,
    l0: L0Match | None,
    *,
    weights: RerankWeights | None = None,
    ranks_of: str | None = None,
    distrust_superseded: bool = False,
) -> list[ScoredCandidate]:
    """Score and sort candidates: base L1 similarity plus rule boosts, each one explained.

    Args:
        candidates: L1 hits (from any attempt or path; duplicates are kept for the evidence
            step to merge).
        query: The query the candidates were retrieved for.
        l0: The L0 match of the query, or ``None`` when L0 did not run.
        weights: Boost sizes; :class:`RerankWeights` defaults when ``None``.
        ranks_of: The attempt whose ranks count (the attempt of record: after a retry, the
            retry). Rank scores compare within one ranked list, so a candidate of another
            attempt is based on its similarity alone. ``None``: every candidate's rank counts.

    Returns:
        Scored candidates, by final score desc, then base desc, then evidence_key.

    Example:
        >>> from langchain_lookup_knowledge.core.models import ScoreLabel
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.5, similarity=0.75,
        ...                    formula="(s+1)/2")
        >>> hit = Candidate(evidence_key="k8s/node.md#0", source="k8s/node.md", title="Node down",
        ...                 content="The node is down.", rank=1, score_label=label)
        >>> [r.kind for r in rerank([hit], "node down", None)[0].reasons]
        ['l1_similarity', 'query_term_coverage', 'title_term_overlap', 'first_chunk']
    """
    weights = weights or RerankWeights()
    terms = query_terms(query)
    bigrams = frozenset(cjk_bigrams(query))
    guard = distrust_superseded and ranks_of is not None
    stemmed = weights.term_stems > 0
    matches = [_matches(c, terms, bigrams, stemmed) for c in candidates]
    idf = pool_idf(terms, [m[1] for m in matches]) if weights.term_idf else None
    domains = boosted_domains(l0, domain_boost=not guard)
    scored = [
        score_one(
            c,
            terms,
            l0,
            weights,
            ranks_of is None or c.attempt == ranks_of,
            superseded=guard and c.attempt != ranks_of,
            domains=domains,
            matches=m,
            idf=idf,
        )
        for c, m in zip(candidates, matches, strict=True)
    ]
    ordered = sorted(scored, key=ScoredCandidate.sort_key)
    if weights.tie_break_margin > 0:
        ordered = _tie_break(ordered, terms, bigrams, weights.tie_break_margin)
    return ordered


def _tie_break(
    ordered: list[ScoredCandidate],
    terms: Sequence[str],
    bigrams: frozenset[str],
    margin: float,
) -> list[ScoredCandidate]:
    """Near-tied sibling documents ordered by their distinct question terms (explained)."""
    ranked = [s for s in ordered if not s.superseded]  # a superseded one ranks last anyway
    lifts = sibling_tie_breaks(
        [s.candidate for s in ranked],
        [s.base for s in ranked],
        [s.final for s in ranked],
        terms,
        bigrams,
        margin=margin,
    )
    if not lifts:
        return ordered
    out = list(ordered)
    position = {id(s): i for i, s in enumerate(out)}
    for lift in lifts:
        s = ranked[lift.index]
        reason = HitReason(
            kind="sibling_tie_break", detail=lift.detail, contribution=lift.contribution
        )
        out[position[id(s)]] = ScoredCandidate(
            candidate=s.candidate,
            base=s.base,
            reasons=[*s.reasons, reason],
            terms_found=s.terms_found,
            superseded=s.superseded,
        )
    return sorted(out, key=ScoredCandidate.sort_key)
