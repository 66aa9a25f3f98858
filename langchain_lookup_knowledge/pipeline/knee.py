"""The relevance knee: which evidence blocks are relevant enough to show the model.

A lookup returns up to ``top_k`` blocks whatever their relevance. A block whose score falls far
below the first block's is left out of the message rather than padded in (the artifact keeps
it, in ``evidenceBlocks`` and ``contextPack.leftOut``). "Far below" is a ratio to the first
block's score, ``LookupSettings.relevance_knee``: a block is shown when its score is at least
that share of the first's. The cut is at the first block below it, so the shown blocks are
always a prefix of the ranking. The default is the highest ratio at which no dev question set
of the knowledge bases loses a relevant document the first five blocks hold
(``python benchmarks/message_size.py --fit-knee`` prints the losses per ratio and knowledge base).

Example:
    >>> knee_count([0.9, 0.85, 0.5, 0.48], ratio=0.6)
    2
    >>> knee_count([0.9, 0.85], ratio=0.0), knee_count([], ratio=0.6)
    (2, 0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_lookup_knowledge.core.models import ContextPack, EvidenceBlock
from langchain_lookup_knowledge.core.term_match import query_terms
from langchain_lookup_knowledge.pipeline.context_pack import PackMeasure, pack_context
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "agent_first_block_room",
    "agent_measure",
    "agent_spare_room",
    "knee_count",
    "knee_score",
    "pack_agent_context",
]


def knee_score(scores: Sequence[float], ratio: float) -> float | None:
    """The score below which blocks are left out (None: no cut: no scores, a ratio of 0, or a
    first score that is not a positive number)."""
    if not scores or ratio <= 0:
        return None
    first = scores[0]
    if not math.isfinite(first) or first <= 0:
        return None
    return first * ratio


def knee_count(scores: Sequence[float], ratio: float) -> int:
    """How many of the first blocks to show: up to the first whose score is below the knee
    (the first block is always shown)."""
    cut = knee_score(scores, ratio)
    if cut is None:
        return len(scores)
    for index, score in enumerate(scores):
        if index > 0 and not score >= cut:  # a NaN score is below any knee
            return index
    return len(scores)


def agent_measure(blocks: Sequence[EvidenceBlock], settings: LookupSettings) -> PackMeasure:
    """The context budget measured for the blocks above the relevance knee: done once per
    lookup, then carried to the grown blocks (:meth:`PackMeasure.updated`) by the steps that
    read their room from it and by :func:`pack_agent_context`."""
    scores = [b.score for b in blocks]
    return PackMeasure.of(
        blocks,
        settings.context_budget_chars,
        shown=knee_count(scores, settings.relevance_knee),
    )


def pack_agent_context(
    blocks: Sequence[EvidenceBlock],
    settings: LookupSettings,
    query: str = "",
    measure: PackMeasure | None = None,
) -> ContextPack:
    """The blocks above the relevance knee packed within the context budget (the others
    recorded as left out); a block that must be cut shows the lines that hold the most of the
    ``query``'s terms. ``measure``: the lookup's :func:`agent_measure` (None: measured here)."""
    scores = [b.score for b in blocks]
    return pack_context(
        blocks,
        settings.context_budget_chars,
        shown=knee_count(scores, settings.relevance_knee),
        knee=knee_score(scores, settings.relevance_knee),
        focus_terms=query_terms(query),
        measure=measure,
    )


def agent_first_block_room(
    blocks: Sequence[EvidenceBlock],
    settings: LookupSettings,
    measure: PackMeasure | None = None,
) -> int:
    """The most document text (quoted, as shown) :func:`pack_agent_context` can give the first
    block: the budget less the shown blocks' headers and the later blocks' content floors.
    ``measure``: the lookup's :func:`agent_measure` (None: measured here)."""
    measured = agent_measure(blocks, settings) if measure is None else measure.updated(blocks)
    return measured.first_block_room()


def agent_spare_room(
    blocks: Sequence[EvidenceBlock],
    settings: LookupSettings,
    measure: PackMeasure | None = None,
) -> int:
    """The document text (quoted, as shown) the blocks above the relevance knee can grow by
    while :func:`pack_agent_context` still shows each of them whole (0: it cuts one already).
    ``measure``: the lookup's :func:`agent_measure` (None: measured here)."""
    measured = agent_measure(blocks, settings) if measure is None else measure.updated(blocks)
    return measured.spare_room()
