"""A decision's outcome: found, its relevance level, and how a level is read from a confidence or a
similarity.

Example:
    >>> from langchain_lookup_knowledge import LookupSettings
    >>> levels_by_model(LookupSettings(relevance_decision="similarity"))
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_lookup_knowledge.core.evidence_model import (
    EvidenceSignals,
    confidence,
)
from langchain_lookup_knowledge.pipeline.models import EvidenceBlock, RelevanceLevel

if TYPE_CHECKING:
    from langchain_lookup_knowledge.judgement.decide import Judgement
    from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "EvidenceDecision",
    "decision_trace",
    "levels_by_model",
    "model_level",
    "similarity_level",
]


@dataclass(frozen=True)
class EvidenceDecision:
    """What the decision concluded, and from what (for the trace).

    ``signals`` are those the decision read: the calibrated found model's, or the relevance
    model's under ``relevance_decision=calibrated``; ``None`` when only the top similarity was
    read (:func:`evidence_signals` computes them on demand). ``confidence`` is the found
    model's (``None`` under ``similarity``).
    """

    found: bool
    level: RelevanceLevel
    confidence: float | None
    signals: EvidenceSignals | None
    note: str = ""
    score: float | None = None  # relevanceScore: the judgement's (None: no labelled block)
    judgement: dict[str, object] | None = None  # what the judgement read, for the trace


def levels_by_model(settings: LookupSettings) -> bool:
    """Whether ``relevanceLevel`` comes from ``relevance_model`` (else the top similarity):
    ``relevance_decision``, whose ``auto`` follows ``evidence_decision``.

    Example:
        >>> from langchain_lookup_knowledge.settings import LookupSettings
        >>> levels_by_model(LookupSettings(relevance_decision="calibrated"))
        True
        >>> levels_by_model(LookupSettings(evidence_decision="similarity"))  # auto: its own
        False
    """
    if settings.relevance_decision == "auto":
        return settings.evidence_decision == "calibrated"
    return settings.relevance_decision == "calibrated"


def similarity_level(blocks: Sequence[EvidenceBlock], settings: LookupSettings) -> RelevanceLevel:
    from langchain_lookup_knowledge.pipeline.relevance import relevance_level, top_similarity

    return relevance_level(
        top_similarity(blocks), high=settings.high_relevance, medium=settings.medium_relevance
    )


def model_level(
    signals: EvidenceSignals, settings: LookupSettings, *, shown: bool = True
) -> tuple[RelevanceLevel, str]:
    """The level by ``relevance_model`` and the note's words for it (``-`` for the level when
    not ``shown``: a lookup with no evidence has none)."""
    relevant = confidence(signals, settings.relevance_model)
    level: RelevanceLevel = "low"
    if relevant >= settings.high_confidence:
        level = "high"
    elif relevant >= settings.medium_confidence:
        level = "medium"
    return level, (
        f"relevance {relevant:.3f}: {level if shown else '-'} "
        f"(high_confidence {settings.high_confidence:g}, "
        f"medium_confidence {settings.medium_confidence:g}; {signals.terms} question terms)"
    )


def decision_trace(judged: Judgement) -> dict[str, object]:
    return {
        "relevanceScore": judged.score,
        "group": judged.group,
        "profile": judged.profile,
        "read": judged.features,
    }
