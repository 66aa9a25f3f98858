"""The score of one candidate: its L1 base and each boost, with why.

Example:
    >>> from langchain_lookup_knowledge.core.models import ScoreLabel
    >>> dense = ScoreLabel(path="sdk", metric="COSINE", raw=0.6, similarity=0.6, formula="",
    ...                    kind="dense")
    >>> l1_base(dense, 0.5)
    (0.6, '')
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from langchain_lookup_knowledge.core.models import Candidate, HitReason, ScoreLabel
from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.core.text import fold
from langchain_lookup_knowledge.pipeline.l0 import L0Match

__all__ = ["ScoredCandidate", "boosted_domains", "l1_base", "score_one"]


_FIRST_CHUNK = re.compile(r"#0$")


_L0_KINDS = (
    ("title", "l0_title"),
    ("keyword", "l0_keyword"),
    ("alias", "l0_alias"),
    ("entity", "l0_entity"),
)


_MAX_TERMS_IN_DETAIL = 4


@dataclass(frozen=True)
class ScoredCandidate:
    """A candidate with its base (L1 similarity), final score and the reasons between them.

    ``reasons[0]`` is always the ``l1_similarity`` reason (contribution = ``base``); the others
    are boosts, and ``final == base + sum(r.contribution for r in reasons[1:])``, computed here
    so that it cannot be anything else.
    """

    candidate: Candidate
    base: float
    final: float = field(init=False)
    reasons: list[HitReason] = field(default_factory=list)
    terms_found: int = 0  # the question's significant terms in the candidate, whatever the boost
    superseded: bool = False  # of an attempt the router judged unreliable: ranks after the others

    def __post_init__(self) -> None:
        final = self.base + sum(r.contribution for r in self.reasons[1:])
        object.__setattr__(self, "final", final)  # frozen: set once, here

    @property
    def evidence_key(self) -> str:
        """The chunk identity of the candidate."""
        return self.candidate.evidence_key

    def sort_key(self) -> tuple[bool, float, float, str, str, str, int]:
        """Superseded last, then final desc, base desc, evidence_key, attempt, path, rank."""
        c = self.candidate
        return (
            self.superseded,
            -self.final,
            -self.base,
            c.evidence_key,
            c.attempt,
            c.score_label.path,
            c.rank,
        )


def l1_base(
    label: ScoreLabel,
    similarity_share: float,
    *,
    rank_comparable: bool = True,
    bm25_share: float = 0.0,
) -> tuple[float, str]:
    """The rerank base of an L1 hit and how it was mixed ("" for a dense hit: its similarity).

    ``rank_comparable=False``: the hit's rank is within another ranked list than the one of
    record (a filtered attempt superseded by its unfiltered retry, where rank 1 among one
    category says little), so only its similarity counts.

    ``bm25_share`` > 0 and a fused hit with a ``lexical_score``: that share of the base is its
    BM25 score (over the best among the candidates), taken from the fused rank's share.

    Example:
        >>> label = ScoreLabel(path="sdk", metric="RRF", raw=0.03, similarity=0.6, formula="",
        ...                    kind="hybrid", rank_score=1.0)
        >>> l1_base(label, 0.5)
        (0.8, 'base=0.5*similarity(0.6000)+0.5*rank_score(1.0000)')
        >>> l1_base(label.model_copy(update={"lexical_score": 0.5}), 0.75, bm25_share=0.25)
        (0.575, 'base=0.75*similarity(0.6000)+0.25*bm25(0.5000)')
    """
    similarity = label.similarity if math.isfinite(label.similarity) else 0.0
    if label.rank_score is None:
        return similarity, ""
    if not rank_comparable:
        return similarity, f"base=similarity({similarity:.4f}) (rank of a superseded attempt)"
    rank = label.rank_score if math.isfinite(label.rank_score) else 0.0
    if label.kind == "sparse":  # BM25 asked for (or a CJK question the embedder cannot read)
        return rank, f"base=rank_score({rank:.4f})"
    lexical = label.lexical_score
    if not bm25_share or lexical is None or label.kind != "hybrid":
        base = similarity_share * similarity + (1.0 - similarity_share) * rank
        how = (
            f"base={similarity_share:g}*similarity({similarity:.4f})"
            f"+{1.0 - similarity_share:g}*rank_score({rank:.4f})"
        )
        return base, how
    lexical = lexical if math.isfinite(lexical) else 0.0
    rank_share = max(0.0, 1.0 - similarity_share - bm25_share)
    base = similarity_share * similarity + bm25_share * lexical + rank_share * rank
    how = (
        f"base={similarity_share:g}*similarity({similarity:.4f})+{bm25_share:g}*bm25({lexical:.4f})"
    )
    if rank_share > 1e-9:
        how += f"+{rank_share:g}*rank_score({rank:.4f})"
    return base, how


def _share_of(
    found: Sequence[str],
    terms: Sequence[str],
    idf_mix: float = 0.0,
    idf: Mapping[str, float] | None = None,
) -> float:
    """The share of ``terms`` in ``found``; with ``idf_mix`` > 0 partly weighted by ``idf``."""
    if not terms:
        return 0.0
    plain = len(found) / len(terms)
    if not idf_mix or not idf:
        return plain
    total = sum(idf.get(t, 0.0) for t in terms)
    weighted = sum(idf.get(t, 0.0) for t in found) / total if total > 0 else plain
    return (1.0 - idf_mix) * plain + idf_mix * weighted


def _terms_detail(terms: Sequence[str]) -> str:
    shown = ", ".join(terms[:_MAX_TERMS_IN_DETAIL])
    return shown + (", …" if len(terms) > _MAX_TERMS_IN_DETAIL else "")


def boosted_domains(l0: L0Match | None, domain_boost: bool = True) -> frozenset[str]:
    """The L0 domains, folded, whose categories get the domain boost (none without
    ``domain_boost``): read once per rerank, not once per candidate."""
    if l0 is None or not domain_boost:
        return frozenset()
    return frozenset(fold(d) for d in l0.hints.domains if d.strip())


def score_one(
    candidate: Candidate,
    terms: Sequence[str],
    l0: L0Match | None,
    weights: RerankWeights,
    rank_comparable: bool = True,
    *,
    superseded: bool = False,
    domains: frozenset[str] = frozenset(),
    matches: tuple[list[str], list[str]],
    idf: Mapping[str, float] | None = None,
) -> ScoredCandidate:
    """The candidate's base and boosts; ``domains``: the folded L0 domains whose category
    boost it may get (:func:`boosted_domains`)."""
    label = candidate.score_label
    base, how = l1_base(
        label,
        weights.similarity_share,
        rank_comparable=rank_comparable,
        bm25_share=weights.bm25_share,
    )
    detail = f"{label.path} {label.metric} raw={label.raw:.4f}" + (f" {how}" if how else "")
    if candidate.attempt:
        detail += f" attempt={candidate.attempt}"
    reasons = [HitReason(kind="l1_similarity", detail=detail, contribution=base, path=label.path)]
    # a boost's detail text is made only when it contributes (most candidates get few boosts)
    if l0 is not None:
        matched = l0.kinds_for(candidate.source)
        if matched:
            for l0_kind, reason_kind in _L0_KINDS:
                if l0_kind in matched:
                    weight = getattr(weights, reason_kind)
                    if weight > 0:
                        text = f"{l0_kind}: {_terms_detail(matched[l0_kind])}"
                        reasons.append(
                            HitReason(kind=reason_kind, detail=text, contribution=weight)
                        )
        if (
            domains
            and weights.domain_match > 0
            and candidate.category.strip()
            and fold(candidate.category) in domains
        ):
            text = f"category {candidate.category} is an L0 domain"
            reasons.append(
                HitReason(kind="l0_domain", detail=text, contribution=weights.domain_match)
            )

    in_title, covered = matches
    mix = weights.term_idf
    coverage = weights.query_term_coverage * _share_of(covered, terms, mix, idf)
    if coverage > 0:
        text = f"{len(covered)}/{len(terms)} query terms: {_terms_detail(covered)}"
        reasons.append(HitReason(kind="query_term_coverage", detail=text, contribution=coverage))
    overlap = weights.title_term_overlap * _share_of(in_title, terms, mix, idf)
    if overlap > 0:
        text = f"{len(in_title)}/{len(terms)} in title/breadcrumb: {_terms_detail(in_title)}"
        reasons.append(HitReason(kind="title_term_overlap", detail=text, contribution=overlap))
    if weights.first_chunk > 0 and _FIRST_CHUNK.search(candidate.evidence_key):
        text = "first chunk of its document"
        reasons.append(HitReason(kind="first_chunk", detail=text, contribution=weights.first_chunk))

    return ScoredCandidate(
        candidate=candidate,
        base=base,
        reasons=reasons,
        terms_found=len(covered),
        superseded=superseded,
    )
