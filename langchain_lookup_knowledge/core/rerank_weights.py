"""The rerank's weights: the base score's mix and the size of each explained boost."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache

__all__ = ["RerankWeights"]


@dataclass(frozen=True)
class RerankWeights:
    """The base score's mix and the boost sizes added to it (all in [0, 1]).

    The base of a dense candidate is its normalized similarity; of a BM25 (sparse) candidate,
    its ``rank_score`` (BM25 rank scaled to [0, 1]). A fused (hybrid) candidate's base is
    ``similarity_share * similarity + (1 - similarity_share) * rank_score``: the dense cosine
    alone would throw away what BM25 found (exact terms, alert names), the fused rank alone
    the cosine's finer grading.

    Attributes:
        similarity_share: Weight of the dense similarity in the base of a fused candidate.
        bm25_share: Weight of the candidate's BM25 score (over the best among the candidates,
            ``ScoreLabel.lexical_score``) in the base of a fused candidate, taken from the
            fused rank's share: the base is then the convex combination
            ``similarity_share * similarity + bm25_share * lexical_score + (1 -
            similarity_share - bm25_share) * rank_score`` (Bruch et al. 2022, "An analysis of
            fusion functions for hybrid retrieval"). Above 0, a hybrid search also asks the
            store for the BM25 score of each candidate (one more BM25 search, restricted to
            them). 0 (the default): the fused rank alone carries the BM25 side. Off: at 0.2
            (with ``similarity_share`` 0.7) pooled dev MRR@5 +0.018 and SciFact train nDCG@10
            +0.013, but the six test splits +0.000 (159 questions, the holdout unchanged), and
            the extra search costs the lookup about a third of its time.
        l0_title: The candidate's document matched L0 by title.
        l0_keyword: ... by a keyword (frontmatter ``keywords``/``tags``).
        l0_alias: ... by an alias (e.g. an alert name).
        l0_entity: ... by an entity (a product or component name).
        domain_match: The candidate's category is one of the L0 domains (reason ``l0_domain``).
        query_term_coverage: Maximum; scaled by the share of the query's significant terms found
            in the candidate's title, breadcrumb and content.
        title_term_overlap: Maximum; scaled by the share of the query's terms found in the
            title or breadcrumb.
        first_chunk: The candidate is its document's first chunk (``evidence_key`` ends ``#0``).
        term_idf: How much the term boosts weigh each query term by its rarity among the
            candidates (0: every term counts alike; 1: by its pool IDF alone).
        term_stems: Above 0, the term boosts also match a question word to a part of a
            CamelCase identifier with the same Snowball stem (``crashing`` in
            ``KubePodCrashLooping``); 0 (the default): whole words only. Off: one question
            gained on dev, two lost on the test splits.
        tie_break_margin: Above 0, two neighbouring documents among the first five whose
            bases lie within this of each other and whose titles share two or more words
            (``KubeHpaMaxedOut``, ``KubeHpaReplicasMismatch``) are ordered by the question
            terms only one of their titles, aliases, keywords or entities names, weighed by
            their rarity among the candidates (reason ``sibling_tie_break``). 0 (the default):
            no tie-break. Off: on 236 dev questions (runbooks-en, runbooks-zh, APISIX en) at
            0.01 / 0.015 / 0.02 it moved +0/-2, +1/-3, +2/-4 questions (a sibling's own words
            are as often the question's symptom words as its subject).

    Each L0 kind counts once per candidate however many of its terms matched.

    Example:
        >>> RerankWeights(l0_title=0.1).l0_title
        0.1
    """

    similarity_share: float = 0.5
    bm25_share: float = 0.0
    l0_title: float = 0.08
    l0_keyword: float = 0.06
    l0_alias: float = 0.06
    l0_entity: float = 0.04
    domain_match: float = 0.03
    query_term_coverage: float = 0.08
    title_term_overlap: float = 0.05
    first_chunk: float = 0.01
    term_idf: float = 0.0
    term_stems: float = 0.0
    tie_break_margin: float = 0.0

    @classmethod
    def from_overrides(cls, overrides: Mapping[str, float]) -> RerankWeights:
        """The defaults with ``overrides`` by field name (``LookupSettings.rerank_weights``).

        Raises:
            ValueError: an unknown name, or a value out of range.

        Example:
            >>> RerankWeights.from_overrides({"first_chunk": 0}).first_chunk
            0
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            msg = f"unknown rerank weight {unknown[0]!r}: use one of {', '.join(sorted(known))}"
            raise ValueError(msg)
        return cls(**dict(overrides))

    @classmethod
    def of(cls, overrides: Mapping[str, float]) -> RerankWeights:
        """:meth:`from_overrides`, made once per distinct ``overrides`` (a lookup reads the
        settings' weights twice; they are frozen, so one instance serves every lookup).

        Example:
            >>> RerankWeights.of({"first_chunk": 0}) is RerankWeights.of({"first_chunk": 0})
            True
        """
        if cls is not RerankWeights:
            return cls.from_overrides(overrides)
        try:
            return _weights_of(tuple(sorted(overrides.items())))
        except TypeError:  # a value that cannot be a cache key: made (and checked) anew
            return cls.from_overrides(overrides)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                msg = f"RerankWeights.{f.name} must be a finite number >= 0, got {value!r}"
                raise ValueError(msg)
        if self.term_idf > 1:
            msg = f"RerankWeights.term_idf must be within 0..1, got {self.term_idf}"
            raise ValueError(msg)
        if self.similarity_share > 1:
            msg = f"RerankWeights.similarity_share must be within 0..1, got {self.similarity_share}"
            raise ValueError(msg)
        if self.similarity_share + self.bm25_share > 1:
            msg = (
                "RerankWeights.similarity_share + bm25_share must be at most 1 (the fused "
                f"rank takes the rest), got {self.similarity_share} + {self.bm25_share}"
            )
            raise ValueError(msg)


@lru_cache(maxsize=32)
def _weights_of(overrides: tuple[tuple[str, float], ...]) -> RerankWeights:
    return RerankWeights.from_overrides(dict(overrides))
