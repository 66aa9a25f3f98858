"""Evidence blocks: dedup by evidenceKey only, merged hit reasons, floors, caps and counts."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection, build_evidence_blocks
from langchain_lookup_knowledge.pipeline.l0 import L0Matcher
from langchain_lookup_knowledge.pipeline.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.pipeline.rerank import ScoredCandidate, rerank


def candidate(key: str, similarity: float, *, path: str = "sdk", attempt: str = "") -> Candidate:
    label = ScoreLabel(
        path=path, metric="COSINE", raw=similarity, similarity=similarity, formula="s"
    )
    return Candidate(
        evidence_key=key,
        source=key.split("#")[0],
        content=f"content of {key}",
        rank=1,
        score_label=label,
        attempt=attempt,
        category="kubernetes",
    )


def select(
    scored: list[ScoredCandidate],
    *,
    top_k: int = 5,
    per_document_cap: int = 2,
    min_similarity: float = 0.3,
    l0_participated: bool = False,
) -> EvidenceSelection:
    return build_evidence_blocks(
        scored,
        top_k=top_k,
        per_document_cap=per_document_cap,
        min_similarity=min_similarity,
        l0_participated=l0_participated,
    )


def test_same_evidence_key_collapses_to_the_best_candidate_and_its_reasons() -> None:
    filtered = candidate("k8s/node.md#1", 0.55, path="vectorstore", attempt="filtered")
    retry = candidate("k8s/node.md#1", 0.60, path="sdk", attempt="unfiltered_retry")
    scored = rerank([filtered], "q", None) + rerank([retry], "q", None)
    selection = select(scored)
    assert selection.candidate_count == 2
    assert selection.deduplicated_count == selection.final_count == 1
    [block] = selection.blocks
    assert block.score == max(s.final for s in scored)
    assert block.score_label == retry.score_label
    # only the best candidate's reasons: one l1_similarity, and they add up to the score
    similarity = [r for r in block.hit_reasons if r.kind == "l1_similarity"]
    assert [r.path for r in similarity] == ["sdk"]
    assert "attempt=unfiltered_retry" in similarity[0].detail
    assert sum(r.contribution for r in block.hit_reasons) == pytest.approx(block.score)
    assert selection.contributing_attempts == ["unfiltered_retry"]


def test_identical_reasons_from_both_paths_are_kept_once() -> None:
    hit = candidate("k8s/node.md#0", 0.5)
    selection = select(rerank([hit, hit], "q", None))
    [block] = selection.blocks
    assert [r.kind for r in block.hit_reasons] == ["l1_similarity", "first_chunk"]


def test_same_source_different_chunks_stay_separate() -> None:
    scored = rerank([candidate("k8s/node.md#1", 0.6), candidate("k8s/node.md#2", 0.5)], "q", None)
    selection = select(scored)
    assert [b.evidence_key for b in selection.blocks] == ["k8s/node.md#1", "k8s/node.md#2"]
    assert selection.deduplicated_count == 2


def test_per_document_cap_limits_blocks_of_one_source() -> None:
    hits = [candidate(f"k8s/node.md#{i}", 0.9 - i / 100) for i in range(1, 5)]
    hits.append(candidate("k8s/disk.md#1", 0.4))
    selection = select(rerank(hits, "q", None), per_document_cap=2)
    assert [b.evidence_key for b in selection.blocks] == [
        "k8s/node.md#1",
        "k8s/node.md#2",
        "k8s/disk.md#1",
    ]
    assert selection.dropped_by_cap == 2
    # the two the cap left out stay beside the blocks, best first, for small-to-big
    assert [b.evidence_key for b in selection.also_matched] == ["k8s/node.md#3", "k8s/node.md#4"]
    assert selection.also_matched[0].score > selection.also_matched[1].score


def test_also_matched_holds_only_documents_that_have_a_block() -> None:
    hits = [candidate("a.md#1", 0.9), candidate("a.md#2", 0.85)]
    hits += [candidate("b.md#1", 0.8), candidate("b.md#2", 0.75)]
    selection = select(rerank(hits, "q", None), per_document_cap=1, top_k=1)
    assert [b.evidence_key for b in selection.blocks] == ["a.md#1"]
    assert [b.evidence_key for b in selection.also_matched] == ["a.md#2"]  # b.md is not shown


def test_low_similarity_candidates_are_not_evidence() -> None:
    selection = select(rerank([candidate("a.md#1", 0.29), candidate("b.md#1", 0.31)], "q", None))
    assert [b.source for b in selection.blocks] == ["b.md"]
    assert selection.dropped_low_similarity == 1


def test_top_k_keeps_the_best_blocks() -> None:
    hits = [candidate(f"doc{i}.md#1", 0.5 + i / 100) for i in range(6)]
    selection = select(rerank(hits, "q", None), top_k=3)
    assert [b.source for b in selection.blocks] == ["doc5.md", "doc4.md", "doc3.md"]
    assert selection.dropped_by_top_k == 3
    assert selection.final_count == 3
    assert [e.rank for e in selection.rerank_trace] == [1, 2, 3]


def test_retrieval_layer_is_l0_plus_l1_only_for_blocks_with_l0_reasons() -> None:
    entry = CatalogEntry(
        source="k8s/node.md", title="Node NotReady", category="", aliases=("KubeNodeNotReady",)
    )
    l0 = L0Matcher([entry]).match("KubeNodeNotReady")
    scored = rerank(
        [candidate("k8s/node.md#1", 0.5), candidate("k8s/disk.md#1", 0.5)], "KubeNodeNotReady", l0
    )
    layers = {b.source: b.retrieval_layer for b in select(scored, l0_participated=True).blocks}
    assert layers == {"k8s/node.md": "L0+L1", "k8s/disk.md": "L1"}
    assert {b.retrieval_layer for b in select(scored, l0_participated=False).blocks} == {"L1"}


def test_rerank_trace_lists_boosts_without_the_similarity_reason() -> None:
    selection = select(rerank([candidate("a.md#0", 0.5)], "q", None))
    [entry] = selection.rerank_trace
    assert (entry.rank, entry.evidence_key, entry.source) == (1, "a.md#0", "a.md")
    assert entry.base_score == 0.5
    assert [b.kind for b in entry.boosts] == ["first_chunk"]
    assert entry.final_score == selection.blocks[0].score


def test_counts_of_an_empty_input_are_zero() -> None:
    assert set(select([]).counts().values()) == {0}


@pytest.mark.parametrize("field", ["top_k", "per_document_cap"])
def test_limits_below_one_are_rejected(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        select([], **{field: 0})  # type: ignore[arg-type]


def bm25_hit(key: str, content: str, similarity: float = 0.4) -> Candidate:
    """A hit of BM25 alone (sparse mode), as a Chinese question under the English-only
    embedder gets: its similarity is the embedder's (unreliable) cosine."""
    label = ScoreLabel(
        path="sdk",
        metric="BM25",
        raw=3.2,
        similarity=similarity,
        formula="rank",
        kind="sparse",
        rank_score=1.0,
    )
    return Candidate(
        evidence_key=key, source=key.split("#")[0], content=content, rank=1, score_label=label
    )


def test_bm25_only_hits_need_a_term_of_the_question() -> None:
    """BM25 matched the particle 的 alone: no significant term of the question, no evidence;
    a hit that shares a term stays, and dense hits are judged by their similarity only."""
    question = "巧克力蛋糕的做法"
    particle_only = bm25_hit("k8s/api.md#1", "检查 API 的错误预算消耗")
    on_topic = bm25_hit("food/cake.md#0", "蛋糕的做法：先把巧克力融化")
    dense = candidate("k8s/node.md#0", 0.5)  # no term of the question, but dense-judged
    selection = select(rerank([particle_only, on_topic, dense], question, None))
    assert [b.evidence_key for b in selection.blocks] == ["food/cake.md#0", "k8s/node.md#0"]
    assert selection.dropped_without_query_terms == 1
    assert selection.counts()["dropped_without_query_terms"] == 1
    assert select(rerank([particle_only], question, None)).blocks == []
