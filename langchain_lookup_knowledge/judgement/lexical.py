"""The score of a lexical lookup: a question the embedder cannot read, on a collection whose BM25
analyzer does not read its language either (a Chinese question on an English collection).

Such a lookup has no score the judgement's models can read (its dense similarity is noise) and no
such lookup answered in scope was in their fit. Its ``relevanceScore`` is a logistic confidence in
its first block's term coverage and the question's terms the knowledge base never names
(:data:`LEXICAL_WEIGHTS`, fitted on the dev question sets), 0 when the first block holds no
question term, and never ``high``: :func:`~.decide.lexical_score`. Pure arithmetic, no I/O.

Example:
    >>> from langchain_lookup_knowledge.judgement.signals import EvidenceSignals
    >>> round(lexical_confidence(EvidenceSignals(family="lexical", coverage=1.0)), 3)
    0.999
"""

from __future__ import annotations

import math

from langchain_lookup_knowledge.judgement.signals import EvidenceSignals

__all__ = ["LEXICAL_WEIGHTS", "lexical_confidence"]

LEXICAL_WEIGHTS: dict[str, float] = {
    "bias": 2.291,
    "coverage": 4.312,
    "unseen_idf": -2.127,
    "rare_unseen_latin_idf": -6.029,
}
"""The log-odds of a lexical lookup's confidence: a bias and a weight per signal."""


def lexical_confidence(signals: EvidenceSignals) -> float:
    """The confidence in [0, 1] that a lexical lookup's first block answers the question: the
    sigmoid of the bias plus each weighed signal's share (rounded to 4 digits)."""
    z = 0.0
    for name, weight in LEXICAL_WEIGHTS.items():
        z += weight if name == "bias" else round(weight * float(getattr(signals, name)), 4)
    z = max(-60.0, min(60.0, z))
    return 1.0 / (1.0 + math.exp(-z))
