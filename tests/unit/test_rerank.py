"""Rule rerank: every boost explained, boosts sum to final - base, deterministic order."""

from __future__ import annotations

import random

import pytest

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.l0 import L0Match, L0Matcher
from langchain_lookup_knowledge.pipeline.models import Candidate, L0Hints, ScoreLabel
from langchain_lookup_knowledge.pipeline.rerank import RerankWeights, query_terms, rerank

NODE = CatalogEntry(
    source="kubernetes/node.md",
    title="Kubernetes node NotReady",
    category="kubernetes",
    keywords=("node down",),
    aliases=("KubeNodeNotReady",),
    entities=("kubelet",),
)


def candidate(
    key: str,
    similarity: float,
    *,
    title: str = "",
    breadcrumb: str = "",
    content: str = "",
    category: str = "",
    path: str = "sdk",
    attempt: str = "",
) -> Candidate:
    label = ScoreLabel(
        path=path, metric="COSINE", raw=2 * similarity - 1, similarity=similarity, formula="(s+1)/2"
    )
    return Candidate(
        evidence_key=key,
        source=key.split("#")[0],
        title=title,
        breadcrumb=breadcrumb,
        category=category,
        content=content or "text",
        rank=1,
        score_label=label,
        attempt=attempt,
    )


def test_first_reason_is_l1_similarity_with_base_as_contribution() -> None:
    [scored] = rerank([candidate("a.md#3", 0.61, attempt="filtered")], "anything", None)
    first = scored.reasons[0]
    assert first.kind == "l1_similarity"
    assert first.contribution == scored.base == pytest.approx(0.61)
    assert first.detail == "sdk COSINE raw=0.2200 attempt=filtered"
    assert first.path == "sdk"


def test_every_boost_is_recorded_and_boosts_sum_to_final_minus_base() -> None:
    l0 = L0Matcher([NODE]).match("KubeNodeNotReady: kubernetes node NotReady, node down, kubelet")
    hit = candidate(
        "kubernetes/node.md#0",
        0.5,
        title=NODE.title,
        breadcrumb="Kubernetes node NotReady > Fix",
        category="kubernetes",
        content="Restart the kubelet when the node is down.",
    )
    [scored] = rerank([hit], "kubernetes node NotReady node down kubelet", l0)
    kinds = [r.kind for r in scored.reasons]
    assert kinds == [
        "l1_similarity",
        "l0_title",
        "l0_keyword",
        "l0_alias",
        "l0_entity",
        "l0_domain",
        "query_term_coverage",
        "title_term_overlap",
        "first_chunk",
    ]
    weights = RerankWeights()
    by_kind = {r.kind: r.contribution for r in scored.reasons}
    assert by_kind["l0_title"] == weights.l0_title
    assert by_kind["l0_alias"] == weights.l0_alias
    assert by_kind["first_chunk"] == weights.first_chunk
    assert 0 < by_kind["query_term_coverage"] <= weights.query_term_coverage
    assert scored.final - scored.base == pytest.approx(sum(c for c in list(by_kind.values())[1:]))
    assert all(r.detail for r in scored.reasons)


def test_l0_match_lifts_candidate_over_slightly_closer_one() -> None:
    l0 = L0Matcher([NODE]).match("KubeNodeNotReady fired")
    other = candidate("kubernetes/disk.md#2", 0.60)
    matched = candidate("kubernetes/node.md#2", 0.57)
    ranked = rerank([other, matched], "KubeNodeNotReady fired", l0)
    assert [s.evidence_key for s in ranked] == ["kubernetes/node.md#2", "kubernetes/disk.md#2"]


def test_without_l0_there_are_no_l0_reasons() -> None:
    [scored] = rerank(
        [candidate("kubernetes/node.md#1", 0.5, category="kubernetes")], "node down", None
    )
    assert not [r for r in scored.reasons if r.kind.startswith("l0_")]


def test_ties_break_by_base_then_evidence_key_deterministically() -> None:
    weights = RerankWeights(first_chunk=0.0, query_term_coverage=0.0, title_term_overlap=0.0)
    hits = [
        candidate("b.md#1", 0.5),
        candidate("a.md#1", 0.5),
        candidate("c.md#1", 0.7),
        candidate("a.md#2", 0.5),
    ]
    orders = set()
    for seed in range(5):
        shuffled = hits[:]
        random.Random(seed).shuffle(shuffled)
        orders.add(tuple(s.evidence_key for s in rerank(shuffled, "q", None, weights=weights)))
    assert orders == {("c.md#1", "a.md#1", "a.md#2", "b.md#1")}


def test_equal_final_prefers_higher_base() -> None:
    boosted = candidate("a.md#0", 0.25)  # + first_chunk 0.25: exactly 0.5 in binary
    plain = candidate("b.md#1", 0.5)
    weights = RerankWeights(query_term_coverage=0.0, title_term_overlap=0.0, first_chunk=0.25)
    ranked = rerank([boosted, plain], "q", None, weights=weights)
    assert ranked[0].final == ranked[1].final
    assert ranked[0].evidence_key == "b.md#1"


def test_zero_weights_record_no_boosts() -> None:
    zero = RerankWeights(**{name: 0.0 for name in RerankWeights.__dataclass_fields__})
    l0 = L0Matcher([NODE]).match("KubeNodeNotReady")
    [scored] = rerank(
        [candidate("kubernetes/node.md#0", 0.4, title=NODE.title)],
        "KubeNodeNotReady",
        l0,
        weights=zero,
    )
    assert [r.kind for r in scored.reasons] == ["l1_similarity"]
    assert scored.final == scored.base


def test_negative_weight_is_rejected_with_its_value() -> None:
    with pytest.raises(ValueError, match=r"l0_title.*-0.1"):
        RerankWeights(l0_title=-0.1)


def test_query_terms_drop_stopwords_and_split_cjk_into_bigrams() -> None:
    assert query_terms("How do I fix the Pods?") == ["fix", "pod"]
    assert query_terms("节点磁盘满了") == ["节点", "点磁", "磁盘", "盘满"]


def test_cjk_query_terms_count_towards_coverage() -> None:
    hit = candidate("zh/disk.md#1", 0.5, content="节点磁盘使用率过高")
    [scored] = rerank([hit], "节点磁盘", None)
    coverage = next(r for r in scored.reasons if r.kind == "query_term_coverage")
    assert coverage.contribution == pytest.approx(RerankWeights().query_term_coverage)


# --- the base of fused and BM25 hits (evaluation-tuned) ------------------------------------


def fused(
    key: str, similarity: float, rank_score: float, *, kind: str = "hybrid", attempt: str = ""
) -> Candidate:
    """A hybrid (or BM25) hit: its rank in the fused list and its dense cosine."""
    label = ScoreLabel(
        path="sdk",
        metric="RRF" if kind == "hybrid" else "BM25",
        raw=0.1,
        similarity=similarity,
        formula="",
        kind=kind,
        rank_score=rank_score,
    )
    return Candidate(
        evidence_key=key,
        source=key.split("#")[0],
        content="x",
        rank=1,
        score_label=label,
        attempt=attempt,
    )


def test_hybrid_base_mixes_similarity_and_fused_rank() -> None:
    # top of both lists but a modest cosine beats a better cosine found by one list only
    both = fused("a.md#0", similarity=0.55, rank_score=1.0)
    dense_only = fused("b.md#0", similarity=0.65, rank_score=0.5)
    scored = rerank([dense_only, both], "zzz", None, weights=RerankWeights(first_chunk=0))
    assert [s.evidence_key for s in scored] == ["a.md#0", "b.md#0"]
    assert scored[0].base == pytest.approx(0.5 * 0.55 + 0.5 * 1.0)
    assert "rank_score" in scored[0].reasons[0].detail


def test_bm25_hit_ranks_by_its_bm25_rank_only() -> None:
    [scored] = rerank([fused("a.md#0", similarity=0.1, rank_score=0.9, kind="sparse")], "zzz", None)
    assert scored.base == pytest.approx(0.9)


def test_rank_of_a_superseded_filtered_attempt_is_not_compared() -> None:
    # rank 1 within the filtered category vs rank 3 of the whole collection (the retry)
    filtered = fused("node/x.md#0", similarity=0.45, rank_score=1.0, attempt="filtered")
    retry = fused("k8s/y.md#0", similarity=0.60, rank_score=0.8, attempt="unfiltered_retry")
    scored = rerank(
        [filtered, retry],
        "zzz",
        None,
        weights=RerankWeights(first_chunk=0),
        ranks_of="unfiltered_retry",
    )
    assert [s.evidence_key for s in scored] == ["k8s/y.md#0", "node/x.md#0"]
    assert scored[1].base == pytest.approx(0.45)  # its similarity only
    assert "superseded" in scored[1].reasons[0].detail


def test_without_ranks_of_every_rank_counts() -> None:
    # rerank no longer guesses the attempt of record from the candidates' order
    filtered = fused("node/x.md#0", similarity=0.45, rank_score=1.0, attempt="filtered")
    retry = fused("k8s/y.md#0", similarity=0.60, rank_score=0.8, attempt="unfiltered_retry")
    scored = rerank([filtered, retry], "zzz", None, weights=RerankWeights(first_chunk=0))
    assert all("superseded" not in s.reasons[0].detail for s in scored)


# --- after the router judged the filtered attempt unreliable ------------------------------


def _storage_l0() -> L0Match:
    """An L0 match naming the single domain ``storage`` (the filtered attempt's category)."""
    return L0Match(hints=L0Hints(domains=["storage"]))


def _in_category(candidate: Candidate, category: str) -> Candidate:
    return candidate.model_copy(update={"category": category})


def test_a_distrusted_filtered_attempt_ranks_after_the_retry_and_loses_its_domain_boost() -> None:
    # rank 1 within its category and a better cosine, but the router retried without the filter
    filtered = _in_category(
        fused("storage/a.md#1", similarity=0.80, rank_score=1.0, attempt="filtered"), "storage"
    )
    retry = _in_category(
        fused("net/b.md#1", similarity=0.55, rank_score=0.9, attempt="unfiltered_retry"), "net"
    )
    weights = RerankWeights(first_chunk=0)
    trusting = rerank(
        [filtered, retry], "zzz", _storage_l0(), weights=weights, ranks_of="unfiltered_retry"
    )
    assert trusting[0].evidence_key == "storage/a.md#1"  # what the guard is for
    assert "l0_domain" in [r.kind for r in trusting[0].reasons]

    guarded = rerank(
        [filtered, retry],
        "zzz",
        _storage_l0(),
        weights=weights,
        ranks_of="unfiltered_retry",
        distrust_superseded=True,
    )
    assert [s.evidence_key for s in guarded] == ["net/b.md#1", "storage/a.md#1"]
    assert [s.superseded for s in guarded] == [False, True]
    assert all(r.kind != "l0_domain" for s in guarded for r in s.reasons)
    # the scores still explain themselves: only the order tier changed
    assert guarded[1].final == pytest.approx(sum(r.contribution for r in guarded[1].reasons))


def test_a_distrusted_retry_keeps_the_domain_boost_of_no_one() -> None:
    retry = _in_category(
        fused("storage/c.md#0", similarity=0.6, rank_score=0.9, attempt="unfiltered_retry"),
        "storage",
    )
    [scored] = rerank(
        [retry], "zzz", _storage_l0(), ranks_of="unfiltered_retry", distrust_superseded=True
    )
    assert "l0_domain" not in [r.kind for r in scored.reasons]
    [plain] = rerank([retry], "zzz", _storage_l0(), ranks_of="unfiltered")
    assert "l0_domain" in [r.kind for r in plain.reasons]  # no retry: the domain still counts


def test_a_chunk_both_attempts_found_is_scored_as_the_retry_found_it() -> None:
    from langchain_lookup_knowledge.pipeline.evidence import build_evidence_blocks

    filtered = fused("storage/a.md#1", similarity=0.70, rank_score=1.0, attempt="filtered")
    retry = fused("storage/a.md#1", similarity=0.70, rank_score=0.4, attempt="unfiltered_retry")
    scored = rerank(
        [filtered, retry], "zzz", None, ranks_of="unfiltered_retry", distrust_superseded=True
    )
    selection = build_evidence_blocks(
        scored, top_k=5, per_document_cap=2, min_similarity=0.2, l0_participated=False
    )
    [block] = selection.blocks
    assert block.hit_reasons[0].detail.endswith("attempt=unfiltered_retry")
    assert selection.contributing_attempts == ["unfiltered_retry"]


def test_stemmed_term_match_finds_a_word_inside_an_alert_name() -> None:
    hit = candidate("k/crash.md#1", 0.5, title="KubePodCrashLooping", content="Pods restart often.")
    query = "pod keeps crashing and restarting"
    plain = rerank([hit], query, None, weights=RerankWeights(term_stems=0))[0]
    stemmed = rerank([hit], query, None, weights=RerankWeights(term_stems=1))[0]
    coverage = {r.kind: r.detail for r in stemmed.reasons}["query_term_coverage"]
    assert plain.terms_found == 1  # "pod" ("pods" singular), not "crashing" nor "restarting"
    # "crashing" is a part of the alert name; "restarting" is no identifier part: prose words
    # keep their whole-word match
    assert stemmed.terms_found == 2
    assert "crashing" in coverage
    assert "restarting" not in coverage
    title = {r.kind: r.detail for r in stemmed.reasons}["title_term_overlap"]
    assert title.startswith("2/4 in title/breadcrumb: pod, crashing")
    assert stemmed.final > plain.final


def test_term_idf_weighs_a_term_few_candidates_hold_over_one_all_hold() -> None:
    # both cover 2 of the 3 terms; "statefulset" is in one candidate, "pod" and "stuck" in most
    rare = candidate("k/sts.md#1", 0.5, content="statefulset pod")
    common = [candidate(f"k/d{i}.md#1", 0.5, content="pod stuck") for i in range(3)]
    query = "statefulset pod stuck"
    plain = {s.evidence_key: s.final for s in rerank([rare, *common], query, None)}
    weights = RerankWeights(term_idf=1)
    weighted = {
        s.evidence_key: s.final for s in rerank([rare, *common], query, None, weights=weights)
    }
    assert plain["k/sts.md#1"] == pytest.approx(plain["k/d0.md#1"])
    assert weighted["k/sts.md#1"] > weighted["k/d0.md#1"]
    [scored] = rerank([rare], query, None, weights=weights)
    assert scored.final - scored.base == pytest.approx(
        sum(r.contribution for r in scored.reasons[1:])
    )


def test_term_idf_above_one_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"term_idf must be within 0\.\.1, got 1\.5"):
        RerankWeights(term_idf=1.5)


# --- the BM25 score in the base (bm25_share, the convex combination) ------------------------


def with_bm25(candidate: Candidate, lexical_score: float | None) -> Candidate:
    label = candidate.score_label.model_copy(update={"lexical_score": lexical_score})
    return candidate.model_copy(update={"score_label": label})


def test_bm25_share_lets_the_better_bm25_match_outrank_the_better_fused_rank() -> None:
    # fused rank 1 on a weak BM25 match vs fused rank 3 on the best BM25 match, same cosine
    top_rank = with_bm25(fused("a.md#0", similarity=0.6, rank_score=1.0), 0.2)
    best_bm25 = with_bm25(fused("b.md#0", similarity=0.6, rank_score=0.6), 1.0)
    off = rerank([top_rank, best_bm25], "zzz", None, weights=RerankWeights(first_chunk=0))
    assert [s.evidence_key for s in off] == ["a.md#0", "b.md#0"]
    weights = RerankWeights(similarity_share=0.7, bm25_share=0.2, first_chunk=0)
    on = rerank([top_rank, best_bm25], "zzz", None, weights=weights)
    assert [s.evidence_key for s in on] == ["b.md#0", "a.md#0"]
    assert on[0].base == pytest.approx(0.7 * 0.6 + 0.2 * 1.0 + 0.1 * 0.6)
    assert "0.2*bm25(1.0000)" in on[0].reasons[0].detail
    assert "0.1*rank_score(0.6000)" in on[0].reasons[0].detail


def test_bm25_share_needs_the_hits_bm25_score() -> None:
    # a hit without a lexical_score (its path did not ask the store) keeps the fused-rank base
    weights = RerankWeights(similarity_share=0.7, bm25_share=0.2)
    hit = fused("a.md#0", similarity=0.6, rank_score=0.5)
    [scored] = rerank([hit], "zzz", None, weights=weights)
    assert scored.base == pytest.approx(0.7 * 0.6 + 0.3 * 0.5)
    assert "bm25" not in scored.reasons[0].detail


def test_bm25_share_leaves_bm25_hits_and_superseded_ranks_alone() -> None:
    weights = RerankWeights(similarity_share=0.7, bm25_share=0.2)
    sparse = with_bm25(fused("a.md#0", similarity=0.1, rank_score=0.9, kind="sparse"), 0.3)
    [scored] = rerank([sparse], "zzz", None, weights=weights)
    assert scored.base == pytest.approx(0.9)
    filtered = with_bm25(fused("b.md#0", similarity=0.45, rank_score=1.0, attempt="f"), 1.0)
    [scored] = rerank([filtered], "zzz", None, weights=weights, ranks_of="unfiltered_retry")
    assert scored.base == pytest.approx(0.45)


def test_bm25_share_and_similarity_share_leave_the_fused_rank_at_least_zero() -> None:
    with pytest.raises(ValueError, match=r"similarity_share \+ bm25_share must be at most 1"):
        RerankWeights(similarity_share=0.9, bm25_share=0.2)
    assert RerankWeights.from_overrides({"similarity_share": 0.75, "bm25_share": 0.25}).bm25_share


def test_weights_of_the_settings_are_made_once_and_checked_like_the_overrides():
    weights = RerankWeights.of({"first_chunk": 0.02, "l0_title": 0.1})
    assert weights is RerankWeights.of({"l0_title": 0.1, "first_chunk": 0.02})
    assert weights == RerankWeights.from_overrides({"first_chunk": 0.02, "l0_title": 0.1})
    assert RerankWeights.of({}) is RerankWeights.of({}) == RerankWeights()
    with pytest.raises(ValueError, match="unknown rerank weight"):
        RerankWeights.of({"no_such_weight": 0.1})
    with pytest.raises(ValueError, match="finite number"):
        RerankWeights.of({"first_chunk": -1.0})
