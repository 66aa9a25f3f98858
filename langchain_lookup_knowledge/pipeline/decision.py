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

``dense_margin`` (how far the dense leg prefers the first block's document over the best other
one among the first five blocks) is computed for every lookup and reported in the evaluation
rows (``eval queries --json``'s ``signals``), for a fit to weigh; an ``evidence_model`` that
weighs it shows its share in the note like any signal's; no default model does (measured on
dev: docs/evaluation.md, "The evidence decision").

The found model also reads the knowledge base's own vocabulary (stored at ingest beside the
catalog, :mod:`langchain_lookup_knowledge.store.vocabulary_store`): how much of the question's
IDF mass is in terms no document holds (``unseen_idf``), how much in those of them that are
not everyday words of the language (``rare_unseen_idf``; :func:`common_words`), and how much in
those of them written in Latin script (``rare_unseen_latin_idf``: a product or tool name, also
in a Chinese question; the default model weighs this one). A near miss ("same domain, a topic
the documents do not cover") usually names such a thing. A question's word that is part of a
longer KB term (an identifier's words run together: "notready" of "KubeNodeNotReady") counts
as seen. A collection
without a vocabulary (ingested before them; a re-ingest adds one) is judged by
``fallback_evidence_model``, said in the trace.

A family missing from a model falls back to ``dense`` (a model may hold only that family).

The coefficients and thresholds are fitted on the dev splits by ``evals/fit_decision.py`` and
are the defaults of ``core.evidence_model.DEFAULT_EVIDENCE_MODEL`` and ``LookupSettings``.

Example:
    >>> from langchain_lookup_knowledge.core.evidence_model import DEFAULT_EVIDENCE_MODEL
    >>> signals = EvidenceSignals(family="dense", similarity=0.71, coverage=1.0, agreement=1.0)
    >>> confidence(signals, DEFAULT_EVIDENCE_MODEL) > 0.5
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from langchain_lookup_knowledge.core.evidence_model import (
    LEXICAL_FAMILIES,
    EvidenceSignals,
    confidence,
    contributions,
    family_weights,
)
from langchain_lookup_knowledge.core.text import cjk_count, latin_word_count
from langchain_lookup_knowledge.core.vocabulary import (
    VOCABULARY_FEATURES,
    CommonWords,
    KbVocabulary,
    VocabularySignals,
    vocabulary_signals,
)
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles
from langchain_lookup_knowledge.errors import ModelFilesError
from langchain_lookup_knowledge.pipeline.l0 import cjk_bigrams
from langchain_lookup_knowledge.pipeline.models import EvidenceBlock, RelevanceLevel
from langchain_lookup_knowledge.pipeline.rerank import query_term_matches, query_terms

if TYPE_CHECKING:
    from langchain_lookup_knowledge.judgement.decide import Judgement
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


_L0_MATCH_REASONS = frozenset({"l0_title", "l0_keyword", "l0_alias", "l0_entity"})
_AGREEMENT_TOP = 3
_MARGIN_TOP = 5  # the blocks dense_margin compares: the tool's default top_k


def similarity_readable(settings: LookupSettings, query: str) -> bool:
    """False when the embedder cannot read ``query``: mostly CJK under the bundled English-only
    model (the condition of the CJK rule), so a dense similarity of it is noise.

    Example:
        >>> from langchain_lookup_knowledge.settings import LookupSettings
        >>> similarity_readable(LookupSettings(), "pod 一直重启怎么办")
        False
        >>> similarity_readable(LookupSettings(), "pod keeps restarting")
        True
    """
    cjk = cjk_count(query)
    if cjk == 0 or cjk < latin_word_count(query):
        return True
    return not (settings.embedding_provider == "local" and settings.local_model_dir is None)


@lru_cache(maxsize=1)
def common_words() -> CommonWords:
    """The everyday words ``rare_unseen_idf`` leaves out: the whole Latin words (2+ letters
    or digits) of the bundled embedder's WordPiece vocabulary (all-MiniLM-L6-v2's 30,522
    entries: "keep", "never", "status"; not "istio", "kerberos", "hnsw"), and Chinese words
    jieba's dictionary counts often. Without the tokenizer file, no Latin word is common.

    Example:
        >>> common_words().holds("keep"), common_words().holds("spnego")
        (True, False)
    """
    try:
        tokenizer = ModelFiles.pinned_default().tokenizer
        vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    except (ModelFilesError, OSError, ValueError, KeyError, TypeError):
        return CommonWords()
    return CommonWords(
        latin=frozenset(w for w in vocab if len(w) > 1 and w.isascii() and w.isalnum())
    )


def evidence_signals(
    blocks: Sequence[EvidenceBlock],
    query: str,
    *,
    readable: bool = True,
    vocabulary: KbVocabulary | None = None,
    vocabulary_rules: str = "exact",
) -> EvidenceSignals | None:
    """The decision's signals for ``blocks`` (best first) of ``query``; None without blocks.

    ``readable``: whether the embedder reads the question (:func:`similarity_readable`); a
    dense or hybrid lookup of a question it cannot read is of the ``lexical`` family.
    ``vocabulary``: the knowledge base's (:mod:`~langchain_lookup_knowledge.core.vocabulary`);
    without it the vocabulary signals are 0 and ``vocabulary`` is False.
    ``vocabulary_rules``: ``exact`` or ``operator`` (:func:`seen_rules`).

    Example:
        >>> from langchain_lookup_knowledge.pipeline.models import ScoreLabel
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.6, similarity=0.6, formula="")
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", title="Disk full",
        ...                       content="The node disk is full.", score_label=label)
        >>> signals = evidence_signals([block], "node disk full")
        >>> signals.coverage, signals.title_overlap, signals.agreement
        (1.0, 0.6667, 1.0)
    """
    unseen = (
        vocabulary_signals(query, vocabulary, common_words(), **seen_rules(vocabulary_rules))
        if vocabulary is not None
        else None
    )
    return _signals(blocks, query, readable=readable, unseen=unseen)


def _signals(
    blocks: Sequence[EvidenceBlock],
    query: str,
    *,
    readable: bool,
    unseen: VocabularySignals | None,
) -> EvidenceSignals | None:
    """:func:`evidence_signals` with the question's vocabulary signals already read (None:
    no vocabulary)."""
    labelled = [b for b in blocks if b.score_label is not None]
    if not labelled:
        return None
    first = labelled[0]
    label = first.score_label
    assert label is not None
    terms = query_terms(query)
    bigrams = frozenset(cjk_bigrams(query))
    in_heading, covered = query_term_matches(
        terms, bigrams, f"{first.title}\n{first.breadcrumb}", first.content
    )
    similarities = [_finite(b.score_label.similarity) for b in labelled if b.score_label]
    family = {"sparse": "sparse", "hybrid": "hybrid"}.get(label.kind, "dense")
    if family != "sparse" and not readable:
        family = "lexical"  # its dense similarity is noise
    if label.kind == "hybrid":
        agreement = _finite(label.rank_score or 0.0)
    elif family == "dense":
        top = labelled[:_AGREEMENT_TOP]
        agreement = 1.0 if label.similarity >= max(similarities[: len(top)]) else 0.0
    else:
        agreement = 0.0
    bm25 = _finite(abs(label.raw)) / max(len(terms), 1) if family == "sparse" else 0.0
    margin = dense_margin(labelled[:_MARGIN_TOP])
    # the vocabulary signals by name (without a vocabulary: 0.0, the fields' default)
    seen_by_kb = (
        {name: getattr(unseen, name) for name in VOCABULARY_FEATURES} if unseen is not None else {}
    )
    return EvidenceSignals(
        family=family,
        similarity=max(similarities),
        coverage=round(len(covered) / max(len(terms), 1), 4),
        title_overlap=round(len(in_heading) / max(len(terms), 1), 4),
        agreement=agreement,
        l0_match=1.0 if any(r.kind in _L0_MATCH_REASONS for r in first.hit_reasons) else 0.0,
        bm25_per_term=bm25,
        dense_margin=margin,
        terms=len(terms),
        vocabulary=unseen is not None,
        **seen_by_kb,
    )


def _finite(score: float) -> float:
    """A score as the decision reads it: a non-finite one (a NaN vector, a corrupted row) is 0,
    as in the rerank's base, never certainty."""
    return score if math.isfinite(score) else 0.0


def seen_rules(vocabulary_rules: str) -> dict[str, bool]:
    """The :func:`vocabulary_signals` switches of ``evidence_vocabulary_rules``: ``exact``
    none; ``operator`` how operators write a KB's words (typos, CamelCase words of KB words,
    two KB words run together) and pasted values (a term with a digit is no unseen name).

    Example:
        >>> seen_rules("exact"), sorted(seen_rules("operator"))
        ({}, ['compounds', 'identifiers', 'typos', 'values'])
    """
    if vocabulary_rules == "operator":
        return {"typos": True, "identifiers": True, "compounds": True, "values": True}
    return {}


def dense_margin(blocks: Sequence[EvidenceBlock]) -> float:
    """The best dense similarity of the first block's document minus that of the best other
    document among ``blocks`` (best first, each with a score label); 0.0 when no other
    document is among them. Negative: the dense leg prefers another document to the one
    ranked first.

    Example:
        >>> from langchain_lookup_knowledge.pipeline.models import ScoreLabel
        >>> def at(source, similarity):
        ...     label = ScoreLabel(path="sdk", metric="COSINE", raw=similarity,
        ...                        similarity=similarity, formula="")
        ...     return EvidenceBlock(evidence_key=f"{source}#0", source=source, title="",
        ...                          content="", score_label=label)
        >>> round(dense_margin([at("a.md", 0.5), at("a.md", 0.7), at("b.md", 0.6)]), 2)
        0.1
        >>> round(dense_margin([at("a.md", 0.5), at("b.md", 0.6)]), 2)
        -0.1
    """
    first = blocks[0].source if blocks else None
    mine: float | None = None
    others: float | None = None
    for b in blocks:
        if b.score_label is None:
            continue
        s = _finite(b.score_label.similarity)
        if b.source == first:
            mine = s if mine is None else max(mine, s)
        else:
            others = s if others is None else max(others, s)
    if mine is None or others is None:
        return 0.0
    return round(mine - others, 4)


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


def _similarity_level(blocks: Sequence[EvidenceBlock], settings: LookupSettings) -> RelevanceLevel:
    from langchain_lookup_knowledge.pipeline.relevance import relevance_level, top_similarity

    return relevance_level(
        top_similarity(blocks), high=settings.high_relevance, medium=settings.medium_relevance
    )


def _model_level(
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
    signals = decision.signals or _signals(
        blocks, query, readable=similarity_readable(settings, query), unseen=None
    )
    assert signals is not None  # a labelled block exists
    from dataclasses import replace

    from langchain_lookup_knowledge.judgement.decide import judge_blocks

    profile = vocabulary.profile if vocabulary is not None else None
    judged = judge_blocks(blocks, signals, profile, settings.judge_model_file)
    return replace(decision, score=judged.score, judgement=_trace_of(judged))


def _trace_of(judged: Judgement) -> dict[str, object]:
    return {
        "relevanceScore": judged.score,
        "group": judged.group,
        "profile": judged.profile,
        "read": judged.features,
    }


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
    signals = _signals(blocks, query, readable=readable, unseen=seen_by_kb)
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
            level, about = _model_level(signals, settings)
        else:
            level = _similarity_level(blocks, settings)
            about = f"relevance by top similarity: {level}"
        note += f"; relevanceLevel by relevance_decision={settings.relevance_decision}: {about}"
    return EvidenceDecision(
        found=judged.found,
        level=level if judged.found else "low",
        confidence=judged.score,
        signals=signals,
        note=note,
        score=judged.score,
        judgement=_trace_of(judged),
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
            level = _similarity_level(blocks, settings)
            return EvidenceDecision(found=True, level=level, confidence=None, signals=None)
        readable = similarity_readable(settings, query)
        read = _signals(blocks, query, readable=readable, unseen=None)
        assert read is not None  # a labelled block exists
        level, about_level = _model_level(read, settings)
        note = f"relevanceLevel by relevance_model ({read.family}): {about_level}"
        return EvidenceDecision(found=True, level=level, confidence=None, signals=read, note=note)
    kb = vocabulary.vocabulary if vocabulary is not None else None
    readable = similarity_readable(settings, query)
    rules = seen_rules(settings.evidence_vocabulary_rules)
    # read once: the signals weigh it, the note lists its unseen terms
    seen_by_kb = vocabulary_signals(query, kb, common_words(), **rules) if kb is not None else None
    signals = _signals(blocks, query, readable=readable, unseen=seen_by_kb)
    if signals is None:
        return EvidenceDecision(found=False, level="low", confidence=None, signals=None)
    model = settings.evidence_model if kb is not None else settings.fallback_evidence_model
    value = confidence(signals, model)
    term_required = settings.evidence_term_rule == "all" or signals.family in LEXICAL_FAMILIES
    unvouched = term_required and signals.coverage == 0
    found = value >= settings.found_confidence and not unvouched
    if levels_by_model(settings):
        level, about_level = _model_level(signals, settings, shown=found)
    else:
        level = _similarity_level(blocks, settings)
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
