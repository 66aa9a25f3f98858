"""``lookup-knowledge eval beir | queries`` and ``bench``: metrics on hand-checked cases, then
each command end to end through ``main()`` with ``--json`` on the sample knowledge base.

No figure is asserted against a time; quality assertions are loose floors a working pipeline
clears by far on the sample KB (a broken ranking would not).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge.cli import main
from langchain_lookup_knowledge.evaluation.metrics import (
    aggregate,
    mrr_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
)
from tests.cli_helpers import run_cli_json
from tests.conftest import SAMPLE_KB

QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"


def run_json(argv: list[str]) -> dict[str, Any]:
    """Run the CLI in this process with ``--json``; the last stdout line is the report."""
    return run_cli_json(argv)[0]


# --- metrics ------------------------------------------------------------------------------


def test_ndcg_matches_hand_computed_values():
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
    assert ndcg_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 10) == pytest.approx(
        1.5 / (1 + 1 / math.log2(3))
    )
    assert ndcg_at_k(["a", "b"], {"a": 1, "b": 1}, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], {"a": 1}, 10) == 0.0
    # graded: the grade-2 document first is ideal; swapped is not
    assert ndcg_at_k(["b", "a"], {"a": 1, "b": 2}, 10) == pytest.approx(1.0)
    swapped = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "b"], {"a": 1, "b": 2}, 10) == pytest.approx(swapped)


def test_cut_applies_to_ranked_entries_and_repeats_count_once():
    # two chunks of "a" fill the first two places: "b" at place 3 is outside @2
    assert recall_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 2) == 0.5
    assert recall_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 3) == 1.0
    assert mrr_at_k(["x", "x", "a"], {"a": 1}, 10) == 0.5  # documents: x, a
    assert mrr_at_k(["x", "y", "a"], {"a": 1}, 2) == 0.0
    assert recall_at_k(["a"], {"a": 0, "b": 1}, 10) == 0.0  # grade 0 is not relevant


def test_aggregate_averages_judged_queries_and_scores_missing_rankings_zero():
    rankings = {"q1": ["a", "b"], "q2": ["c"]}
    qrels = {"q1": {"a": 1}, "q2": {"d": 1}, "q3": {"e": 1}, "q4": {"f": 0}}
    scores = aggregate(rankings, qrels, ["recall@1", "mrr@10"])
    assert scores == {"recall@1": pytest.approx(1 / 3), "mrr@10": pytest.approx(1 / 3)}
    with pytest.raises(ValueError, match="unknown metric"):
        aggregate(rankings, qrels, ["precision@5"])


def test_percentile_interpolates():
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert percentile([], 50) == 0.0


# --- eval queries -------------------------------------------------------------------------


def test_eval_queries_scores_the_pipeline_and_bare_baselines(sample_kb_store):
    report = run_json(
        [
            "eval",
            "queries",
            str(QUESTIONS),
            "--uri",
            str(sample_kb_store.milvus_uri),
            "--collection",
            sample_kb_store.collection,
            "--kb",
            str(SAMPLE_KB),
        ]
    )
    assert report["questions"] == 12
    for key in ("recall@5", "recall@10", "mrr@10", "ndcg@10"):
        assert 0.0 <= report[key] <= 1.0
        for kind in ("dense", "hybrid"):
            assert 0.0 <= report["baselines"][kind][key] <= 1.0
    assert report["recall@10"] >= report["recall@5"]
    assert report["recall@5"] >= 0.6  # the sample questions are answerable
    assert report["pipeline"]["timing"]["p50_ms"] > 0
    assert report["recall@5_vs_dense"] == pytest.approx(
        report["recall@5"] - report["baselines"]["dense"]["recall@5"], abs=1e-3
    )


def test_eval_queries_names_a_bad_questions_file(sample_kb_store, tmp_path: Path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"q": "disk full"}\n', encoding="utf-8")
    code = main(
        [
            "eval",
            "queries",
            str(bad),
            "--uri",
            str(sample_kb_store.milvus_uri),
            "--collection",
            sample_kb_store.collection,
        ]
    )
    assert code == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


# --- eval beir ----------------------------------------------------------------------------


def write_beir_from_sample_kb(folder: Path) -> int:
    """A BEIR folder: one corpus document per sample runbook, the sample questions as queries."""
    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document

    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for path in iter_markdown_files(SAMPLE_KB):
            doc = load_document(path, SAMPLE_KB, 1_000_000)
            corpus.write(
                json.dumps(
                    {
                        "_id": path.stem,
                        "title": doc.title,  # type: ignore[union-attr]
                        "text": doc.body,
                    }
                )
                + "\n"
            )  # type: ignore[union-attr]
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as queries:
        for i, row in enumerate(rows):
            queries.write(json.dumps({"_id": f"q{i}", "text": row["q"]}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [
        f"q{i}\t{rel}\t1" for i, row in enumerate(rows) for rel in row["rel"]
    ]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(rows)


def test_eval_beir_reports_pipeline_and_baselines_and_caches_the_ingest(tmp_path: Path):
    folder = tmp_path / "sample-beir"
    n_queries = write_beir_from_sample_kb(folder)
    uri = str(tmp_path / "beir.db")
    first = run_json(["eval", "beir", str(folder), "--uri", uri])
    assert first["queries"] == n_queries
    assert first["corpus"] == 18
    assert first["cached"] is False
    for key in ("ndcg@10", "recall@100", "mrr@10", "recall@10"):
        assert 0.0 <= first[key] <= 1.0
        for kind in ("dense", "bm25", "hybrid"):
            assert 0.0 <= first["baselines"][kind][key] <= 1.0
    assert first["recall@100"] >= first["recall@10"]
    assert first["ndcg@10"] >= 0.5  # a broken ranking scores far lower on this small set
    assert first["collection"].startswith("beir_")

    again = run_json(["eval", "beir", str(folder), "--uri", uri, "--limit", "3"])
    assert again["cached"] is True
    assert again["queries"] == 3
    assert again["collection"] == first["collection"]
    assert again["baselines"]["dense"]["cached"] is True
    assert again["baselines"]["hybrid"]["cached"] is True


def test_beir_baselines_fill_only_the_kinds_named(tmp_path: Path):
    from langchain_lookup_knowledge.embeddings import build_embeddings
    from langchain_lookup_knowledge.evaluation.beir import load_beir, run_baselines
    from langchain_lookup_knowledge.settings import LookupSettings

    folder = tmp_path / "sample-beir"
    write_beir_from_sample_kb(folder)
    settings = LookupSettings(milvus_uri=str(tmp_path / "beir.db"))
    timings: dict[str, float] = {}
    out = run_baselines(
        load_beir(folder), settings, build_embeddings(settings), timings=timings, kinds=("bm25",)
    )
    assert set(out) == {"bm25"}
    assert set(timings) == {"bare_bm25_ingest_s"}
    assert out["bm25"]["cached"] is False
    assert out["bm25"]["ndcg@10"] >= 0.5  # the sample questions share words with their runbooks


def test_another_lexical_form_is_another_beir_collection(tmp_path: Path):
    from langchain_lookup_knowledge.evaluation.beir import (
        corpus_documents,
        load_beir,
        pipeline_collection,
    )
    from langchain_lookup_knowledge.settings import LookupSettings

    folder = tmp_path / "sample-beir"
    write_beir_from_sample_kb(folder)
    data = load_beir(folder, "test", None)
    docs = corpus_documents(data)
    names = {
        pipeline_collection(data, LookupSettings(bm25_split_identifiers=ids), docs)
        for ids in (False, True)
    }
    assert len(names) == 2  # a cached collection of another form is never reused


def test_eval_beir_names_a_missing_file(tmp_path: Path, capsys):
    (tmp_path / "corpus.jsonl").write_text("", encoding="utf-8")
    code = main(["eval", "beir", str(tmp_path), "--uri", str(tmp_path / "x.db")])
    assert code == 2
    assert "queries.jsonl" in capsys.readouterr().err


# --- bench --------------------------------------------------------------------------------


def test_bench_reports_latency_ratios_ingest_and_memory(
    sample_kb_store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from langchain_lookup_knowledge.recording import SqlInvocationRecorder
    from langchain_lookup_knowledge.store.connection import open_client

    # A spy (the real flush runs): the bench waits for each timed lookup's queued record
    # outside the timer, so the write never lands in the next series' timed call.
    flushes: list[int] = []
    real_flush = SqlInvocationRecorder.flush

    def counted_flush(self: SqlInvocationRecorder, timeout_s: float | None = None) -> int:
        flushes.append(1)
        return real_flush(self, timeout_s)

    monkeypatch.setattr(SqlInvocationRecorder, "flush", counted_flush)

    open_client(sample_kb_store)  # held by this process: the cold-start child must be skipped
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "\n".join(QUESTIONS.read_text(encoding="utf-8").splitlines()[:3]), encoding="utf-8"
    )
    report = run_json(
        [
            "bench",
            "--uri",
            str(sample_kb_store.milvus_uri),
            "--collection",
            sample_kb_store.collection,
            "--rounds",
            "3",
            "--queries-file",
            str(questions),
        ]
    )
    for key in (
        "lookup_p50_ms",
        "bare_p50_ms",
        "lookup_vs_bare_p50_ratio",
        "retry_vs_bare_p50_ratio",
        "lookup_cached_p50_ms",
        "ingest_chunks_per_s",
        "bare_ingest_chunks_per_s",
        "peak_rss_mb",
    ):
        assert isinstance(report[key], int | float), key
        assert report[key] > 0, key
    assert report["latency"]["lookup"]["n"] == 9  # 3 questions x 3 rounds
    # the sample collection has a BM25 field: a plain hybrid Milvus is measured too
    assert report["latency"]["bare_hybrid"]["n"] == 9
    # and the pipeline's own L1 search alone, to show what the retrieval itself costs
    assert report["latency"]["l1_search"]["n"] == 9
    assert report["l1_search_p50_ms"] > 0
    assert report["lookup_vs_bare_hybrid_p50_ratio"] == pytest.approx(
        report["lookup_p50_ms"] / report["bare_hybrid_p50_ms"], rel=0.01
    )
    # the pipeline's own overhead (lookup - its L1 search), and how loaded the machine was
    assert report["pipeline_overhead_p50_ms"] == pytest.approx(
        report["lookup_p50_ms"] - report["l1_search_p50_ms"], abs=0.02
    )
    assert isinstance(report["pipeline_overhead_paired_p50_ms"], float)
    # LangGraph's own floor for this shape (no-op nodes, same loop), and what is beyond it
    assert report["latency"]["graph_floor"]["n"] == 9
    assert report["graph_floor_p50_ms"] == report["latency"]["graph_floor"]["p50_ms"] > 0
    assert report["pipeline_overhead_beyond_floor_p50_ms"] == pytest.approx(
        report["pipeline_overhead_p50_ms"] - report["graph_floor_p50_ms"], abs=0.02
    )
    from langchain_lookup_knowledge.evaluation.bench import format_bench

    assert "LangGraph floor of this shape" in format_bench(report)
    assert report["l1_search_vs_bare_hybrid_p50_ratio"] > 0
    assert all(len(report["load_average"][when]) == 3 for when in ("start", "end"))
    assert isinstance(report["record_wait"], bool)
    # the forced retry really retried (every measured retry lookup went through the retry node)
    assert report["retried_lookups"] == report["latency"]["retry"]["n"] > 0
    timed_lookups = sum(report["latency"][name]["n"] for name in ("lookup", "lookup_cached"))
    assert len(flushes) >= timed_lookups + report["latency"]["retry"]["n"]
    # this process holds the Milvus Lite database, so a fresh process could not open it
    assert "skipped" in report["cold_start"]


# --- a CJK question and the English-only default embedder --------------------------------


def test_cjk_question_uses_bm25_alone_with_the_english_only_embedder(tmp_path: Path):
    from langchain_lookup_knowledge import LookupSettings
    from langchain_lookup_knowledge.pipeline.plan import retrieval_mode_for

    default = LookupSettings()
    assert retrieval_mode_for(default, "节点磁盘满了怎么办", bm25_analyzer="jieba") == "sparse"
    assert retrieval_mode_for(default, "pod 一直重启", bm25_analyzer="jieba") == "sparse"
    # mostly English, or a BM25 field that cannot split Chinese: the configured mode
    assert (
        retrieval_mode_for(default, "how to fix 节点 notready quickly", bm25_analyzer="jieba")
        == "hybrid"
    )
    assert retrieval_mode_for(default, "节点磁盘满了怎么办", bm25_analyzer="standard") == "hybrid"
    # a multilingual embedder keeps the configured mode
    multilingual = LookupSettings(local_model_dir=tmp_path)
    assert retrieval_mode_for(multilingual, "节点磁盘满了怎么办", bm25_analyzer="jieba") == "hybrid"


@pytest.mark.parametrize("mode", ["auto", "sdk"])
def test_bench_graph_floor_has_the_lookup_graphs_shape_and_runs_a_typical_route(mode: str):
    """The floor is the lookup graph's wiring (nodes, edges, conditional edges) with no-op
    bodies, and runs the 6 nodes of a lookup whose first attempt answers."""
    from langchain_lookup_knowledge import LookupSettings
    from langchain_lookup_knowledge.evaluation.bench import build_graph_floor
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.plan import plan_query

    settings = LookupSettings(mode=mode, retrieval_mode="dense", record_invocations=False)
    plan = plan_query("pod keeps restarting", settings, vector=[0.1, 0.2])
    floor = build_graph_floor(settings, plan)
    real = build_lookup_graph(settings).get_graph()

    def shape(graph):
        return sorted(graph.nodes), sorted((e.source, e.target, e.conditional) for e in graph.edges)

    assert shape(floor.get_graph()) == shape(real)
    ran = [next(iter(u)) for u in floor.stream({"query": "q"}, stream_mode="updates")]
    first = "retrieve_sdk" if mode == "sdk" else "retrieve_vectorstore"
    assert ran == [
        "transform_query",
        first,
        "postprocess",
        "pack_context",
        "assemble_result",
        "record_invocation",
    ]


def test_bench_reads_questions_as_q_as_beir_text_or_one_per_line(tmp_path: Path):
    from langchain_lookup_knowledge.errors import ConfigurationError
    from langchain_lookup_knowledge.evaluation.bench import load_bench_questions

    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(
        '{"q": "etcd is slow"}\n\n{"_id": "1", "text": "0-dimensional biomaterials"}\n',
        encoding="utf-8",
    )
    assert load_bench_questions(jsonl) == ["etcd is slow", "0-dimensional biomaterials"]
    plain = tmp_path / "q.txt"
    plain.write_text("disk full\n  \nnode down\n", encoding="utf-8")
    assert load_bench_questions(plain) == ["disk full", "node down"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"other": 1}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"empty\.jsonl:1: no question"):
        load_bench_questions(empty)


def test_bench_ingest_folder_given_relative_is_read_like_an_absolute_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``bench --kb ../runbooks`` once failed in the ingest step, after every lookup was
    measured: the loader names files relative to the folder it walked (resolved)."""
    from langchain_lookup_knowledge.errors import ConfigurationError
    from langchain_lookup_knowledge.evaluation.bench import bench_knowledge_folder
    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "disk.md").write_text("---\ntitle: Disk full\n---\n# Disk full\nfree space\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    folder = bench_knowledge_folder("../kb")
    assert folder == kb.resolve()
    docs = [load_document(f, folder, 2_000_000) for f in iter_markdown_files(folder)]
    assert [d.source for d in docs] == ["disk.md"]  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="knowledge folder not found"):
        bench_knowledge_folder("../missing")
