"""The judgement of one lookup: ``relevanceScore``, and ``found`` / ``relevanceLevel`` from it.

:func:`judge_blocks` reads the lookup's blocks (their sorted score vectors and the evidence
signals, :mod:`.signals`) against the knowledge base's
profile (measured at ingest; a typical profile when it has none: a collection ingested before
profiles, or a scoped lookup, which never reads what the whole knowledge base holds) and scores
them with the shipped :class:`~.model.JudgeModel`.

Example:
    >>> from langchain_lookup_knowledge.judgement.signals import EvidenceSignals
    >>> signals = EvidenceSignals(family="hybrid", similarity=0.8, coverage=1.0, agreement=1.0)
    >>> judged = judge_signals(signals, [0.8, 0.5], [1.0, 0.7], [0.03, 0.02], None)
    >>> judged.found, judged.level, judged.profile
    (True, 'high', 'typical')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.judgement.features import (
    KbProfile,
    group_of,
    judgement_features,
    score_vector,
)
from langchain_lookup_knowledge.judgement.lexical import lexical_confidence
from langchain_lookup_knowledge.judgement.model import JudgeModel
from langchain_lookup_knowledge.judgement.signals import EvidenceSignals

__all__ = ["Judgement", "judge_blocks", "judge_signals", "lexical_score", "typical_profile"]


@dataclass(frozen=True)
class Judgement:
    """``score`` (``relevanceScore``), what follows from it, and what it read (for the trace)."""

    score: float
    found: bool
    level: str
    group: str
    profile: str  # "kb": the knowledge base's own; "typical": the shipped one
    features: dict[str, float]
    embedder: str | None = None  # whose thresholds judged it (None: the group's own)

    def note(self, model: JudgeModel) -> str:
        t = model.thresholds_of(self.group, self.embedder)
        shown = ", ".join(f"{k} {v:.3f}" for k, v in self.features.items())
        return (
            f"relevanceScore {self.score:.3f} ({self.group} model, {self.profile} profile): "
            + (f"found, {self.level}" if self.found else "no evidence")
            + f" (found >= {t.get('found', 0):.3f}, medium >= {t.get('medium', 0):.3f}, "
            f"high >= {t.get('high', 0):.3f}); read: {shown}"
        )


@lru_cache(maxsize=4)
def typical_profile(path: str | None = None) -> KbProfile:
    """The profile lookups read when their knowledge base has none: the model file's (``path``;
    None: the shipped one), the element-wise median of the knowledge bases it was fitted on."""
    import json

    from langchain_lookup_knowledge.judgement.model import model_text

    return KbProfile.from_dict(json.loads(model_text(path)).get("typical_profile", {}))


def judge_signals(
    signals: EvidenceSignals,
    similarities: Sequence[float | None],
    ranks: Sequence[float | None],
    raws: Sequence[float | None],
    profile: KbProfile | None,
    model_file: Path | None = None,
    embedder: str | None = None,
) -> Judgement:
    """Score the first blocks' scores (best first) and ``signals`` against ``profile`` (None:
    the typical profile) with the model of ``model_file`` (None: the shipped one), read against
    the thresholds of ``embedder`` (the ``embedding_provider``) where the model has them."""
    model = JudgeModel.configured(model_file)
    typical = typical_profile(str(model_file) if model_file is not None else None)
    vector = score_vector(signals.family, similarities, ranks, raws, signals.terms)
    x = judgement_features(vector, signals.as_dict(), profile or typical)  # type: ignore[arg-type]
    group = group_of(signals.family)
    score = model.score_features(group, x)
    if signals.family == "lexical":
        group, score = "lexical", lexical_score(signals, model)
    found, level = model.decide(score, group, embedder)
    weighed = model.groups.get(group_of(signals.family)) or model.groups["dense"]
    shown = {k: round(v, 3) for k, v in x.items() if k in weighed.features}
    return Judgement(
        score=round(score, 4),
        found=found,
        level=level,
        group=group,
        profile="kb" if profile is not None else "typical",
        features=shown,
        embedder=embedder,
    )


def lexical_score(signals: EvidenceSignals, model: JudgeModel) -> float:
    """A lexical lookup (a question the embedder cannot read, on a collection whose BM25
    analyzer does not read its language either) has no score the judgement can read, and no
    such lookup answered in scope was in its fit: its score is :func:`~.lexical.lexical_confidence`
    (its term coverage and vocabulary), 0 when the first block holds no question term, and
    never ``high`` (nothing but term overlap vouches for it)."""
    if signals.coverage == 0:
        return 0.0
    ceiling = model.thresholds_of("lexical").get("high", 1.0) - 1e-3
    return min(lexical_confidence(signals), ceiling)


def judge_blocks(
    blocks: Sequence[EvidenceBlock],
    signals: EvidenceSignals,
    profile: KbProfile | None,
    model_file: Path | None = None,
    embedder: str | None = None,
) -> Judgement:
    """:func:`judge_signals` of the labelled ``blocks`` (best first)."""
    labels = [b.score_label for b in blocks if b.score_label is not None]
    return judge_signals(
        signals,
        [label.similarity for label in labels],
        [label.rank_score for label in labels],
        [label.raw for label in labels],
        profile,
        model_file,
        embedder,
    )
