"""The calibrated evidence decision: signals read from blocks, confidence, thresholds."""

from __future__ import annotations

import math

import pytest

from langchain_lookup_knowledge.core.evidence_model import (
    DEFAULT_EVIDENCE_MODEL,
    EvidenceSignals,
    confidence,
    contributions,
)
from langchain_lookup_knowledge.core.vocabulary import KbVocabulary
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.pipeline.decision import decide_evidence, evidence_signals
from langchain_lookup_knowledge.pipeline.models import EvidenceBlock, HitReason, ScoreLabel
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.vocabulary_store import VocabularyRead

CALIBRATED = LookupSettings(evidence_decision="calibrated")
# a KB vocabulary as ingest stores it: evidence_model applies (without one, fallback_evidence_model)
VOCABULARY = VocabularyRead(KbVocabulary.build([("a.md", "The node disk is full.")]))


def block(
    similarity: float,
    *,
    kind: str = "hybrid",
    rank_score: float | None = 1.0,
    title: str = "Node disk full",
    content: str = "The node disk is full.",
    raw: float = 0.1,
    reasons: tuple[str, ...] = (),
    source: str = "a.md",
) -> EvidenceBlock:
    label = ScoreLabel(
        path="sdk",
        metric="RRF",
        raw=raw,
        similarity=similarity,
        formula="",
        kind=kind,
        rank_score=rank_score,
    )
    return EvidenceBlock(
        evidence_key=f"{source}#0",
        source=source,
        title=title,
        content=content,
        score_label=label,
        hit_reasons=[HitReason(kind=k, detail="") for k in reasons],
    )


def test_signals_come_from_the_first_block_and_the_question():
    signals = evidence_signals(
        [block(0.5, reasons=("l0_title",)), block(0.7, rank_score=0.4)], "node disk full"
    )
    assert signals is not None
    assert signals.family == "hybrid"
    assert signals.similarity == 0.7  # the best of the blocks
    assert signals.agreement == 1.0  # the first block: first in both hybrid lists
    assert (signals.coverage, signals.l0_match) == (1.0, 1.0)
    sparse = evidence_signals(
        [block(0.1, kind="sparse", raw=-6.0, content="磁盘满了")], "节点磁盘满了"
    )
    assert sparse is not None
    assert sparse.family == "sparse"
    assert sparse.bm25_per_term == pytest.approx(6.0 / sparse.terms)
    assert sparse.agreement == 0.0
    assert evidence_signals([], "anything") is None


def test_dense_margin_is_how_far_the_dense_leg_prefers_the_first_block_s_document():
    """The first document's best similarity (any of its blocks) minus the best other
    document's, over the first five blocks; 0 with no other document; a model that weighs it
    says its share in the note (the default models do not weigh it)."""
    ranked = [
        block(0.50, source="a.md"),
        block(0.62, source="b.md"),
        block(0.58, source="a.md"),
        block(0.40, source="c.md"),
    ]
    signals = evidence_signals(ranked, "node disk full")
    assert signals is not None
    assert signals.dense_margin == pytest.approx(0.58 - 0.62)
    without_b = [ranked[0], ranked[2], ranked[3]]
    assert evidence_signals(without_b, "node disk full").dense_margin == pytest.approx(0.18)
    alone = evidence_signals([block(0.5), block(0.7)], "node disk full")
    assert alone.dense_margin == 0.0
    sixth = [block(0.5, source="a.md"), *(block(0.3, source=f"{i}.md") for i in range(4))]
    beyond = evidence_signals([*sixth, block(0.9, source="z.md")], "node disk full")
    assert beyond.dense_margin == pytest.approx(0.2)  # the sixth block is not compared
    assert all("dense_margin" not in w for w in DEFAULT_EVIDENCE_MODEL.values())
    weighing = {f: w | {"dense_margin": 10.0} for f, w in DEFAULT_EVIDENCE_MODEL.items()}
    settings = LookupSettings(evidence_decision="calibrated", evidence_model=weighing)
    decision = decide_evidence(ranked, "node disk full", settings, VOCABULARY)
    assert "dense_margin -0.040 -> -0.40" in decision.note
    plain = decide_evidence(ranked, "node disk full", CALIBRATED, VOCABULARY)
    assert decision.confidence < plain.confidence


def test_confidence_grows_with_each_positive_signal():
    model = LookupSettings().evidence_model
    low = EvidenceSignals(family="dense", similarity=0.3, coverage=0.1, agreement=0.6)
    for better in (
        EvidenceSignals(family="dense", similarity=0.7, coverage=0.1, agreement=0.6),
        EvidenceSignals(family="dense", similarity=0.3, coverage=0.8, agreement=0.6),
    ):
        assert confidence(better, model) > confidence(low, model)
    assert 0.0 < confidence(low, model) < 1.0


def test_calibrated_and_similarity_decisions_differ_on_a_weak_match():
    weak = [block(0.25, rank_score=0.5, title="Pod pending", content="Pods wait for a node.")]
    query = "chocolate cake recipe with cream"
    calibrated = decide_evidence(weak, query, LookupSettings(evidence_decision="calibrated"))
    assert calibrated.found is False
    assert calibrated.confidence is not None
    assert "confidence" in calibrated.note
    legacy = decide_evidence(weak, query, LookupSettings(evidence_decision="similarity"))
    assert legacy.found is True  # above min_evidence_similarity: evidence, by the old rule
    assert legacy.level == "low"
    strong = decide_evidence(
        [block(0.8)], "node disk full", LookupSettings(evidence_decision="calibrated")
    )
    assert strong.found is True
    assert strong.level == "high"


def test_a_bad_evidence_model_is_named():
    with pytest.raises(ConfigurationError, match="simlarity"):
        LookupSettings(evidence_model={"dense": {"bias": 0.0, "simlarity": 1.0}})
    with pytest.raises(ConfigurationError, match="medium_confidence"):
        LookupSettings(medium_confidence=0.9, high_confidence=0.5)


def test_the_family_is_the_path_the_lookup_took():
    dense = block(0.6, kind="dense", rank_score=None)
    assert evidence_signals([dense], "node disk full").family == "dense"
    # a question the English-only embedder cannot read: its similarity is noise
    assert evidence_signals([dense], "节点磁盘满了", readable=False).family == "lexical"
    hybrid = block(0.6)
    assert evidence_signals([hybrid], "节点磁盘满了", readable=False).family == "lexical"
    sparse = block(0.1, kind="sparse", raw=-6.0)
    assert evidence_signals([sparse], "节点磁盘满了", readable=False).family == "sparse"


def test_a_dense_only_lookup_is_not_judged_on_a_leg_it_lacks():
    """A dense-only lookup whose rerank put a less similar block first (agreement 0) keeps a
    right answer: the dense model weighs no agreement (the single model of the previous release
    rejected it)."""
    first = block(0.55, kind="dense", rank_score=None, title="Node disk full")
    more_similar = block(0.58, kind="dense", rank_score=None, title="Disk pressure")
    signals = evidence_signals([first, more_similar], "node disk full")
    assert signals is not None
    assert signals.agreement == 0.0
    assert "agreement" not in DEFAULT_EVIDENCE_MODEL["dense"]
    decision = decide_evidence([first, more_similar], "node disk full", CALIBRATED)
    assert decision.found is True
    assert decision.note.startswith("evidence decision (dense): found")


def test_an_unreadable_question_needs_one_of_its_terms_in_the_first_block():
    unrelated = block(
        0.45, kind="dense", rank_score=None, title="Pod pending", content="Pods wait."
    )
    no_term = decide_evidence([unrelated], "巧克力蛋糕的做法", CALIBRATED)
    assert no_term.found is False
    assert no_term.signals is not None
    assert no_term.signals.family == "lexical"
    assert "no question term in the first block" in no_term.note
    holding = block(0.45, kind="dense", rank_score=None, title="数据库连接数满了", content="连接池")
    assert decide_evidence([holding], "数据库连接数满了怎么办", CALIBRATED).found is True


def test_a_model_without_the_family_falls_back_to_dense():
    old_style = {"dense": {"bias": -1.0, "similarity": 4.0}}  # one model for every path
    hybrid = EvidenceSignals(family="hybrid", similarity=0.5, agreement=1.0)
    assert contributions(hybrid, old_style) == {"bias": -1.0, "similarity": 2.0}
    assert confidence(hybrid, old_style) == pytest.approx(1 / (1 + math.exp(-1.0)))
    settings = LookupSettings(evidence_decision="calibrated", evidence_model=old_style)
    note = decide_evidence([block(0.5)], "node disk", settings, VOCABULARY).note
    assert "(hybrid, dense weights)" in note


def test_the_note_says_why_with_each_signal_s_share():
    decision = decide_evidence([block(0.8)], "node disk full", CALIBRATED, VOCABULARY)
    assert decision.found is True
    assert "found, confidence" in decision.note
    for name in DEFAULT_EVIDENCE_MODEL["hybrid"]:
        assert (f"{name} " in decision.note) if name != "bias" else ("bias " in decision.note)


def test_every_default_family_is_a_known_one():
    with pytest.raises(ConfigurationError, match="unknown family 'dense_only'"):
        LookupSettings(evidence_model={"dense_only": {"bias": 0.0}})
    assert set(LookupSettings().evidence_model) == {"hybrid", "dense", "sparse", "lexical"}


def test_a_withheld_right_answer_counts_against_the_decision():
    """right_answers_found reads the reranked first block, which a found=false result no longer
    lists among its blocks: a withheld right answer is a miss, a withheld wrong one is not."""
    from langchain_lookup_knowledge.evaluation.decision import decision_rates
    from langchain_lookup_knowledge.evaluation.runner import RunOutput

    run = RunOutput(
        rankings={"kept": ["a"], "withheld_right": [], "withheld_wrong": []},
        extra={
            "found": {"kept": True, "withheld_right": False, "withheld_wrong": False},
            "relevance": {"kept": "high"},
            "first": {"kept": "a", "withheld_right": "b", "withheld_wrong": "x"},
        },
    )
    qrels = {"kept": {"a": 1.0}, "withheld_right": {"b": 1.0}, "withheld_wrong": {"c": 1.0}}
    rates = decision_rates(run, qrels)
    assert rates["in_scope_found"] == pytest.approx(1 / 3, abs=1e-4)
    assert rates["right_answers_found"] == 0.5


def test_the_term_rule_on_every_path_withholds_a_hybrid_first_block_without_a_question_term():
    """evidence_term_rule=all: a hybrid first block holding none of the question's terms is no
    evidence whatever the model says (the default, lexical, leaves hybrid to the model)."""
    lenient = {"hybrid": {"bias": 10.0}, "dense": {"bias": 10.0}}
    unrelated = block(0.3, title="Pod pending", content="Pods wait for a node.")
    question = "change a bicycle inner tube"
    default = LookupSettings(
        evidence_decision="calibrated", evidence_model=lenient, fallback_evidence_model=lenient
    )
    assert decide_evidence([unrelated], question, default, VOCABULARY).found is True
    every_path = default.model_copy(update={"evidence_term_rule": "all"})
    withheld = decide_evidence([unrelated], question, every_path, VOCABULARY)
    assert withheld.found is False
    assert "no question term in the first block" in withheld.note
    assert decide_evidence([block(0.3)], "node disk full", every_path, VOCABULARY).found is True


def test_operator_vocabulary_rules_read_a_typo_as_seen_in_signals_and_note():
    """evidence_vocabulary_rules=operator: "nodefilesystem" (two KB words run together) is
    seen, and a pasted host "node7" stays unseen but is no unseen name; exact: both are."""
    kb = VocabularyRead(
        KbVocabulary.build([("a.md", "The node filesystem is full."), ("b.md", "x")])
    )
    question = "nodefilesystem full on node7"
    exact = decide_evidence([block(0.5)], question, CALIBRATED, kb)
    operator = decide_evidence(
        [block(0.5)],
        question,
        CALIBRATED.model_copy(update={"evidence_vocabulary_rules": "operator"}),
        kb,
    )
    assert exact.signals is not None
    assert operator.signals is not None
    assert exact.signals.rare_unseen_latin_idf > 0
    assert "unseen: nodefilesystem, node7" in exact.note
    assert operator.signals.rare_unseen_latin_idf == 0.0
    assert "unseen: node7 (not everyday words: -)" in operator.note
    assert operator.signals.unseen_idf < exact.signals.unseen_idf


def test_evaluation_signal_rows_follow_the_vocabulary_rules_setting():
    """eval queries' signal rows (what benchmarks/fit_decision.py fits on) are computed with the
    run's evidence_vocabulary_rules, so a fit of the operator rules sees their signals. The
    graph is a fake that returns one fixed lookup result (no retrieval is under test)."""
    from langchain_lookup_knowledge.core.models import LookupResult
    from langchain_lookup_knowledge.evaluation.runner import run_pipeline

    result = LookupResult(
        query="q", found=True, evidence_status="evidence", message="", evidence_blocks=[block(0.5)]
    )

    class FixedResultGraph:  # fake: the same result for every question
        def invoke(self, state: dict) -> dict:
            return {"result": result.model_dump()}

    vocabulary = KbVocabulary.build([("a.md", "The node filesystem is full."), ("b.md", "x")])
    question = {"q1": "nodefilesystem full on node7"}

    def row(rules: str) -> dict:
        settings = LookupSettings(evidence_vocabulary_rules=rules)
        run = run_pipeline(FixedResultGraph(), question, settings=settings, vocabulary=vocabulary)
        return run.extra["signals"]["q1"]

    assert row("exact")["rare_unseen_latin_idf"] > 0
    assert row("operator")["rare_unseen_latin_idf"] == 0.0


def test_evaluation_stops_on_a_lookup_that_could_not_search():
    """A lookup whose retrieval failed (a locked Milvus Lite file, a store that is down) comes
    back found=false; eval queries must not score it as "no evidence" (right for an
    out-of-scope question) but stop, naming the question and the failure. The graph is an
    injected fault: a fake that returns one failed lookup result."""
    from langchain_lookup_knowledge.core.models import LookupResult, RetrievalError
    from langchain_lookup_knowledge.errors import RetrievalUnavailableError
    from langchain_lookup_knowledge.evaluation.runner import run_pipeline

    failed = LookupResult(
        query="q",
        found=False,
        evidence_status="no_evidence",
        message="",
        error=RetrievalError(kind="transient", message="Milvus Lite file is locked"),
    )

    class FailedLookupGraph:  # injected fault: every lookup failed to search
        def invoke(self, state: dict) -> dict:
            return {"result": failed.model_dump()}

    with pytest.raises(RetrievalUnavailableError, match=r"'oos-3'.*transient.*locked"):
        run_pipeline(FailedLookupGraph(), {"oos-3": "kafka consumer lag"})


def test_relevance_decision_calibrated_labels_the_similarity_rule_s_evidence_by_the_model():
    """Under the similarity rule every labelled block is evidence; with relevance_decision
    calibrated its level comes from relevance_model, not from the top similarity: a similar
    but unvouched first block (no question term, the legs disagree) is low, a less similar one
    that holds every term and tops both lists is high."""
    by_model = LookupSettings(evidence_decision="similarity", relevance_decision="calibrated")
    by_similarity = LookupSettings(evidence_decision="similarity", relevance_decision="similarity")
    auto = LookupSettings(evidence_decision="similarity", relevance_decision="auto")
    unvouched = [block(0.9, rank_score=0.3, title="Certificates", content="Rotate the CA.")]
    vouched = [block(0.40, rank_score=1.0)]
    query = "node disk full"

    assert decide_evidence(unvouched, query, by_similarity).level == "high"  # 0.9 >= 0.62
    assert decide_evidence(unvouched, query, auto).level == "high"  # the rule's own level
    judged = decide_evidence(unvouched, query, by_model)
    assert (judged.found, judged.level, judged.confidence) == (True, "low", None)
    assert judged.signals is not None
    assert judged.signals.coverage == 0.0
    assert judged.note.startswith("relevanceLevel by relevance_model (hybrid): relevance 0.00")

    assert decide_evidence(vouched, query, by_similarity).level == "low"  # 0.40 < 0.45
    judged = decide_evidence(vouched, query, by_model)
    assert (judged.found, judged.level) == (True, "high")
    assert "high_confidence 0.7588" in judged.note


def test_relevance_decision_similarity_keeps_the_top_similarity_level_under_calibrated():
    """The calibrated found model with the similarity thresholds' level, said in the note."""
    settings = LookupSettings(evidence_decision="calibrated", relevance_decision="similarity")
    judged = decide_evidence([block(0.40, rank_score=1.0)], "node disk full", settings, VOCABULARY)
    assert judged.found is True
    assert judged.level == "low"  # by the model (CALIBRATED) it is high
    assert decide_evidence([block(0.40)], "node disk full", CALIBRATED, VOCABULARY).level == "high"
    assert "relevance by top similarity: low (high_relevance 0.62" in judged.note


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_score_is_no_trust_for_the_decision(bad):
    """A block whose similarity or rank score is not finite (a NaN vector, a corrupted row)
    reads as 0 in the signals, as the rerank reads it: never as certainty. Without that the
    logistic model's clamp turned NaN into confidence 1.0: relevanceLevel high under the
    default, and certain evidence under the calibrated decision."""

    def unrelated(score: float) -> list[EvidenceBlock]:
        return [block(score, rank_score=score, title="Certificates", content="Rotate the CA.")]

    signals = evidence_signals(unrelated(bad), "node disk full")
    assert signals is not None
    assert (signals.similarity, signals.agreement, signals.dense_margin) == (0.0, 0.0, 0.0)
    assert decide_evidence(unrelated(bad), "node disk full", LookupSettings()).level == "low"
    judged = decide_evidence(unrelated(bad), "node disk full", CALIBRATED, VOCABULARY)
    as_zero = decide_evidence(unrelated(0.0), "node disk full", CALIBRATED, VOCABULARY)
    assert judged.confidence == as_zero.confidence
    assert judged.confidence is not None
    assert judged.confidence < 0.9
