"""The evidence decision: signals read from blocks, the judgement's decision, and its fallback
when the knowledge base has no profile or no vocabulary."""

from __future__ import annotations

import math

import pytest

from langchain_lookup_knowledge.core.models import EvidenceBlock, HitReason, ScoreLabel
from langchain_lookup_knowledge.core.vocabulary import KbVocabulary
from langchain_lookup_knowledge.judgement.decision import decide_evidence
from langchain_lookup_knowledge.judgement.signals import evidence_signals
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.vocabulary_store import VocabularyRead

# a KB vocabulary as ingest stores it (no profile: the typical one is read)
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
    document's, over the first five blocks; 0 with no other document."""
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


def test_the_family_is_the_path_the_lookup_took():
    dense = block(0.6, kind="dense", rank_score=None)
    assert evidence_signals([dense], "node disk full").family == "dense"
    # a question the English-only embedder cannot read: its similarity is noise
    assert evidence_signals([dense], "节点磁盘满了", readable=False).family == "lexical"
    hybrid = block(0.6)
    assert evidence_signals([hybrid], "节点磁盘满了", readable=False).family == "lexical"
    sparse = block(0.1, kind="sparse", raw=-6.0)
    assert evidence_signals([sparse], "节点磁盘满了", readable=False).family == "sparse"


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


def test_evaluation_signal_rows_follow_the_vocabulary_rules_setting():
    """eval queries' signal rows are computed with the
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


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_score_is_no_trust_for_the_decision(bad):
    """A block whose similarity or rank score is not finite (a NaN vector, a corrupted row)
    reads as 0 in the signals, as the rerank reads it: never as certainty. Without that the
    logistic model's clamp turned NaN into confidence 1.0: relevanceLevel high."""

    def unrelated(score: float) -> list[EvidenceBlock]:
        return [block(score, rank_score=score, title="Certificates", content="Rotate the CA.")]

    signals = evidence_signals(unrelated(bad), "node disk full")
    assert signals is not None
    assert (signals.similarity, signals.agreement, signals.dense_margin) == (0.0, 0.0, 0.0)
    assert decide_evidence(unrelated(bad), "node disk full", LookupSettings()).level == "low"


def test_a_knowledge_base_without_a_profile_or_vocabulary_is_judged_on_the_typical_profile():
    """An old collection (no profile, no vocabulary), a vocabulary that could not be read, or a
    scoped lookup: the same judgement, read against the typical profile shipped with the model,
    the vocabulary signals 0; the note says which, and the trace names the profile."""
    blocks = [block(0.8)]
    none_read = decide_evidence(blocks, "node disk full", LookupSettings())
    assert none_read.score is not None
    assert none_read.found is True
    assert none_read.judgement is not None
    assert none_read.judgement["profile"] == "typical"
    assert "typical profile (none read)" in none_read.note
    assert "no KB vocabulary read" in none_read.note
    assert none_read.signals is not None
    assert none_read.signals.vocabulary is False

    unreadable = VocabularyRead(None, "KB vocabulary unreadable: locked")
    judged = decide_evidence(blocks, "node disk full", LookupSettings(), unreadable)
    assert "typical profile (no KB profile)" in judged.note
    assert "no KB vocabulary read" in judged.note
    assert judged.score == none_read.score  # nothing else to read: the same score

    with_vocabulary = decide_evidence(blocks, "node disk full", LookupSettings(), VOCABULARY)
    assert with_vocabulary.signals is not None
    assert with_vocabulary.signals.vocabulary is True
    assert "no KB vocabulary read" not in with_vocabulary.note
    assert "typical profile" in with_vocabulary.note  # a vocabulary without a profile


def test_the_judgement_decides_found_and_the_level_from_one_score():
    """found and relevanceLevel follow from relevanceScore by the model's thresholds: a strong
    first block is evidence at a level, a weak off-topic one is none (level low)."""
    strong = decide_evidence([block(0.8)], "node disk full", LookupSettings(), VOCABULARY)
    assert (strong.found, strong.level) == (True, "high")
    assert strong.note.startswith("judgement: relevanceScore ")
    weak = [block(0.25, rank_score=0.5, title="Pod pending", content="Pods wait for a node.")]
    off_topic = decide_evidence(weak, "chocolate cake recipe with cream", LookupSettings())
    assert (off_topic.found, off_topic.level) == (False, "low")
    assert off_topic.score is not None
    assert off_topic.score < strong.score  # type: ignore[operator]


def test_operator_vocabulary_rules_read_a_typo_as_seen():
    """evidence_vocabulary_rules=operator: "nodefilesystem" (two KB words run together) is
    seen, and a pasted host "node7" stays unseen but is no unseen name; exact: both are."""
    kb = VocabularyRead(
        KbVocabulary.build([("a.md", "The node filesystem is full."), ("b.md", "x")])
    )
    question = "nodefilesystem full on node7"
    exact = decide_evidence([block(0.5)], question, LookupSettings(), kb)
    operator = decide_evidence(
        [block(0.5)], question, LookupSettings(evidence_vocabulary_rules="operator"), kb
    )
    assert exact.signals is not None
    assert operator.signals is not None
    assert exact.signals.rare_unseen_latin_idf > 0
    assert operator.signals.rare_unseen_latin_idf == 0.0
    assert operator.signals.unseen_idf < exact.signals.unseen_idf
