"""The decision of one lookup: is there evidence, and how far can the agent trust the first block?

A lookup always finds *something* (the nearest chunks of any question); the decision says
whether it is evidence. It reads the signals the lookup already has (:mod:`.signals`) and the
blocks' sorted scores, against the knowledge base's profile measured at ingest, and scores them
with the shipped judgement model (:mod:`.decide`): ``relevanceScore``, and ``found`` and
``relevanceLevel`` from it by the model's thresholds. ``completenessHint`` follows from the level
(:mod:`.completeness`).

A knowledge base without a profile (a collection ingested before profiles, a vocabulary that
could not be read, or a scoped lookup, which never reads what the whole knowledge base holds) is
read against the typical profile shipped with the model; without a KB vocabulary the vocabulary
signals are 0. The trace's note says which.

Example:
    >>> from langchain_lookup_knowledge.settings import LookupSettings
    >>> decide_evidence([], "disk full", LookupSettings()).found
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from langchain_lookup_knowledge.core.models import EvidenceBlock, RelevanceLevel
from langchain_lookup_knowledge.core.vocabulary import KbVocabulary, vocabulary_signals
from langchain_lookup_knowledge.judgement.decide import Judgement, judge_blocks
from langchain_lookup_knowledge.judgement.features import KbProfile
from langchain_lookup_knowledge.judgement.model import JudgeModel
from langchain_lookup_knowledge.judgement.signals import (
    EvidenceSignals,
    common_words,
    lookup_signals,
    seen_rules,
    similarity_readable,
)

if TYPE_CHECKING:
    from langchain_lookup_knowledge.settings import LookupSettings

__all__ = ["EvidenceDecision", "KbReading", "decide_evidence", "decision_trace"]


class KbReading(Protocol):
    """What the decision reads of the knowledge base (the store's vocabulary read): its
    vocabulary and profile, each ``None`` when there is none, and why there is no profile."""

    @property
    def vocabulary(self) -> KbVocabulary | None: ...

    @property
    def profile(self) -> KbProfile | None: ...

    @property
    def profile_note(self) -> str: ...


@dataclass(frozen=True)
class EvidenceDecision:
    """What the decision concluded, and from what (for the trace).

    ``score`` is ``relevanceScore`` (``None``: no labelled block, nothing judged);
    ``confidence`` is the same score; ``signals`` are those the judgement read.
    """

    found: bool
    level: RelevanceLevel
    confidence: float | None
    signals: EvidenceSignals | None
    note: str = ""
    score: float | None = None
    judgement: dict[str, object] | None = None  # what the judgement read, for the trace


def decide_evidence(
    blocks: Sequence[EvidenceBlock],
    query: str,
    settings: LookupSettings,
    vocabulary: KbReading | None = None,
) -> EvidenceDecision:
    """``found``, ``relevanceLevel`` and ``relevanceScore`` of the blocks (best first) of
    ``query``: the judgement model of ``settings.judge_model_file`` (None: the shipped one)
    reading them against the knowledge base's profile (from ``vocabulary``, the knowledge base
    as read; the typical profile without one), ``found`` and the level by its thresholds.

    Example:
        >>> from langchain_lookup_knowledge.settings import LookupSettings
        >>> decide_evidence([], "disk full", LookupSettings()).level
        'low'
    """
    kb = vocabulary.vocabulary if vocabulary is not None else None
    readable = similarity_readable(settings, query)
    # read once: the signals weigh it
    seen_by_kb = (
        vocabulary_signals(
            query, kb, common_words(), **seen_rules(settings.evidence_vocabulary_rules)
        )
        if kb is not None
        else None
    )
    signals = lookup_signals(blocks, query, readable=readable, unseen=seen_by_kb)
    if signals is None:
        return EvidenceDecision(found=False, level="low", confidence=None, signals=None)
    profile = vocabulary.profile if vocabulary is not None else None
    judged = judge_blocks(
        blocks, signals, profile, settings.judge_model_file, settings.embedding_provider
    )
    level: RelevanceLevel = judged.level  # type: ignore[assignment]
    note = "judgement: " + judged.note(JudgeModel.configured(settings.judge_model_file))
    if profile is None:
        why = vocabulary.profile_note if vocabulary is not None else "none read"
        note += f"; typical profile ({why or 'no KB profile'})"
    if kb is None:
        note += "; no KB vocabulary read"
    return EvidenceDecision(
        found=judged.found,
        level=level if judged.found else "low",
        confidence=judged.score,
        signals=signals,
        note=note,
        score=judged.score,
        judgement=decision_trace(judged),
    )


def decision_trace(judged: Judgement) -> dict[str, object]:
    """What the judgement read, as the trace's ``judgement`` shows it."""
    return {
        "relevanceScore": judged.score,
        "group": judged.group,
        "profile": judged.profile,
        "read": judged.features,
    }
