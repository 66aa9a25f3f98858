"""The evidence decision: is there evidence, and how far can the agent trust the first block?

A lookup always finds *something* (the nearest chunks of any question); the decision says
whether it is evidence. It reads signals the pipeline already has (:class:`EvidenceSignals`):
the dense similarity of the blocks, how many of the question's terms the first block holds,
whether the two hybrid legs agree on it, whether L0 matched its document, and for a BM25-only
lookup (a Chinese question the English-only embedder cannot read) its BM25 score per question
term. A small logistic model per retrieval family turns them into a confidence in [0, 1] that
the first block answers the question; ``found`` and ``relevanceLevel`` are thresholds on it.

The family is the path the lookup took, so a model never weighs a signal that path lacks:

* ``hybrid``: dense + BM25 fused (similarity, coverage, the legs' agreement);
* ``dense``: dense alone, e.g. a collection without BM25 or a Milvus server before 2.5
  (similarity, coverage: no second leg to agree with);
* ``sparse``: BM25 alone (a CJK question under the English-only embedder): coverage;
* ``lexical``: dense or hybrid on a question the embedder cannot read (a CJK question under
  the English-only embedder, on a collection without a jieba BM25 field): its similarity is
  noise, so coverage alone.

A BM25-only or lexical lookup whose first block holds none of the question's terms is never
evidence (nothing but the ranking vouches for it).

The signals and how they are read: :mod:`.decision_signals`.

A family missing from a model falls back to ``dense`` (a model may hold only that family).

The coefficients and thresholds are fitted on the dev splits by ``benchmarks/fit_decision.py`` and
are the defaults of ``core.evidence_model.DEFAULT_EVIDENCE_MODEL`` and ``LookupSettings``.

Example:
    >>> from langchain_lookup_knowledge.core.evidence_model import (
    ...     DEFAULT_EVIDENCE_MODEL, EvidenceSignals, confidence)
    >>> signals = EvidenceSignals(family="dense", similarity=0.71, coverage=1.0, agreement=1.0)
    >>> confidence(signals, DEFAULT_EVIDENCE_MODEL) > 0.5
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_lookup_knowledge.core.evidence_model import (
    LEXICAL_FAMILIES,
    confidence,
    contributions,
    family_weights,
)
from langchain_lookup_knowledge.core.vocabulary import (
    vocabulary_signals,
)
from langchain_lookup_knowledge.pipeline.decision_levels import (
    EvidenceDecision,
    decision_trace,
    levels_by_model,
    model_level,
    similarity_level,
)
from langchain_lookup_knowledge.pipeline.decision_signals import (
    common_words,
    dense_margin,
    evidence_signals,
    lookup_signals,
    seen_rules,
    similarity_readable,
)
from langchain_lookup_knowledge.pipeline.models import EvidenceBlock, RelevanceLevel

if TYPE_CHECKING:
    from langchain_lookup_knowledge.settings import LookupSettings
    from langchain_lookup_knowledge.store.vocabulary_store import VocabularyRead

__all__ = [
    "EvidenceDecision",
    "common_words",
    "decide_evidence",
    "dense_margin",
    "evidence_signals",
    "levels_by_model",
    "seen_rules",
    "similarity_readable",
]


def decide_evidence(
    blocks: Sequence[EvidenceBlock],
    query: str,
    settings: LookupSettings,
    vocabulary: VocabularyRead | None = None,
) -> EvidenceDecision:
    """``found`` and ``relevanceLevel`` of the blocks, by ``settings.evidence_decision`` and
    ``settings.relevance_decision``.

    ``similarity``: any block is evidence. ``calibrated``: the model's confidence against
    ``found_confidence``; the found model is ``evidence_model`` when the knowledge base's
    ``vocabulary`` was read, else ``fallback_evidence_model`` (a collection ingested before
    vocabularies), said in the note. The level (:func:`levels_by_model`): ``relevance_model``
    against ``high_confidence`` / ``medium_confidence``, or the top similarity against
    ``high_relevance`` / ``medium_relevance``.

    ``profiled`` (the default): :mod:`langchain_lookup_knowledge.judgement`'s
    ``relevanceScore`` of the blocks read against the knowledge base's profile (stored with
    the ``vocabulary`` read), ``found`` and the level by its thresholds (``relevance_decision``
    ``auto``; ``calibrated`` or ``similarity`` take the level from there instead). Every
    decision carries the score.

    Example:
        >>> from langchain_lookup_knowledge.settings import LookupSettings
        >>> decide_evidence([], "disk full", LookupSettings()).found
        False
    """
    decision = _decide(blocks, query, settings, vocabulary)
    if decision.score is not None or not any(b.score_label is not None for b in blocks):
        return decision
    signals = decision.signals or lookup_signals(
        blocks, query, readable=similarity_readable(settings, query), unseen=None
    )
    assert signals is not None  # a labelled block exists
    from dataclasses import replace

    from langchain_lookup_knowledge.judgement.decide import judge_blocks

    profile = vocabulary.profile if vocabulary is not None else None
    judged = judge_blocks(blocks, signals, profile, settings.judge_model_file)
    return replace(decision, score=judged.score, judgement=decision_trace(judged))


def _profiled(
    blocks: Sequence[EvidenceBlock],
    query: str,
    settings: LookupSettings,
    vocabulary: VocabularyRead | None,
) -> EvidenceDecision:
    """The default decision: ``found`` and the level from the judgement's score."""
    from langchain_lookup_knowledge.judgement.decide import judge_blocks
    from langchain_lookup_knowledge.judgement.model import JudgeModel

    kb = vocabulary.vocabulary if vocabulary is not None else None
    readable = similarity_readable(settings, query)
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
    judged = judge_blocks(blocks, signals, profile, settings.judge_model_file)
    level: RelevanceLevel = judged.level  # type: ignore[assignment]
    note = "judgement: " + judged.note(JudgeModel.configured(settings.judge_model_file))
    if profile is None:
        why = vocabulary.profile_note if vocabulary is not None else "none read"
        note += f"; typical profile ({why or 'no KB profile'})"
    if kb is None:
        note += "; no KB vocabulary read"
    if judged.found and settings.relevance_decision != "auto":
        if levels_by_model(settings):
            level, about = model_level(signals, settings)
        else:
            level = similarity_level(blocks, settings)
            about = f"relevance by top similarity: {level}"
        note += f"; relevanceLevel by relevance_decision={settings.relevance_decision}: {about}"
    return EvidenceDecision(
        found=judged.found,
        level=level if judged.found else "low",
        confidence=judged.score,
        signals=signals,
        note=note,
        score=judged.score,
        judgement=decision_trace(judged),
    )


def _decide(
    blocks: Sequence[EvidenceBlock],
    query: str,
    settings: LookupSettings,
    vocabulary: VocabularyRead | None,
) -> EvidenceDecision:
    if settings.evidence_decision == "profiled":
        return _profiled(blocks, query, settings, vocabulary)
    if settings.evidence_decision == "similarity":  # any labelled block is evidence
        if not any(b.score_label is not None for b in blocks):
            return EvidenceDecision(found=False, level="low", confidence=None, signals=None)
        if not levels_by_model(settings):  # reads the top similarity, nothing else
            level = similarity_level(blocks, settings)
            return EvidenceDecision(found=True, level=level, confidence=None, signals=None)
        readable = similarity_readable(settings, query)
        read = lookup_signals(blocks, query, readable=readable, unseen=None)
        assert read is not None  # a labelled block exists
        level, about_level = model_level(read, settings)
        note = f"relevanceLevel by relevance_model ({read.family}): {about_level}"
        return EvidenceDecision(found=True, level=level, confidence=None, signals=read, note=note)
    kb = vocabulary.vocabulary if vocabulary is not None else None
    readable = similarity_readable(settings, query)
    rules = seen_rules(settings.evidence_vocabulary_rules)
    # read once: the signals weigh it, the note lists its unseen terms
    seen_by_kb = vocabulary_signals(query, kb, common_words(), **rules) if kb is not None else None
    signals = lookup_signals(blocks, query, readable=readable, unseen=seen_by_kb)
    if signals is None:
        return EvidenceDecision(found=False, level="low", confidence=None, signals=None)
    model = settings.evidence_model if kb is not None else settings.fallback_evidence_model
    value = confidence(signals, model)
    term_required = settings.evidence_term_rule == "all" or signals.family in LEXICAL_FAMILIES
    unvouched = term_required and signals.coverage == 0
    found = value >= settings.found_confidence and not unvouched
    if levels_by_model(settings):
        level, about_level = model_level(signals, settings, shown=found)
    else:
        level = similarity_level(blocks, settings)
        about_level = (
            f"relevance by top similarity: {level if found else '-'} "
            f"(high_relevance {settings.high_relevance:g}, "
            f"medium_relevance {settings.medium_relevance:g})"
        )
    family, _ = family_weights(signals, model)
    why = ", ".join(
        f"{name} {getattr(signals, name):.3f} -> {share:+.2f}"
        if name != "bias"
        else f"bias {share:+.2f}"
        for name, share in contributions(signals, model).items()
    )
    if kb is not None and seen_by_kb is not None:

        def listed(terms: tuple[str, ...]) -> str:
            return ", ".join(terms[:5]) + (", ..." if len(terms) > 5 else "") or "-"

        about_vocabulary = (
            f"KB vocabulary of {kb.documents} documents, unseen: {listed(seen_by_kb.unseen)} "
            f"(not everyday words: {listed(seen_by_kb.rare_unseen)}); "
        )
    else:
        reason = vocabulary.note if vocabulary is not None and vocabulary.note else "none read"
        about_vocabulary = f"{reason}: fallback_evidence_model; "
    note = (
        f"evidence decision ({signals.family}"
        + ("" if family == signals.family else f", {family} weights")
        + "): "
        + ("found" if found else "no evidence")
        + f", confidence {value:.3f} "
        + (">=" if found else "<")
        + f" found_confidence {settings.found_confidence:g} (log-odds: {why}); "
        + about_vocabulary
        + ("no question term in the first block; " if unvouched else "")
        + about_level
    )
    return EvidenceDecision(
        found=found, level=level if found else "low", confidence=value, signals=signals, note=note
    )
