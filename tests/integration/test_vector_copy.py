"""Each chunk's dense vector kept as a float32 copy (base64 VARCHAR) that BM25 and hybrid hits
return for their cosine (Milvus Lite, the real embedder): the same cosines as from the vector
field, on both L1 paths; collections without the copy, and rows without it, still answer."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.schema import (
    describe_chunk_collection,
    ensure_chunk_collection,
)
from langchain_lookup_knowledge.store.vector_copy import decode_vector_copies
from tests.conftest import SAMPLE_KB

SUBSET = [
    "databases/pgbouncer-connection-exhaustion.md",
    "databases/postgresql-replication-lag.md",
    "kubernetes/pod-crashloopbackoff.md",
    "observability/node-disk-full-log-rotation.md",
]
QUERIES = ["pgbouncer connection pool exhausted", "my pod keeps crashing and restarting"]
COPY = "vector_b64"


def lite(root: Path, collection: str, **extra: Any) -> LookupSettings:
    return LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection=collection,
        record_invocations=False,
        **extra,
    )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, ingest_embeddings) -> dict[str, Any]:
    """The same chunks and vectors ingested with the copy (the default) and without it."""
    kb = tmp_path_factory.mktemp("copy_kb")
    for rel in SUBSET:
        (kb / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE_KB / rel, kb / rel)
    root = tmp_path_factory.mktemp("copy_store")
    with_copy = lite(root, "with_copy")
    without = lite(root, "without_copy", vector_copy_field=None)
    for settings in (with_copy, without):
        assert ingest_folder(kb, settings, embeddings=ingest_embeddings).bm25
    return {"with": with_copy, "without": without}


class OutputFieldSpy:
    """Records the output fields of every search / hybrid search / query of the clients."""

    def __init__(self, clients: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        for client in {id(c): c for c in clients}.values():
            for method in ("search", "hybrid_search", "query"):
                real = getattr(client, method)
                monkeypatch.setattr(client, method, self._spy(method, real))

    def _spy(self, method: str, real: Any) -> Any:
        def spied(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((method, list(kwargs.get("output_fields") or [])))
            return real(*args, **kwargs)

        return spied


def similarities(
    settings: LookupSettings, embeddings: Any, path_name: str, mode: str
) -> dict[str, dict[str, Any]]:
    """Each query's candidates of one search: key -> (similarity, metadata keys)."""
    path = LookupRuntime(settings, embeddings=embeddings).path(path_name)
    out = {}
    for query in QUERIES:
        vector = embeddings.embed_query(query)
        found = path.search(SearchRequest(query, vector, None, k=10, retrieval_mode=mode))
        assert found
        out[query] = {c.evidence_key: (c.score_label.similarity, set(c.metadata)) for c in found}
    return out


def path_clients(
    settings: LookupSettings, embeddings: Any, path_name: str
) -> tuple[Any, list[Any]]:
    """The L1 path ``path_name`` and the Milvus clients it searches and queries with."""
    path: Any = LookupRuntime(settings, embeddings=embeddings).path(path_name)
    if path_name == "sdk":
        return path, [path.client]
    return path, [path.hybrid_store.client, path.dense_store.client]


def test_a_new_collection_keeps_each_vector_as_its_float32_copy(stores, real_embeddings):
    settings = stores["with"]
    client = open_client(settings)
    layout = describe_chunk_collection(client, settings, 384)
    assert layout.vector_copy_field == COPY
    assert layout.fields_with_vector[-1] == COPY
    rows = client.query(settings.collection, filter='pk != ""', output_fields=["vector", COPY])
    assert rows
    copies = decode_vector_copies([r[COPY] for r in rows], 384)
    assert copies is not None
    assert np.array_equal(copies, np.asarray([r["vector"] for r in rows], dtype=np.float32))


def test_without_the_setting_a_new_collection_has_no_copy(stores):
    settings = stores["without"]
    client = open_client(settings)
    info = client.describe_collection(settings.collection)
    assert COPY not in {f["name"] for f in info["fields"]}
    layout = describe_chunk_collection(client, settings, 384)
    assert layout.vector_copy_field is None
    assert layout.fields_with_vector[-1] == "vector"
    # Read with the default settings, the collection still has no copy to return.
    default = stores["with"].model_copy(update={"collection": settings.collection})
    assert describe_chunk_collection(client, default, 384).vector_copy_field is None


@pytest.mark.parametrize("mode", ["hybrid", "sparse"])
@pytest.mark.parametrize("path_name", ["sdk", "vectorstore"])
def test_hits_return_the_copy_and_get_the_same_cosines_as_from_the_vector_field(
    stores, real_embeddings, monkeypatch, path_name, mode
):
    expected = similarities(stores["without"], real_embeddings, path_name, mode)
    path, clients = path_clients(stores["with"], real_embeddings, path_name)
    spy = OutputFieldSpy(clients, monkeypatch)
    for query in QUERIES:
        vector = real_embeddings.embed_query(query)
        found = path.search(SearchRequest(query, vector, None, k=10, retrieval_mode=mode))
        got = {c.evidence_key: (c.score_label.similarity, set(c.metadata)) for c in found}
        assert got == expected[query]  # the same floats: the same cosines, bit for bit
        assert not any(COPY in keys for _, keys in got.values())
    searched = [fields for method, fields in spy.calls if method != "query"]
    assert searched
    assert all(COPY in fields and "vector" not in fields for fields in searched)
    assert not [c for c in spy.calls if c[0] == "query"]  # no round trip for the vectors


def test_dense_searches_never_return_the_copy(stores, real_embeddings, monkeypatch):
    path, clients = path_clients(stores["with"], real_embeddings, "vectorstore")
    spy = OutputFieldSpy(clients, monkeypatch)
    vector = real_embeddings.embed_query(QUERIES[0])
    found = path.search(SearchRequest(QUERIES[0], vector, None, k=5, retrieval_mode="dense"))
    assert found
    assert spy.calls
    assert all(COPY not in fields for _, fields in spy.calls)


@pytest.mark.parametrize("path_name", ["sdk", "vectorstore"])
def test_hits_of_rows_written_without_the_copy_get_their_vectors_by_key(
    stores, real_embeddings, monkeypatch, path_name
):
    """Rows another writer adds leave the (nullable) copy empty: one query by key fills in
    their vectors, and the cosines are the same."""
    source = stores["without"]
    settings = stores["with"].model_copy(update={"collection": f"copy_left_empty_{path_name}"})
    client = open_client(settings)
    layout = ensure_chunk_collection(client, settings, 384, "standard")
    assert layout.vector_copy_field == COPY
    fields = ["pk", "text", "lexical", "vector", "metadata", "category", "source"]
    rows = client.query(source.collection, filter='pk != ""', output_fields=fields)
    client.insert(settings.collection, [{k: r[k] for k in fields} for r in rows])
    client.flush(settings.collection)
    expected = similarities(source, real_embeddings, path_name, "hybrid")
    path, clients = path_clients(settings, real_embeddings, path_name)
    spy = OutputFieldSpy(clients, monkeypatch)
    for query in QUERIES:
        vector = real_embeddings.embed_query(query)
        found = path.search(SearchRequest(query, vector, None, k=10, retrieval_mode="hybrid"))
        got = {c.evidence_key: (c.score_label.similarity, set(c.metadata)) for c in found}
        assert got == expected[query]
    assert [fields for method, fields in spy.calls if method == "query"] == [
        ["pk", "vector"]
    ] * len(QUERIES)
