"""Relevance level thresholds and the completeness hint sentence."""

from __future__ import annotations

import math

import pytest

from langchain_lookup_knowledge.pipeline.models import (
    ContextPack,
    EvidenceBlock,
    L0Hints,
    ScoreLabel,
)
from langchain_lookup_knowledge.pipeline.relevance import (
    completeness_hint,
    relevance_level,
    top_similarity,
)


def block(source: str, similarity: float = 0.5) -> EvidenceBlock:
    label = ScoreLabel(
        path="sdk", metric="COSINE", raw=similarity, similarity=similarity, formula="s"
    )
    return EvidenceBlock(evidence_key=f"{source}#0", source=source, content="x", score_label=label)


@pytest.mark.parametrize(
    ("similarity", "level"),
    [
        (0.62, "high"),
        (0.9, "high"),
        (0.45, "medium"),
        (0.61, "medium"),
        (0.44, "low"),
        (None, "low"),
        (math.nan, "low"),
    ],
)
def test_relevance_level_thresholds_are_inclusive(similarity: float | None, level: str) -> None:
    assert relevance_level(similarity, high=0.62, medium=0.45) == level


def test_medium_above_high_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"\(0\.7\)"):
        relevance_level(0.5, high=0.6, medium=0.7)


def test_top_similarity_is_the_best_block_similarity() -> None:
    assert top_similarity([block("a.md", 0.4), block("b.md", 0.7)]) == 0.7


def test_strong_evidence_hint_counts_blocks_and_documents() -> None:
    blocks = [block("a.md"), block("a.md"), block("b.md")]
    assert completeness_hint(blocks, relevance="high") == (
        "3 blocks from 2 documents; evidence is strong."
    )


def test_weak_evidence_hint_asks_to_verify() -> None:
    assert "weak match: verify before acting" in completeness_hint([block("a.md")], relevance="low")


def test_hint_reports_omitted_sources() -> None:
    pack = ContextPack(
        text="x", included_sources=["a.md"], omitted_sources=["b.md", "c.md"], truncated=True
    )
    hint = completeness_hint(
        [block("a.md"), block("b.md"), block("c.md")], relevance="medium", context_pack=pack
    )
    assert "context truncated: 2 sources omitted (b.md, c.md)" in hint


def test_hint_reports_cut_content() -> None:
    pack = ContextPack(text="x", included_sources=["a.md"], truncated=True)
    hint = completeness_hint([block("a.md")], relevance="high", context_pack=pack)
    assert "some content was cut" in hint


def test_hint_flags_catalog_documents_retrieval_missed() -> None:
    hints = L0Hints(matched_sources=["k8s/node.md"], matched_titles=["Node NotReady"])
    hint = completeness_hint([block("a.md")], relevance="medium", l0_hints=hints)
    assert "k8s/node.md" in hint
    agreeing = completeness_hint([block("k8s/node.md")], relevance="medium", l0_hints=hints)
    assert "k8s/node.md" not in agreeing


def test_no_evidence_hint_says_catalog_hits_are_not_evidence() -> None:
    hint = completeness_hint([], relevance="low", l0_hints=L0Hints(matched_sources=["k8s/node.md"]))
    assert hint.startswith("No knowledge evidence found")
    assert "hints only" in hint
