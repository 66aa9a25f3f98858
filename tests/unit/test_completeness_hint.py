"""The completeness hint sentence."""

from __future__ import annotations

from langchain_lookup_knowledge.judgement.completeness import completeness_hint
from langchain_lookup_knowledge.pipeline.models import (
    ContextPack,
    EvidenceBlock,
    L0Hints,
    ScoreLabel,
)


def block(source: str, similarity: float = 0.5) -> EvidenceBlock:
    label = ScoreLabel(
        path="sdk", metric="COSINE", raw=similarity, similarity=similarity, formula="s"
    )
    return EvidenceBlock(evidence_key=f"{source}#0", source=source, content="x", score_label=label)


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
