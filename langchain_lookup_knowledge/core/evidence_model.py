"""The evidence decision's models: the signals it reads and the logistic model over them.

A model maps a retrieval family (``hybrid``, ``dense``, ``sparse``, ``lexical``; see
:mod:`langchain_lookup_knowledge.pipeline.decision`) to weights over :data:`FEATURES` plus a
``bias``; :func:`confidence` turns :class:`EvidenceSignals` into a confidence in [0, 1] and
:func:`contributions` says how much each signal gave. Pure arithmetic, no I/O.

Example:
    >>> signals = EvidenceSignals(family="dense", similarity=0.71, coverage=1.0, agreement=1.0)
    >>> confidence(signals, DEFAULT_EVIDENCE_MODEL) > 0.5
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

from langchain_lookup_knowledge.core.vocabulary import VOCABULARY_FEATURES

__all__ = [
    "DEFAULT_EVIDENCE_MODEL",
    "DEFAULT_FALLBACK_EVIDENCE_MODEL",
    "DEFAULT_RELEVANCE_MODEL",
    "FAMILIES",
    "FEATURES",
    "LEXICAL_FAMILIES",
    "EvidenceSignals",
    "confidence",
    "contributions",
    "family_weights",
    "validate_evidence_model",
]

FEATURES = (
    "similarity",
    "coverage",
    "title_overlap",
    "agreement",
    "l0_match",
    "bm25_per_term",
    "dense_margin",
    *VOCABULARY_FEATURES,
)
"""Signal names a model may weigh (besides ``bias``); the last five need the KB vocabulary.
``dense_margin`` is computed and reported but weighed by no default model (measured on dev, see
docs/evaluation.md, "The evidence decision")."""

FAMILIES = ("hybrid", "dense", "sparse", "lexical")
"""Retrieval families a model may have weights for (see the module docstring)."""

LEXICAL_FAMILIES = frozenset({"sparse", "lexical"})
"""Families whose first block is evidence only if it holds a question term."""
# Fitted by benchmarks/fit_decision.py on the dev splits and their out-of-scope questions, each
# looked up hybrid and dense-only (docs/evaluation.md, "The evidence decision"). Each family's bias
# holds its threshold: found at confidence 0.5.
DEFAULT_EVIDENCE_MODEL: dict[str, dict[str, float]] = {
    "hybrid": {
        "bias": 0.785,
        "similarity": 0.577,
        "coverage": 4.373,
        "agreement": 2.933,
        "unseen_idf": -3.545,
        "rare_unseen_latin_idf": -7.201,
    },
    "dense": {
        "bias": 2.98,
        "similarity": 0.844,
        "coverage": 4.933,
        "unseen_idf": -3.723,
        "rare_unseen_latin_idf": -7.209,
    },
    "sparse": {
        "bias": 1.273,
        "coverage": 8.106,
        "unseen_idf": -2.867,
        "rare_unseen_latin_idf": -5.32,
    },
    "lexical": {
        "bias": 2.291,
        "coverage": 4.312,
        "unseen_idf": -2.127,
        "rare_unseen_latin_idf": -6.029,
    },
}
"""Found model: the confidence that the question is one the knowledge base answers (with the
KB vocabulary)."""

DEFAULT_FALLBACK_EVIDENCE_MODEL: dict[str, dict[str, float]] = {
    "hybrid": {"bias": -4.387, "similarity": 3.439, "coverage": 2.082, "agreement": 4.012},
    "dense": {"bias": -1.618, "similarity": 3.281, "coverage": 2.934},
    "sparse": {"bias": -1.023, "coverage": 8.19},
    "lexical": {"bias": -0.368, "coverage": 5.168},
}
"""Found model of a collection without a KB vocabulary (ingested before vocabularies)."""

DEFAULT_RELEVANCE_MODEL: dict[str, dict[str, float]] = {
    "hybrid": {"bias": -8.021, "similarity": 0.087, "coverage": 4.214, "agreement": 6.666},
    "dense": {"bias": -1.989, "similarity": 0.403, "coverage": 3.742},
    "sparse": {"bias": -0.773, "bm25_per_term": 0.396},
    "lexical": {"bias": -2.199, "coverage": 7.118},
}
"""Relevance model: the confidence that the first block is a relevant document."""


@dataclass(frozen=True)
class EvidenceSignals:
    """What the decision reads, all from the final evidence blocks.

    Attributes:
        family: ``"hybrid"`` (dense + BM25 fused), ``"dense"`` (dense alone), ``"sparse"``
            (BM25 alone) or ``"lexical"`` (dense or hybrid on a question the embedder cannot
            read).
        similarity: The best dense similarity among the blocks.
        coverage: Share of the question's significant terms (words, CJK bigrams) in the first
            block (title, breadcrumb, content).
        title_overlap: Share of them in the first block's title or breadcrumb.
        agreement: Hybrid: the first block's fused rank score (1.0: first in both lists);
            dense: 1.0 when the first block is also the most similar; sparse: 0.
        l0_match: 1.0 when L0 matched the first block's document by title, keyword, alias or
            entity.
        bm25_per_term: BM25-only: the first block's BM25 score divided by the question's terms.
        dense_margin: The best dense similarity of the first block's document minus that of
            the best other document among the first five blocks (0.0 when no other document
            is among them): negative when the dense leg prefers another document to the one
            the lookup ranked first.
        terms: The question's significant terms.
        unseen_share: KB vocabulary: share of the question's terms no document holds.
        unseen_idf: KB vocabulary: their share of the question's IDF mass.
        rarest_idf: KB vocabulary: the rarest term the KB holds, its IDF over an unseen one's.
        rare_unseen_idf: KB vocabulary: the IDF share of the unseen terms that are not
            everyday words of the language (what a near miss names).
        rare_unseen_latin_idf: KB vocabulary: the part of ``rare_unseen_idf`` in
            Latin-script terms (a product or tool name, in an English or a Chinese question).
        vocabulary: Whether the KB vocabulary was read (else the five above are 0).
    """

    family: str
    similarity: float = 0.0
    coverage: float = 0.0
    title_overlap: float = 0.0
    agreement: float = 0.0
    l0_match: float = 0.0
    bm25_per_term: float = 0.0
    dense_margin: float = 0.0
    terms: int = 0
    unseen_share: float = 0.0
    unseen_idf: float = 0.0
    rarest_idf: float = 0.0
    rare_unseen_idf: float = 0.0
    rare_unseen_latin_idf: float = 0.0
    vocabulary: bool = False

    def as_dict(self) -> dict[str, float | str]:
        """Rounded, for traces and evaluation reports."""
        values = ((k, getattr(self, k)) for k in _field_names(type(self)))  # scalars: no copy
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in values}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (read once per class, not once per lookup)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def validate_evidence_model(model: Mapping[str, Mapping[str, float]]) -> None:
    """Raise ``ValueError`` naming an unknown family or signal, or a non-finite weight.

    Example:
        >>> try:
        ...     validate_evidence_model({"dense": {"bias": 0, "simlarity": 1}})
        ... except ValueError as exc:
        ...     print(str(exc)[:48])
        evidence model dense: unknown signal 'simlarity'
    """
    for family, weights in model.items():
        if family not in FAMILIES:
            msg = f"evidence model: unknown family {family!r} (use {', '.join(FAMILIES)})"
            raise ValueError(msg)
        for name, value in weights.items():
            if name != "bias" and name not in FEATURES:
                known = ", ".join(("bias", *FEATURES))
                msg = f"evidence model {family}: unknown signal {name!r} (use {known})"
                raise ValueError(msg)
            if not isinstance(value, int | float) or not math.isfinite(value):
                msg = f"evidence model {family}.{name}: weight must be finite, got {value!r}"
                raise ValueError(msg)


def family_weights(
    signals: EvidenceSignals, model: Mapping[str, Mapping[str, float]]
) -> tuple[str, Mapping[str, float]]:
    """The family whose weights apply (``signals.family``, else ``dense``) and those weights."""
    for family in (signals.family, "dense"):
        if family in model:
            return family, model[family]
    return "none", {}


def contributions(
    signals: EvidenceSignals, model: Mapping[str, Mapping[str, float]]
) -> dict[str, float]:
    """Each weighed signal's share of the model's log-odds (``bias`` included): the why.

    Example:
        >>> model = {"dense": {"bias": -3.0, "similarity": 5.0, "coverage": 2.0}}
        >>> contributions(EvidenceSignals(family="dense", similarity=0.6, coverage=0.5), model)
        {'bias': -3.0, 'similarity': 3.0, 'coverage': 1.0}
    """
    _, weights = family_weights(signals, model)
    shares = {"bias": float(weights.get("bias", 0.0))}
    for name in FEATURES:
        if name in weights:
            shares[name] = round(float(weights[name]) * float(getattr(signals, name)), 4)
    return shares


def confidence(signals: EvidenceSignals, model: Mapping[str, Mapping[str, float]]) -> float:
    """The model's confidence in [0, 1] that the first block answers the question.

    A family missing from ``model`` falls back to ``dense``.
    """
    z = sum(contributions(signals, model).values())
    z = max(-60.0, min(60.0, z))
    return 1.0 / (1.0 + math.exp(-z))
