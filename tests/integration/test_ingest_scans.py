"""What an ingest reads of its own collection, which on Milvus Lite costs memory in proportion to
the collection: stale chunks are deleted by key (a delete by filter scans every row), the Lite
write buffer is flushed every few thousand rows and before anything reads the collection, the
stored chunk keys are read once after the write, and the profile builds no BM25 index it does
not search; its off-topic probes are embedded beside the chunks. Real Milvus Lite in a temporary
folder, the real embedder."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from pymilvus import MilvusClient

from langchain_lookup_knowledge import ingest_write
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.judgement.questions import profile_questions
from langchain_lookup_knowledge.profiling import measure_profile
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import query_all, stored_chunk_keys
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.profile_store import read_profile
from tests.conftest import local_settings
from tests.kb_helpers import write

FILLER = (
    "Check the replication delay on the replica, then the write load on the primary, and "
    "restart the replica only when its relay log is stuck. "
)


def long_doc(title: str, sections: int) -> str:
    body = "".join(f"## Step {i}\n\n{FILLER * 6}\n\n" for i in range(sections))
    return f"# {title}\n\n{body}"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, dict[str, Any]]]]:
    """Every MilvusClient call of the kinds that read or change a collection, in order: (method,
    collection, keyword arguments and the row count of an upsert)."""
    seen: list[tuple[str, str, dict[str, Any]]] = []
    for method in ("delete", "flush", "upsert", "query", "query_iterator", "search"):
        real = getattr(MilvusClient, method)

        def spy(self: Any, name: str, *args: Any, _real: Any = real, _m: str = method, **kw: Any):
            noted = dict(kw)
            if _m == "upsert":
                noted["rows"] = len(args[0] if args else kw["data"])
            seen.append((_m, name, noted))
            return _real(self, name, *args, **kw)

        monkeypatch.setattr(MilvusClient, method, spy)
    yield seen
    close_all_clients()


def test_stale_chunks_and_a_killed_runs_leftovers_are_deleted_by_key(
    tmp_path: Path, real_embeddings: Any, calls: list
) -> None:
    settings = local_settings(tmp_path)
    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 3))
    write(kb, "b.md", f"# Beta\n\n{FILLER}\n")
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    client = open_client(settings)
    # A run killed after writing a.md's chunks, before its catalog entry: the catalog does not
    # know its chunks; it then shrank to one chunk.
    client.delete(settings.resolved_catalog_collection, filter='source == "a.md"')
    write(kb, "a.md", f"# Alpha runbook\n\nshort now. {FILLER}\n")
    calls.clear()
    again = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert again.indexed == ["a.md"]
    assert again.stale_chunks_deleted == 2
    keys = stored_chunk_keys(client, settings.collection, settings.id_field)
    assert keys == {"a.md": {"a.md#0"}, "b.md": {"b.md#0"}}
    chunk_calls = [(method, kw) for method, name, kw in calls if name == settings.collection]
    deletes = [kw for method, kw in chunk_calls if method == "delete"]
    assert deletes == [{"ids": ["a.md#1", "a.md#2"]}]


def test_a_lite_ingest_flushes_its_write_buffer_every_few_rows_and_before_reading(
    tmp_path: Path, real_embeddings: Any, calls: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_write, "LITE_FLUSH_ROWS", 4, raising=False)
    settings: LookupSettings = local_settings(tmp_path, insert_batch_size=2)
    kb = tmp_path / "kb"
    for i in range(11):
        write(kb, f"ops/runbook-{i:02d}.md", f"# Runbook {i}\n\nStep {i}: {FILLER}\n")
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.chunks_written == 11
    unflushed, most = 0, 0
    for method, name, kw in calls:
        if name != settings.collection:
            continue
        if method == "upsert":
            unflushed += kw["rows"]
            most = max(most, unflushed)
        elif method == "flush":
            unflushed = 0
        elif method in ("query", "query_iterator", "search"):
            assert unflushed == 0, f"{method} read the collection with {unflushed} rows unflushed"
    assert most <= 4 + settings.insert_batch_size
    assert len(query_all(open_client(settings), settings.collection, 'pk != ""', ["pk"])) == 11


def test_after_the_write_the_stored_keys_are_read_once_and_no_bm25_index_is_built(
    tmp_path: Path, real_embeddings: Any, calls: list
) -> None:
    settings = local_settings(tmp_path)
    kb = tmp_path / "kb"
    for i in range(6):
        write(kb, f"db/runbook-{i}.md", long_doc(f"Replica lag {i}", 2))
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.profile_seconds is not None
    assert report.profile_error is None
    key_scans = [
        (method, kw)
        for method, name, kw in calls
        if name == settings.collection
        and method in ("query", "query_iterator")
        and kw.get("output_fields") == [settings.id_field]
        and kw.get("filter") == f'{settings.id_field} != ""'
    ]
    assert len(key_scans) == 1, key_scans  # a new collection: none before the write
    searched = {kw.get("anns_field") for method, name, kw in calls if method == "search"}
    assert searched == {settings.vector_field}  # English questions: dense searches only


class RecordingEmbeddings(Embeddings):
    """The real embedder, noting which thread embedded which texts."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def queries_are_documents(self) -> bool:
        return bool(getattr(self.inner, "queries_are_documents", False))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append((threading.current_thread().name, list(texts)))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append((threading.current_thread().name, [text]))
        return self.inner.embed_query(text)


def test_the_profiles_probes_are_embedded_beside_the_chunks_and_the_profile_is_the_same(
    tmp_path: Path, real_embeddings: Any
) -> None:
    settings = local_settings(tmp_path)
    kb = tmp_path / "kb"
    for i in range(6):
        write(kb, f"db/runbook-{i}.md", long_doc(f"Replica lag {i}", 2))
    recording = RecordingEmbeddings(real_embeddings)
    report = ingest_folder(kb, settings, embeddings=recording, show_progress=False)
    assert report.profile_error is None
    probes = {q["q"] for q in profile_questions(pseudo=0)}
    embedded_by = {text: thread for thread, texts in recording.calls for text in texts}
    assert {embedded_by[p] for p in probes} == {"profile-probes_0"}
    assert sum(text in probes for _, texts in recording.calls for text in texts) == len(probes)
    stored = read_profile(open_client(settings), settings).profile
    assert stored is not None
    assert stored.to_dict() == measure_profile(settings, embeddings=real_embeddings).to_dict()
