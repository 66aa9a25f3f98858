"""``eval queries`` end to end on the sample knowledge base: every bare configuration in the same
run with its interval, out-of-scope questions as the evidence decision, ablations, blind
held-out files, and ``eval pool`` over saved reports. Real Milvus Lite, the real embedder."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge.cli import main
from tests.conftest import SAMPLE_KB

QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"
OUT_OF_SCOPE = [
    {"q": "recipe for chocolate cake", "rel": [], "kb": "sample"},
    {"q": "巧克力蛋糕的做法", "rel": [], "kb": "sample"},
    {"q": "how do I rotate kafka consumer offsets", "rel": [], "kb": "other"},
]


def run(argv: list[str]) -> tuple[dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--json", "--no-progress"])
    assert code == 0, err.getvalue()
    text = out.getvalue()
    return json.loads(text.strip().splitlines()[-1]), text


@pytest.fixture(scope="module")
def out_of_scope(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("oos") / "out_of_scope_dev.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in OUT_OF_SCOPE) + "\n", encoding="utf-8")
    return path


def store_args(settings) -> list[str]:
    return ["--uri", str(settings.milvus_uri), "--collection", settings.collection]


def test_every_bare_configuration_and_the_evidence_decision(sample_kb_store, out_of_scope: Path):
    report, _ = run(
        [
            "eval",
            "queries",
            str(QUESTIONS),
            str(out_of_scope),
            "--kb-name",
            "sample",
            "--kb",
            str(SAMPLE_KB),
            *store_args(sample_kb_store),
        ]
    )
    assert (report["in_scope"], report["out_of_scope"]) == (12, 2)  # the "other" row is left out
    assert set(report["baselines"]) == {"dense", "bm25", "hybrid", "hybrid_fetch50"}
    ours = report["per_question"]["pipeline"]["mrr@5"]
    assert len(ours) == 12
    for name, bare in report["baselines"].items():
        theirs = report["per_question"][name]["mrr@5"]
        interval = bare["vs_pipeline"]["mrr@5"]
        assert interval["delta"] == pytest.approx((sum(ours) - sum(theirs)) / 12, abs=1e-4)
        assert interval["low"] <= interval["delta"] <= interval["high"]
        assert bare["mrr@5"] == pytest.approx(sum(theirs) / 12, abs=1e-4)
    # langchain-milvus's default fetch_k (4 per list) caps a hybrid ranking at 8 chunks
    assert report["baselines"]["hybrid"]["fetch_k"] is None
    assert report["baselines"]["hybrid_fetch50"]["fetch_k"] == 50
    decision = report["pipeline"]["decision"]
    assert decision["in_scope_found"] == 1.0
    signals = {s["id"]: s for s in report["signals"]}
    assert signals["q1"]["in_scope"]
    assert signals["q1"]["similarity"] > 0.3
    assert not signals["q13"]["in_scope"]
    # signals exist where evidence was handed out: they and the rates tell the same story
    answered_outside = [q for q in ("q13", "q14") if "similarity" in signals[q]]
    assert decision["out_of_scope_no_evidence"] == 1 - len(answered_outside) / 2
    answered = sum(v["count"] for v in decision["levels"].values())
    assert answered == 12 + len(answered_outside)


def test_bare_runs_only_the_wirings_named(sample_kb_store):
    report, _ = run(
        [
            "eval",
            "queries",
            str(QUESTIONS),
            "--kb",
            str(SAMPLE_KB),
            "--bare",
            "bm25",
            *store_args(sample_kb_store),
        ]
    )
    assert set(report["baselines"]) == {"bm25"}
    assert report["baselines"]["bm25"]["analyzer"] == "standard"  # the mixed sample KB
    assert set(report["per_question"]) == {"pipeline", "bm25"}
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["eval", "queries", str(QUESTIONS), "--kb", str(SAMPLE_KB), "--bare",
                     "bm42", *store_args(sample_kb_store)])  # fmt: skip
    assert code != 0
    assert "unknown bare wiring 'bm42'" in err.getvalue()


def test_bare_uri_keeps_the_bare_collections_in_another_milvus(sample_kb_store, tmp_path: Path):
    from pymilvus import MilvusClient

    bare_db = tmp_path / "bare.db"
    argv = ["eval", "queries", str(QUESTIONS), "--kb", str(SAMPLE_KB), "--bare", "bm25"]
    report, _ = run([*argv, "--bare-uri", str(bare_db), *store_args(sample_kb_store)])
    collection = report["baselines"]["bm25"]["collection"]
    assert report["baselines"]["bm25"]["cached"] is False
    client = MilvusClient(str(bare_db))
    try:
        assert collection in client.list_collections()
    finally:
        client.close()
    again, _ = run([*argv, "--bare-uri", str(bare_db), *store_args(sample_kb_store)])
    assert again["baselines"]["bm25"]["cached"] is True  # reused from the other Milvus
    assert again["per_question"]["bm25"] == report["per_question"]["bm25"]


def test_ablations_report_what_each_component_adds(sample_kb_store):
    report, _ = run(
        [
            "eval",
            "queries",
            str(QUESTIONS),
            "--ablate",
            "term_boosts,doc_cap,cjk_rule",
            *store_args(sample_kb_store),
        ]
    )
    ablations = report["ablations"]
    assert set(ablations) == {"term_boosts", "doc_cap", "cjk_rule"}  # a Chinese question is in
    ours = report["per_question"]["pipeline"]["mrr@5"]
    for ablation in ablations.values():
        gain = ablation["gain"]["mrr@5"]
        assert gain["delta"] == pytest.approx(report["mrr@5"] - ablation["mrr@5"], abs=1e-3)
        assert gain["n"] == len(ours)
    # without the per-document cap, the two best chunks of one runbook fill more of the top 10
    assert ablations["doc_cap"]["recall@10"] <= report["recall@10"]
    assert all(a["decision"]["in_scope"] == 12 for a in ablations.values())


def test_a_held_out_file_is_scored_blind_and_reports_pool(
    sample_kb_store, tmp_path: Path, out_of_scope: Path
):
    held_out = tmp_path / "sample_test.jsonl"
    held_out.write_text(QUESTIONS.read_text(encoding="utf-8"), encoding="utf-8")
    report, _ = run(
        ["eval", "queries", str(held_out), "--kb", str(SAMPLE_KB), *store_args(sample_kb_store)]
    )
    assert report["blind"] is True
    dumped = json.dumps(report, ensure_ascii=False)
    for row in QUESTIONS.read_text(encoding="utf-8").splitlines():
        assert json.loads(row)["q"] not in dumped
    assert "signals" not in report
    assert isinstance(report["pipeline"]["misses@5"], int)

    saved = []
    for name, report_argv in (
        ("a.json", [str(held_out)]),
        ("b.json", [str(QUESTIONS), str(out_of_scope), "--kb-name", "sample"]),
    ):
        _, out = run(
            ["eval", "queries", *report_argv, "--kb", str(SAMPLE_KB), *store_args(sample_kb_store)]
        )
        (tmp_path / name).write_text(out, encoding="utf-8")
        saved.append(str(tmp_path / name))
    pool, _ = run(["eval", "pool", *saved])
    assert pool["pooled"]["questions"] == 24
    assert pool["pooled"]["best_single"] in report["baselines"]
    single = pool["pooled"]["vs_best_single"]
    assert single["low"] <= single["delta"] <= single["high"]
    # every bare wiring run on all sets gets its own pooled interval, the best one among them
    assert set(pool["pooled"]["vs_configs"]) == set(report["baselines"])
    assert pool["pooled"]["vs_configs"][pool["pooled"]["best_single"]] == single
    assert pool["decision"]["out_of_scope"] == 2


def test_variants_are_scored_in_the_same_run_and_pool_in_the_pipelines_place(
    sample_kb_store, tmp_path: Path
):
    argv = ["eval", "queries", str(QUESTIONS), "--bare", "bm25", "--kb", str(SAMPLE_KB)]
    _, out = run(
        [
            *argv,
            "--variant",
            "same={}",
            "--variant",
            'dense={"retrieval_mode": "dense", "rerank_weights": {"first_chunk": 0}}',
            *store_args(sample_kb_store),
        ]
    )
    report = json.loads(out.strip().splitlines()[-1])
    variants = report["variants"]
    assert set(variants) == {"same", "dense"}
    assert "pipeline" in report["per_question"]
    assert "same" not in report["per_question"]  # a variant is not a bare wiring to pool against
    ours = report["per_question"]["pipeline"]
    assert variants["same"]["per_question"] == ours  # the defaults again: the same scores
    assert variants["same"]["vs_pipeline"]["mrr@5"]["delta"] == 0.0
    dense = variants["dense"]
    assert dense["overrides"] == {"retrieval_mode": "dense", "rerank_weights": {"first_chunk": 0}}
    gap = dense["vs_pipeline"]["mrr@5"]
    assert gap["delta"] == pytest.approx(dense["mrr@5"] - report["mrr@5"], abs=1e-3)
    assert gap["n"] == len(ours["mrr@5"])

    saved = tmp_path / "variants.json"
    saved.write_text(out, encoding="utf-8")
    pool, _ = run(["eval", "pool", str(saved), "--variant", "dense"])
    assert pool["pooled"]["pipeline"] == pytest.approx(dense["mrr@5"], abs=1e-3)
    pooled, _ = run(["eval", "pool", str(saved)])
    assert pooled["pooled"]["pipeline"] == pytest.approx(report["mrr@5"], abs=1e-3)


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ('x={"no_such_setting": 1}', "unknown setting 'no_such_setting'"),
        ('x={"rerank_weights": {"similarity_share": 0.9, "bm25_share": 0.2}}', "at most 1"),
        ("x=[1]", "expected NAME="),
        ("x={", "invalid JSON"),
    ],
)
def test_a_bad_variant_is_refused_before_anything_runs(sample_kb_store, variant, message):
    out, err = io.StringIO(), io.StringIO()
    argv = ["eval", "queries", str(QUESTIONS), "--variant", variant, *store_args(sample_kb_store)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--no-progress"])
    assert code != 0
    assert message in err.getvalue()
    assert "Traceback" not in err.getvalue()
