"""The L1 backends against a real Milvus standalone server (PyPI ``milvus``, 2.3.x), over gRPC.

The server is started once for this module (tests/servers.py) and the tests skip, with the
reason, when it cannot be had. Milvus 2.3 has no BM25 function: collections are dense-only
there and hybrid retrieval degrades to dense with a trace note; BM25 checks skip with that reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.compare import compare_paths
from langchain_lookup_knowledge.errors import SchemaMismatchError, StoreUnavailableError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.filters import and_exprs, filter_to_expr
from langchain_lookup_knowledge.store.schema import server_lacks_bm25

try:  # tests/ on sys.path (no tests/__init__.py) ...
    from kb_helpers import external_rows
except ImportError:  # ... or tests/ is a package
    from tests.kb_helpers import external_rows

pytestmark = pytest.mark.milvus_server

SAMPLE_KB = Path(__file__).resolve().parents[1] / "langchain_lookup_knowledge" / "sample_kb"
CRASH_QUERY = "my pod keeps crashing and restarting"
POOL_QUERY = "pgbouncer connection pool exhausted"


class FailingPath:
    """FAKE L1 path whose every search raises (a VectorStore that is down)."""

    name = "vectorstore"

    def search(self, request: Any) -> list:
        raise RuntimeError("injected: vectorstore search is down")


@pytest.fixture(scope="module")
def server_kb(
    milvus_server_uri: str, tmp_path_factory: pytest.TempPathFactory, real_embeddings
) -> Iterator[LookupSettings]:
    """The sample knowledge base ingested into the server (a fresh collection)."""
    settings = LookupSettings(
        data_dir=tmp_path_factory.mktemp("server_kb"),
        milvus_uri=milvus_server_uri,
        collection=f"kb_{uuid.uuid4().hex[:8]}",
        record_invocations=False,
    )
    report = ingest_folder(SAMPLE_KB, settings, embeddings=real_embeddings)
    assert report.chunks_written > 0
    assert report.skipped == []
    yield settings
    client = open_client(settings)
    for name in (settings.collection, settings.resolved_catalog_collection):
        if client.has_collection(name):
            client.drop_collection(name)


def lacks_bm25(settings: LookupSettings) -> str | None:
    return server_lacks_bm25(open_client(settings))


def lookup(
    settings: LookupSettings,
    embeddings: Any,
    query: str,
    *,
    factories: dict | None = None,
    **state: Any,
) -> Any:
    runtime = LookupRuntime(settings, embeddings=embeddings, path_factories=factories)
    return build_lookup_graph(runtime=runtime).invoke({"query": query, **state})["result"]


def keys(result: Any) -> list[str]:
    return [b.evidence_key for b in result.evidence_blocks]


def test_collection_is_dense_only_where_the_server_has_no_bm25(server_kb, real_embeddings):
    reason = lacks_bm25(server_kb)
    layout = LookupRuntime(server_kb, embeddings=real_embeddings).layout
    if reason is None:
        assert layout.has_bm25
        return
    assert "needs 2.5" in reason
    assert not layout.has_bm25
    assert layout.sparse_field is None
    assert (layout.metric_type, layout.dimension) == ("COSINE", 384)


def test_hybrid_degrades_to_dense_with_a_trace_note(server_kb, real_embeddings):
    reason = lacks_bm25(server_kb)
    if reason is None:
        pytest.skip("this server has BM25: hybrid runs as hybrid")
    result = lookup(
        server_kb.model_copy(update={"retrieval_mode": "hybrid"}), real_embeddings, CRASH_QUERY
    )
    assert result.found
    assert result.retrieval_trace.retrieval_mode == "dense"
    assert any(
        "needs a BM25 field" in n and "searched dense" in n for n in result.retrieval_trace.notes
    )
    assert {b.score_label.kind for b in result.evidence_blocks} == {"dense"}


def test_bm25_hybrid_search_on_the_server(server_kb, real_embeddings):
    reason = lacks_bm25(server_kb)
    if reason is not None:
        pytest.skip(f"{reason}: no hybrid dense+BM25 retrieval on this server")
    result = lookup(
        server_kb.model_copy(update={"retrieval_mode": "hybrid"}), real_embeddings, CRASH_QUERY
    )
    assert {b.score_label.kind for b in result.evidence_blocks} == {"hybrid"}


@pytest.mark.parametrize("mode", ["vectorstore", "sdk", "auto"])
def test_lookups_answer_in_every_mode(server_kb, real_embeddings, mode):
    result = lookup(server_kb.model_copy(update={"mode": mode}), real_embeddings, CRASH_QUERY)
    assert result.found
    assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"
    assert result.retrieval_trace.path_used == ("vectorstore" if mode == "auto" else mode)


def test_both_paths_agree_on_the_server(server_kb, real_embeddings):
    report = compare_paths(
        POOL_QUERY, server_kb, k=5, runtime=LookupRuntime(server_kb, embeddings=real_embeddings)
    )
    assert report["vectorstore"]["status"] == report["sdk"]["status"] == "ok"
    assert report["overlapAtK"] == 1.0
    vs, sdk = report["vectorstore"]["results"], report["sdk"]["results"]
    assert [r["similarity"] for r in vs] == pytest.approx([r["similarity"] for r in sdk], abs=1e-5)


def test_auto_falls_back_to_sdk_on_the_server(server_kb, real_embeddings):
    result = lookup(
        server_kb.model_copy(update={"mode": "auto"}),
        real_embeddings,
        CRASH_QUERY,
        factories={"vectorstore": FailingPath},
    )
    assert result.found
    assert result.retrieval_trace.path_used == "sdk"
    assert "injected" in result.retrieval_trace.attempts[1].path_fallback


def test_sidecar_on_the_server(server_kb, real_embeddings):
    settings = server_kb.model_copy(update={"mode": "vectorstore", "sidecar_enabled": True})
    sidecar = lookup(settings, real_embeddings, CRASH_QUERY).retrieval_trace.sidecar
    assert (sidecar.status, sidecar.path, sidecar.overlap_at_k) == ("ok", "sdk", 1.0)


@pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
@pytest.mark.parametrize("field", ["category", 'metadata["category"]'])
def test_caller_filter_on_the_server(server_kb, real_embeddings, mode, field):
    result = lookup(
        server_kb.model_copy(update={"mode": mode}),
        real_embeddings,
        CRASH_QUERY,
        filters={field: "networking"},
    )
    assert result.found
    assert {b.category for b in result.evidence_blocks} == {"networking"}
    assert all('"networking"' in (a.filter or "") for a in result.retrieval_trace.attempts)


@pytest.mark.parametrize(
    "value",
    [
        'a" or id >= 0 or tag == "',
        "x\\",
        '\\"',
        "nul\x00\x01\x7f",
        "tab\tline\nbreak\r\n",
        "新 ü 😀",
        'meta["k"]',
        "",
    ],
)
def test_escaped_values_match_exactly_their_row_on_the_server(milvus_server_uri, value):
    client = MilvusClient(milvus_server_uri)
    name = f"esc_{uuid.uuid4().hex[:8]}"
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("tag", DataType.VARCHAR, max_length=256)
    schema.add_field("meta", DataType.JSON)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
    index = client.prepare_index_params()
    index.add_index("v", index_type="FLAT", metric_type="L2")
    try:
        client.create_collection(
            name, schema=schema, index_params=index, consistency_level="Strong"
        )
        client.insert(
            name,
            [
                {"id": 1, "tag": value, "meta": {"tenant": value}, "v": [0.0, 0.0]},
                {"id": 2, "tag": "b", "meta": {"tenant": "b"}, "v": [0.0, 0.0]},
            ],
        )
        for expr in (
            filter_to_expr({"tag": value}),
            filter_to_expr({'meta["tenant"]': value}),
            filter_to_expr({"tag": [value, "zz"]}),
        ):
            assert [r["id"] for r in client.query(name, filter=expr, output_fields=["id"])] == [1]
        scoped = and_exprs(filter_to_expr({"tag": value}), "id == 2")
        assert client.query(name, filter=scoped, output_fields=["id"]) == []
    finally:
        if client.has_collection(name):
            client.drop_collection(name)
        client.close()


@pytest.fixture(scope="module")
def server_external(
    milvus_server_uri: str, server_kb: LookupSettings, real_embeddings
) -> Iterator[LookupSettings]:
    """A collection made with raw pymilvus on the server: doc_id/body/embedding/meta fields,
    no category or source column, no catalog; rows embedded with the real embedder."""
    client = MilvusClient(milvus_server_uri)
    name = f"ext_{uuid.uuid4().hex[:8]}"
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("doc_id", DataType.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("body", DataType.VARCHAR, max_length=65535)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=384)
    schema.add_field("meta", DataType.JSON)
    index = client.prepare_index_params()
    index.add_index(
        "embedding", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 64}
    )
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
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
    settings = server_kb.model_copy(
        update={
            "collection": name,
            "id_field": "doc_id",
            "content_field": "body",
            "vector_field": "embedding",
            "metadata_field": "meta",
            "index_type": "HNSW",
        }
    )
    yield settings
    cleanup = MilvusClient(milvus_server_uri)
    cleanup.drop_collection(name)
    cleanup.close()


@pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
def test_existing_collection_on_the_server(server_external, real_embeddings, mode):
    runtime = LookupRuntime(
        server_external.model_copy(update={"mode": mode}), embeddings=real_embeddings
    )
    layout = runtime.layout
    assert (layout.index_type, layout.category_ref()) == ("HNSW", 'meta["category"]')
    result = build_lookup_graph(runtime=runtime).invoke({"query": POOL_QUERY})["result"]
    assert result.found
    assert result.l0_hints.empty
    assert result.retrieval_trace.path_used == mode
    assert result.evidence_blocks[0].source == "databases/pgbouncer-connection-exhaustion.md"
    # The best match is a networking runbook; a caller's filter on the JSON path excludes it.
    tls = "TLS certificate expired"
    unscoped = build_lookup_graph(runtime=runtime).invoke({"query": tls})["result"]
    assert unscoped.evidence_blocks[0].category == "networking"
    scoped = build_lookup_graph(runtime=runtime).invoke(
        {"query": tls, "filters": {'meta["category"]': "databases"}}
    )["result"]
    attempt = scoped.retrieval_trace.attempts[0]
    assert attempt.filter == '(meta["category"] == "databases")'
    assert attempt.candidates > 0
    assert {b.category for b in scoped.evidence_blocks} <= {"databases"}


def test_existing_collection_mismatches_on_the_server(server_external, real_embeddings):
    wrong_metric = LookupRuntime(
        server_external.model_copy(update={"metric_type": "IP"}), embeddings=real_embeddings
    )
    with pytest.raises(SchemaMismatchError, match="metric COSINE"):
        _ = wrong_metric.layout
    missing = LookupRuntime(
        server_external.model_copy(update={"collection": "no_such_kb"}), embeddings=real_embeddings
    )
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        _ = missing.layout
