"""``bench --scale``: a synthetic collection grown through sizes, measured, then dropped."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.settings import LookupSettings


def test_scale_bench_reports_each_size_and_index_and_leaves_nothing(settings: LookupSettings):
    from langchain_lookup_knowledge.evaluation.scale import format_scale, run_scale
    from langchain_lookup_knowledge.store.connection import open_client

    client = open_client(settings)
    before = set(client.list_collections())
    kinds = ("FLAT", "IVF_FLAT", "HNSW")  # each index replaces the one before it
    report = run_scale(settings, sizes=[600, 300], queries=3, index_types=kinds)
    assert [p["chunks"] for p in report["sizes"]] == [300, 600]  # grown in order
    for point in report["sizes"]:
        assert point["peak_rss_mb"] > 0
        for index_type in kinds:
            figures = point["indexes"][index_type]
            assert figures["build_s"] >= 0
            for kind in ("dense", "hybrid"):
                assert 0 < figures[kind]["p50_ms"] <= figures[kind]["p95_ms"]
    assert "IVF_FLAT" in format_scale(report)
    assert "HNSW" in format_scale(report)
    assert set(client.list_collections()) == before


def test_scale_sizes_read_k_and_m_and_name_a_bad_one():
    from langchain_lookup_knowledge.cli.bench import _scale_sizes
    from langchain_lookup_knowledge.errors import LookupKnowledgeError

    assert _scale_sizes("100k, 300000,1m") == [100_000, 300_000, 1_000_000]
    with pytest.raises(LookupKnowledgeError, match="'lots'"):
        _scale_sizes("100k,lots")


def test_scale_indexes_read_a_list_and_name_an_unknown_one():
    from langchain_lookup_knowledge.cli.bench import _scale_indexes
    from langchain_lookup_knowledge.errors import LookupKnowledgeError

    assert _scale_indexes(None) == ("FLAT", "IVF_FLAT", "HNSW")
    assert _scale_indexes("hnsw, FLAT,hnsw") == ("HNSW", "FLAT")
    with pytest.raises(LookupKnowledgeError, match=r"'DISKANN'.*known: FLAT, IVF_FLAT, HNSW"):
        _scale_indexes("FLAT,diskann")


def test_scale_bench_says_each_step_on_stderr_and_keeps_stdout_json(settings, capsys):
    """A long run's points so far survive an interruption: each is said on stderr as it ends."""
    import json

    from langchain_lookup_knowledge.cli import main

    argv = ["bench", "--scale", "200", "--scale-queries", "2", "--scale-indexes", "HNSW", "--json"]
    argv += ["--uri", settings.milvus_uri, "--collection", settings.collection]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    report = json.loads(out.strip().splitlines()[-1])
    assert [p["chunks"] for p in report["sizes"]] == [200]
    assert list(report["sizes"][0]["indexes"]) == ["HNSW"]  # only the index asked for
    steps = [line for line in err.splitlines() if line.startswith("bench --scale: ")]
    assert any("200 chunks inserted" in line for line in steps)
    assert any("HNSW built" in line for line in steps)


class _LingeringIndex:
    """An injected fault: the first ``create_index`` after a drop is refused as Milvus Lite
    refuses it while the dropped index lingers; everything else goes to the real client."""

    def __init__(self, client) -> None:
        self.client = client
        self.refusals = 1

    def create_index(self, *args, **kwargs):
        if self.refusals:
            self.refusals -= 1
            raise RuntimeError("index already exists for field 'vector'; call drop_index first")
        return self.client.create_index(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_dropped_index_that_lingers_is_waited_for(settings: LookupSettings):
    from langchain_lookup_knowledge.evaluation.scale import _create, _rebuild_dense_index
    from langchain_lookup_knowledge.store.connection import open_client

    client = open_client(settings)
    name = "scale_linger"
    _create(client, name)
    try:
        client.load_collection(name)
        lingering = _LingeringIndex(client)
        assert _rebuild_dense_index(lingering, name, "HNSW", rows=0) >= 0
        assert lingering.refusals == 0  # refused once, then built
        described = client.describe_index(name, "vector")
        assert described["index_type"] == "HNSW"
    finally:
        client.drop_collection(name)


class _NoBm25:
    """An injected fault: a store that refuses a collection with a BM25 function, as a Milvus
    server before 2.5 does; everything else goes to the real client."""

    def __init__(self, client) -> None:
        self.client = client

    def create_collection(self, name, *, schema, **kwargs):
        if any(f.name == "sparse" for f in schema.fields):
            raise RuntimeError("data type SparseFloatVector is not supported")
        return self.client.create_collection(name, schema=schema, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_store_without_bm25_is_measured_dense_only_and_says_why(settings, monkeypatch):
    from langchain_lookup_knowledge.evaluation import scale
    from langchain_lookup_knowledge.store import connection

    client = connection.open_client(settings)
    before = set(client.list_collections())
    monkeypatch.setattr(connection, "open_client", lambda _settings: _NoBm25(client))
    report = scale.run_scale(settings, sizes=[200], queries=2, index_types=("FLAT", "HNSW"))
    assert report["bm25"] is False
    assert "SparseFloatVector is not supported" in report["bm25_note"]
    for figures in report["sizes"][0]["indexes"].values():
        assert 0 < figures["dense"]["p50_ms"] <= figures["dense"]["p95_ms"]
        assert "hybrid" not in figures
    table = scale.format_scale(report)
    assert "no hybrid figures: this store has no BM25" in table
    assert "HNSW" in table
    assert set(client.list_collections()) == before


def test_scale_bench_on_a_milvus_server_by_uri(milvus_server_uri):
    """The real test server (Milvus 2.3, no BM25): its dense curve is measured, hybrid only
    where the server has BM25, and the throwaway collection is dropped."""
    from langchain_lookup_knowledge.evaluation.scale import format_scale, run_scale
    from langchain_lookup_knowledge.store.connection import open_client

    settings = LookupSettings(milvus_uri=milvus_server_uri, record_invocations=False)
    client = open_client(settings)
    before = set(client.list_collections())
    report = run_scale(settings, sizes=[300], queries=3, index_types=("FLAT", "HNSW"))
    assert report["lite"] is False
    for figures in report["sizes"][0]["indexes"].values():
        assert figures["build_s"] >= 0
        assert 0 < figures["dense"]["p50_ms"] <= figures["dense"]["p95_ms"]
        assert ("hybrid" in figures) is report["bm25"]
    assert "client RSS" in format_scale(report)
    assert set(client.list_collections()) == before


def test_the_bm25_fallback_keeps_a_dense_collection_but_never_hides_a_full_disk(settings):
    """``create_with_bm25_or_dense`` (shared by the chunk collection and this bench): a refused
    BM25 field leaves a dense-only collection and says why; a full disk (INJECTED) is raised,
    not read as a store without BM25."""
    import errno

    from langchain_lookup_knowledge.evaluation.scale import _create
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.schema import create_with_bm25_or_dense

    client = open_client(settings)

    def refused(bm25: bool) -> None:
        _create(client, "fallback", bm25=False)  # half made, as a refused creation can leave it
        if bm25:
            raise RuntimeError("data type SparseFloatVector is not supported")

    try:
        why = create_with_bm25_or_dense(client, "fallback", refused)
        assert why is not None
        assert "SparseFloatVector is not supported" in why
        fields = {f["name"] for f in client.describe_collection("fallback")["fields"]}
        assert "sparse" not in fields
        assert "vector" in fields
    finally:
        client.drop_collection("fallback")

    def disk_full(bm25: bool) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        create_with_bm25_or_dense(client, "full", disk_full)
    assert not client.has_collection("full")


class _IndexAtInsert:
    """A spy on the real client: the dense index type in place at each insert."""

    def __init__(self, client) -> None:
        self.client = client
        self.at_insert: list[str] = []

    def insert(self, name, rows, **kwargs):
        self.at_insert.append(self.client.describe_index(name, "vector")["index_type"])
        return self.client.insert(name, rows, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_the_next_size_is_inserted_under_flat_not_the_graph_index_just_measured(
    settings, monkeypatch
):
    """Inserting under HNSW makes a server build it on each new segment in the background,
    still running while the next size's builds are timed."""
    from langchain_lookup_knowledge.evaluation import scale
    from langchain_lookup_knowledge.store import connection

    spy = _IndexAtInsert(connection.open_client(settings))
    monkeypatch.setattr(connection, "open_client", lambda _settings: spy)
    report = scale.run_scale(settings, sizes=[200, 400], queries=2, index_types=("HNSW",))
    assert [p["chunks"] for p in report["sizes"]] == [200, 400]
    assert len(spy.at_insert) >= 2  # both sizes inserted
    assert set(spy.at_insert) == {"FLAT"}
