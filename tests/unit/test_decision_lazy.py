"""``evidence_decision=similarity`` with ``relevance_decision=similarity`` reads the top
similarity only: the other signals (term coverage of the first block, leg agreement, ...) are not
computed for it (issue 12, latency), and its found/level are what the rule says of the full
signals' similarity. With the default ``relevance_decision=calibrated`` the level reads the
relevance model's signals, never the KB vocabulary."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.pipeline import decision as decision_module
from langchain_lookup_knowledge.pipeline.decision import decide_evidence, evidence_signals
from langchain_lookup_knowledge.pipeline.relevance import relevance_level
from langchain_lookup_knowledge.settings import LookupSettings
from tests.unit.test_decision import block


@pytest.mark.parametrize("similarities", [(0.3,), (0.5, 0.7), (0.8, 0.2, 0.64), (0.46,)])
def test_the_similarity_decision_computes_no_other_signal(monkeypatch, similarities):
    blocks = [block(s) for s in similarities]
    query = "node disk full"
    settings = LookupSettings(evidence_decision="similarity", relevance_decision="similarity")
    expected = relevance_level(
        evidence_signals(blocks, query).similarity,
        high=settings.high_relevance,
        medium=settings.medium_relevance,
    )

    def not_needed(*_args, **_kwargs):
        raise AssertionError("the similarity decision computed every signal")

    monkeypatch.setattr(decision_module, "evidence_signals", not_needed)
    decided = decide_evidence(blocks, query, settings)
    assert (decided.found, decided.level, decided.signals) == (True, expected, None)
    assert decide_evidence([], query, settings).found is False


def test_the_default_level_reads_the_relevance_signals_but_no_vocabulary(monkeypatch):
    blocks = [block(0.5), block(0.7, rank_score=0.4)]

    def not_needed(*_args, **_kwargs):
        raise AssertionError("the similarity rule read the KB vocabulary")

    monkeypatch.setattr(decision_module, "vocabulary_signals", not_needed)
    decided = decide_evidence(blocks, "node disk full", LookupSettings())
    assert decided.found is True
    assert decided.confidence is None  # no found model was read
    assert decided.signals is not None
    assert (decided.signals.coverage, decided.signals.vocabulary) == (1.0, False)
