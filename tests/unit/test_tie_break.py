"""The sibling tie-break: near-tied documents of one family ordered by the question terms only
one of their names holds; explained, bounded by the margin, off by default."""

from __future__ import annotations

import json
import re

import pytest

from langchain_lookup_knowledge.pipeline.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.pipeline.rerank import RerankWeights, rerank
from langchain_lookup_knowledge.pipeline.tie_break import profile_terms, siblings
from langchain_lookup_knowledge.records.privacy import QueryTextPolicy

QUESTION = "autoscaler sits at max replicas for a long time"


def hit(name: str, similarity: float, rank_score: float) -> Candidate:
    label = ScoreLabel(
        path="sdk",
        metric="RRF",
        raw=0.03,
        similarity=similarity,
        formula="",
        kind="hybrid",
        rank_score=rank_score,
    )
    return Candidate(
        evidence_key=f"kubernetes/{name}.md#1",
        source=f"kubernetes/{name}.md",
        title=name,
        content="The horizontal pod autoscaler.",
        rank=1,
        score_label=label,
    )


def family() -> list[Candidate]:
    # ReplicasMismatch first by 0.01 in the base; "replica" is in two documents, "max" in one
    return [
        hit("KubeHpaReplicasMismatch", 0.75, 0.75),
        hit("KubeHpaMaxedOut", 0.74, 0.74),
        hit("KubeDeploymentReplicasMismatch", 0.60, 0.50),
    ]


def order(margin: float, candidates: list[Candidate] | None = None) -> list[str]:
    weights = RerankWeights(tie_break_margin=margin)
    scored = rerank(candidates or family(), QUESTION, None, weights=weights)
    return [s.candidate.source.split("/")[-1].removesuffix(".md") for s in scored]


def test_off_by_default_the_base_decides() -> None:
    assert RerankWeights().tie_break_margin == 0
    assert order(0.0)[:2] == ["KubeHpaReplicasMismatch", "KubeHpaMaxedOut"]


def test_the_rarer_distinct_term_lifts_the_sibling_just_above_and_says_why() -> None:
    weights = RerankWeights(tie_break_margin=0.015)
    scored = rerank(family(), QUESTION, None, weights=weights)
    first, second = scored[0], scored[1]
    assert first.candidate.title == "KubeHpaMaxedOut"
    assert second.candidate.title == "KubeHpaReplicasMismatch"
    [reason] = [r for r in first.reasons if r.kind == "sibling_tie_break"]
    assert "max (" in reason.detail
    assert "replica (" in reason.detail
    assert "KubeHpaReplicasMismatch" in reason.detail
    assert first.final == pytest.approx(second.final + 1e-4)  # just above, no further
    assert first.final == pytest.approx(first.base + sum(r.contribution for r in first.reasons[1:]))
    assert not any(r.kind == "sibling_tie_break" for s in scored[1:] for r in s.reasons)


def test_bases_further_apart_than_the_margin_keep_their_order() -> None:
    assert order(0.005)[:2] == ["KubeHpaReplicasMismatch", "KubeHpaMaxedOut"]


def test_documents_of_different_families_are_not_tie_broken() -> None:
    unrelated = [hit("TargetDown", 0.75, 0.75), hit("KubeHpaMaxedOut", 0.74, 0.74)]
    assert not siblings("TargetDown", "KubeHpaMaxedOut")
    assert order(0.015, unrelated) == ["TargetDown", "KubeHpaMaxedOut"]


def test_profile_terms_read_identifier_parts_and_stems() -> None:
    assert profile_terms(["max", "replica", "pod"], frozenset(), "KubeHpaMaxedOut") == ["max"]
    assert profile_terms(["crashing"], frozenset(), "KubePodCrashLooping") == ["crashing"]
    assert profile_terms(["磁盘"], frozenset({"磁盘"}), "节点磁盘满") == ["磁盘"]


def test_hashed_records_keep_no_question_word_of_a_tie_break_note() -> None:
    weights = RerankWeights(tie_break_margin=0.015)
    scored = rerank(family(), QUESTION, None, weights=weights)
    notes = [b.detail for s in scored for b in s.reasons if b.kind == "sibling_tie_break"]
    assert notes, "the family's near-tie is broken (the precondition)"
    assert "max" in notes[0]  # the question term only the lifted sibling names
    details = {
        "rerank_trace": [
            {"boosts": [{"kind": b.kind, "detail": b.detail} for b in s.reasons]} for s in scored
        ],
        "evidence_blocks": [
            {
                "source": s.candidate.source,
                "title": s.candidate.title,
                "hit_reasons": [f"{b.kind}: {b.detail}" for b in s.reasons],
            }
            for s in scored
        ],
    }
    for mode in ("hash", "none"):
        _, kept = QueryTextPolicy(mode).apply(QUESTION, details)
        texts = json.dumps(
            [kept["rerank_trace"], [b["hit_reasons"] for b in kept["evidence_blocks"]]]
        )
        for word in ("max", "replica", "autoscaler"):
            assert not re.search(rf"\b{word}", texts, re.IGNORECASE), (word, texts)
        assert "near-tie with sibling" in texts  # the note stays, without the question
        # the knowledge base's own text stays whole
        assert kept["evidence_blocks"][0]["title"] == details["evidence_blocks"][0]["title"]
