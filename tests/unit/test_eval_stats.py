"""Paired bootstrap intervals, pooling of saved reports and evidence-decision rates."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.decision import decision_rates
from langchain_lookup_knowledge.evaluation.pool import format_pool, load_report, pool_reports
from langchain_lookup_knowledge.evaluation.queries import (
    ABLATIONS,
    ablation_overrides,
    is_held_out,
    load_questions,
)
from langchain_lookup_knowledge.evaluation.runner import RunOutput
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap, pooled_bootstrap
from langchain_lookup_knowledge.settings import LookupSettings


def test_identical_systems_have_a_zero_width_interval():
    scores = [1.0, 0.5, 0.0, 0.333, 1.0]
    interval = paired_bootstrap(scores, scores)
    assert (interval.delta, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert not interval.significant


def test_interval_brackets_the_mean_difference_and_is_seeded():
    rng = random.Random(7)
    a = [rng.random() for _ in range(40)]
    b = [rng.random() for _ in range(40)]
    interval = paired_bootstrap(a, b)
    assert interval.delta == pytest.approx(sum(a) / 40 - sum(b) / 40)
    assert interval.low < interval.delta < interval.high
    assert paired_bootstrap(a, b) == interval  # same seed, same interval
    assert paired_bootstrap(a, b, seed=1) != interval


def test_a_consistent_gain_is_significant_and_noise_is_not():
    gain = paired_bootstrap([1.0] * 25 + [0.5] * 5, [0.5] * 25 + [0.5] * 5)
    assert gain.significant
    assert gain.low > 0
    # one question better, one worse, over and over: no real difference
    noise = paired_bootstrap([1.0, 0.0] * 15, [0.0, 1.0] * 15)
    assert noise.delta == 0.0
    assert noise.low < 0 < noise.high


def test_more_questions_narrow_the_interval():
    a, b = [1.0, 0.0, 1.0, 0.5, 0.0], [0.5, 0.0, 0.0, 0.5, 1.0]
    small = paired_bootstrap(a, b)
    large = paired_bootstrap(a * 8, b * 8)
    assert large.delta == pytest.approx(small.delta)
    assert large.high - large.low < (small.high - small.low) / 2


def test_pooled_interval_resamples_within_each_set():
    one = pooled_bootstrap([([1.0, 0.0, 1.0], [0.0, 0.0, 1.0])])
    assert one == paired_bootstrap([1.0, 0.0, 1.0], [0.0, 0.0, 1.0])
    # a set where the pipeline always wins by 1 and a set where it always ties: every resample
    # keeps 10 wins among 20 questions, so the pooled interval is a point
    pooled = pooled_bootstrap([([1.0] * 10, [0.0] * 10), ([0.5] * 10, [0.5] * 10)])
    assert (pooled.delta, pooled.low, pooled.high, pooled.n) == (0.5, 0.5, 0.5, 20)
    with pytest.raises(ValueError, match="length"):
        pooled_bootstrap([([1.0], [1.0, 0.0])])


def test_decision_rates_count_found_and_level_correctness():
    run = RunOutput(
        rankings={"q1": ["a", "b"], "q2": ["x", "b"], "q3": ["c"], "q4": []},
        extra={
            "found": {"q1": True, "q2": True, "q3": True, "q4": False},
            "relevance": {"q1": "high", "q2": "high", "q3": "low", "q4": "low"},
        },
    )
    qrels = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {}, "q4": {}}
    rates = decision_rates(run, qrels)
    assert rates["in_scope_found"] == 1.0
    assert rates["out_of_scope_no_evidence"] == 0.5  # q3 was answered, q4 was not
    assert rates["levels"]["high"] == {"count": 2, "correct": 1, "correct_share": 0.5}
    assert rates["levels"]["low"] == {"count": 1, "correct": 0, "correct_share": 0.0}


def test_question_files_carry_out_of_scope_rows_and_their_kb(tmp_path: Path):
    answerable = tmp_path / "kb_dev.jsonl"
    answerable.write_text('{"q": "disk full", "rel": ["node-disk-full"]}\n', encoding="utf-8")
    outside = tmp_path / "out_of_scope_dev.jsonl"
    outside.write_text(
        '{"q": "kafka lag", "rel": [], "kb": "sample"}\n'
        '{"q": "tispark", "rel": [], "kb": "tidb_zh"}\n',
        encoding="utf-8",
    )
    qset = load_questions([answerable, outside], kb_name="sample")
    assert list(qset.queries.values()) == ["disk full", "kafka lag"]
    assert qset.in_scope == ["q1"]
    assert qset.out_of_scope == ["q2"]
    with pytest.raises(ConfigurationError, match="for kb 'nowhere'"):
        load_questions(outside, kb_name="nowhere")
    missing_rel = tmp_path / "bad.jsonl"
    missing_rel.write_text('{"q": "disk full"}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"bad\.jsonl:1"):
        load_questions(missing_rel)
    assert is_held_out([answerable, tmp_path / "x_test.jsonl"])
    assert not is_held_out([answerable, outside])


def _report(file: str, ours: list[float], **bare: list[float]) -> dict:
    per_question = {"pipeline": {"mrr@5": ours, "recall@5": ours}} | {
        name: {"mrr@5": values} for name, values in bare.items()
    }
    decision = {
        "in_scope": len(ours),
        "out_of_scope": 2,
        "in_scope_found": 1.0,
        "out_of_scope_no_evidence": 0.5,
        "levels": {"high": {"count": len(ours), "correct": 1, "correct_share": 0.0}},
    }
    return {"file": file, "per_question": per_question, "pipeline": {"decision": decision}}


def test_pool_picks_the_best_bare_per_set_and_the_best_single(tmp_path: Path):
    first = _report("a", [1.0, 1.0, 0.0], dense=[1.0, 0.0, 0.0], bm25=[1.0, 1.0, 1.0])
    second = _report("b", [1.0, 0.5], dense=[1.0, 0.5], bm25=[0.0, 0.0])
    pool = pool_reports([first, second])
    assert [s["best_bare"] for s in pool["sets"]] == ["bm25", "dense"]
    assert pool["pooled"]["configs"] == {"dense": 0.5, "bm25": 0.6}
    assert pool["pooled"]["best_single"] == "bm25"
    assert pool["pooled"]["vs_best_single"]["delta"] == pytest.approx((3.5 - 3.0) / 5)
    assert pool["pooled"]["vs_best_per_set"]["delta"] == pytest.approx((3.5 - 4.5) / 5)
    assert pool["pooled"]["sets_ahead"] == 1  # ties count as not behind
    assert pool["decision"]["out_of_scope"] == 4
    assert pool["decision"]["out_of_scope_no_evidence"] == 0.5
    saved = tmp_path / "a.json"
    saved.write_text("progress noise\n" + json.dumps(first) + "\n", encoding="utf-8")
    assert load_report(saved)["file"] == "a"
    (tmp_path / "b.json").write_text('{"x": 1}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="per-question"):
        load_report(tmp_path / "b.json")


def test_pool_of_a_variant_gives_its_difference_from_the_pipeline_beside_it():
    first = _report("a", [1.0, 0.5, 0.0], bm25=[1.0, 1.0, 1.0])
    first["variants"] = {"v": {"per_question": {"mrr@5": [1.0, 1.0, 0.0]}, "decision": {}}}
    second = _report("b", [1.0, 0.5], bm25=[0.0, 0.0])
    second["variants"] = {"v": {"per_question": {"mrr@5": [0.5, 0.5]}, "decision": {}}}
    pool = pool_reports([first, second], variant="v")
    assert pool["pooled"]["pipeline"] == pytest.approx(3.0 / 5)  # the variant in its place
    moved = pool["pooled"]["variant"]
    assert moved["name"] == "v"
    assert moved["vs_pipeline"]["delta"] == pytest.approx((3.0 - 3.0) / 5)
    assert (moved["up"], moved["down"]) == (1, 1)
    assert [(s["variant"]["up"], s["variant"]["down"]) for s in pool["sets"]] == [(1, 0), (0, 1)]
    assert pool["sets"][0]["variant"]["vs_pipeline"]["delta"] == pytest.approx(0.5 / 3, abs=1e-4)
    assert "variant v against the pipeline beside it: +0.000" in format_pool(pool)
    assert "a +1/-0, b +0/-1" in format_pool(pool)
    assert "variant" not in pool_reports([first, second])["pooled"]


def test_ablation_overrides_keep_the_users_own_weights_and_are_valid_settings():
    user = LookupSettings(rerank_weights={"l0_title": 0.2}, retrieval_mode="dense")
    assert ablation_overrides(user, "term_boosts")["rerank_weights"] == {
        "l0_title": 0.2,
        "query_term_coverage": 0.0,
        "title_term_overlap": 0.0,
    }
    assert ablation_overrides(user, "cjk_rule") == {"cjk_retrieval_mode": "dense"}
    for name in ABLATIONS:  # every switch is a setting the pipeline accepts
        LookupSettings(**ablation_overrides(LookupSettings(), name))
    with pytest.raises(ConfigurationError, match="unknown ablation"):
        ablation_overrides(user, "everything")


def test_rank_mix_ablation_leaves_the_dense_similarity_alone_under_a_bm25_share():
    # similarity_share 1.0 beside the user's bm25_share would be an invalid mix (sum above 1)
    user = LookupSettings(rerank_weights={"similarity_share": 0.7, "bm25_share": 0.2})
    weights = ablation_overrides(user, "rank_mix")["rerank_weights"]
    assert weights == {"similarity_share": 1.0, "bm25_share": 0.0}
    assert RerankWeights.from_overrides(weights).bm25_share == 0.0
