"""While the model embeds a group of chunks, the ingest's other work on it runs beside: the
group's rows are built, and the questions the judgement profile asks are embedded. The store
and the profile end the same as when each step waits for the one before."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge import ingest_write
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.judgement.questions import profile_questions
from langchain_lookup_knowledge.profiling import measure_profile
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.profile_store import read_profile
from tests.kb_helpers import write

BATCH_SECONDS = 0.4


class SlowEmbeddingsFake(Embeddings):
    """FAKE embedder (named as such): the real model's vectors, each call of the ingesting
    thread held ``BATCH_SECONDS`` longer (a slow model), every call logged with its thread,
    start, end and texts."""

    queries_are_documents = True

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls: list[tuple[str, float, float, list[str]]] = []
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        vectors = self.inner.embed_documents(texts)
        if threading.current_thread() is threading.main_thread():
            time.sleep(BATCH_SECONDS)
        with self._lock:
            self.calls.append(
                (threading.current_thread().name, start, time.perf_counter(), list(texts))
            )
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def main_calls(self) -> list[tuple[float, float, list[str]]]:
        main = threading.main_thread().name
        return [(s, e, t) for name, s, e, t in self.calls if name == main]


def _kb(root: Path, count: int = 12) -> Path:
    kb = root / "kb"
    for i in range(count):
        write(
            kb,
            f"ops/runbook{i}.md",
            f"# Runbook {i}\n\nThe service number {i} stops answering requests after a deploy.\n\n"
            f"## Fix\n\nRoll back the release {i}, then watch the error rate for ten minutes.\n",
        )
    return kb


def _ingest_in_three_batches(
    settings: LookupSettings, tmp_path: Path, real_embeddings: Embeddings
) -> tuple[SlowEmbeddingsFake, Any, list[tuple[float, float, list[str]]]]:
    """The 12-chunk knowledge base ingested by the slow fake, 4 chunks a batch: the embedder,
    the report and the ingesting thread's chunk batches (one group, three batches)."""
    embedder = SlowEmbeddingsFake(real_embeddings)
    report = ingest_folder(
        _kb(tmp_path),
        settings.model_copy(update={"embedding_batch_size": 4}),
        embeddings=embedder,
        show_progress=False,
    )
    assert report.chunks_written == 12
    chunk_calls = [c for c in embedder.main_calls() if all("\n\n" in t for t in c[2])]
    assert len(chunk_calls) == 3  # 12 chunks, 4 a batch, one group
    return embedder, report, chunk_calls


def test_rows_are_built_and_profile_questions_embedded_while_the_chunks_are(
    settings: LookupSettings, tmp_path: Path, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    built: list[tuple[str, float, float]] = []
    real_rows = ingest_write._group_rows

    def recorded_rows(*args: Any) -> Any:  # a spy: the real rows are built
        start = time.perf_counter()
        out = real_rows(*args)
        built.append((threading.current_thread().name, start, time.perf_counter()))
        return out

    monkeypatch.setattr(ingest_write, "_group_rows", recorded_rows)
    embedder, report, chunk_calls = _ingest_in_three_batches(settings, tmp_path, real_embeddings)
    assert report.profile_error is None
    last_end = chunk_calls[-1][1]
    # the group's rows: built in a thread of their own, while its chunks were being embedded
    (thread, rows_start, _), *_ = built
    assert thread != threading.main_thread().name
    assert rows_start < last_end  # not after the embedding

    # the profile's pseudo-questions: embedded off the ingesting thread (after the probes),
    # never again by the profile after the write
    probes = {q["q"] for q in profile_questions(pseudo=0)}
    side = [c for c in embedder.calls if c[0] != threading.main_thread().name]
    pseudo_calls = [c for c in side if not set(c[3]) <= probes]
    assert pseudo_calls, "the pseudo-questions were not embedded beside the chunks"
    pseudo = set(pseudo_calls[0][3])
    assert any(q.startswith("The service number") for q in pseudo)
    after = [c for c in embedder.main_calls() if c[0] > last_end]
    assert not [c for c in after if set(c[2]) & pseudo]

    # the same profile as one measured afterwards, every question embedded then
    client = open_client(settings)
    stored = read_profile(client, settings).profile
    assert stored is not None
    again = measure_profile(settings, embeddings=real_embeddings)
    assert stored.to_dict() == again.to_dict()


def test_rows_are_written_while_the_later_batches_embed(
    settings: LookupSettings, tmp_path: Path, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """A spy on pymilvus's upsert (the real one runs): a group's first chunk rows reach
    Milvus before its last batch is embedded, and the store holds every chunk once."""
    import pymilvus

    upserts: list[tuple[str, float, int]] = []
    real_upsert = pymilvus.MilvusClient.upsert

    def upsert(self, collection_name, data, *args, **kwargs):
        upserts.append((collection_name, time.perf_counter(), len(data)))
        return real_upsert(self, collection_name, data, *args, **kwargs)

    monkeypatch.setattr(pymilvus.MilvusClient, "upsert", upsert)
    _, _, chunk_calls = _ingest_in_three_batches(settings, tmp_path, real_embeddings)
    chunk_upserts = [u for u in upserts if u[0] == settings.collection]
    assert chunk_upserts[0][1] < chunk_calls[-1][0]  # before the last batch even started
    assert sum(n for _, _, n in chunk_upserts) == 12
    client = open_client(settings)
    assert client.get_collection_stats(settings.collection)["row_count"] == 12


def test_a_document_refused_midway_keeps_none_of_its_rows(
    settings: LookupSettings, tmp_path: Path, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """INJECTED FAULT (named as such): pymilvus's upsert refuses any batch holding the second
    chunk of ``ops/refused.md``; its first chunk was written in an earlier batch. The group
    is written again document by document, and the refused document keeps no row."""
    import pymilvus
    from pymilvus.exceptions import MilvusException

    from langchain_lookup_knowledge.store.schema import ensure_loaded

    kb = _kb(tmp_path, 3)
    write(
        kb,
        "ops/refused.md",
        "# Refused\n\nThe first part of a runbook that Milvus will refuse.\n\n"
        "## Second\n\nThe second part, long enough to be a chunk of its own, and then some "
        "more words after it so that it is the longest chunk of all of them by far.\n",
    )
    real_upsert = pymilvus.MilvusClient.upsert

    def upsert(self, collection_name, data, *args, **kwargs):
        if any(str(row.get("pk", "")) == "ops/refused.md#1" for row in data):
            raise MilvusException(message="injected: refused")
        return real_upsert(self, collection_name, data, *args, **kwargs)

    monkeypatch.setattr(pymilvus.MilvusClient, "upsert", upsert)
    sent: list[str] = []
    real_send = ingest_write._RowStream.write

    def spied(self, piece, vectors):
        real_send(self, piece, vectors)
        sent.append(",".join(map(str, piece)))

    monkeypatch.setattr(ingest_write._RowStream, "write", spied)
    ours = settings.model_copy(
        update={"embedding_batch_size": 1, "chunk_size": 200, "chunk_overlap": 20}
    )
    report = ingest_folder(kb, ours, embeddings=real_embeddings, show_progress=False)
    assert len(sent) == 5  # one batch a chunk: the refused document's second one is the last
    assert sorted(report.indexed) == [f"ops/runbook{i}.md" for i in range(3)]
    assert "injected" in {s.source: s.reason for s in report.skipped}["ops/refused.md"]
    client = open_client(settings)
    ensure_loaded(client, settings.collection)
    keys = [r["pk"] for r in client.query(settings.collection, filter='pk != ""', limit=1000)]
    assert not [k for k in keys if k.startswith("ops/refused.md")]
    assert len(keys) == 3


def test_the_profile_is_measured_while_the_vocabulary_is_counted(
    settings: LookupSettings, tmp_path: Path, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """Spies (the real calls run): the profile's searches start on a thread of their own
    while the vocabulary is counted (it waits up to 20 s for them to start), and store the
    same profile as one measured afterwards."""
    from langchain_lookup_knowledge import ingest_run, profiling

    measuring = threading.Event()
    seen: dict[str, Any] = {}
    real_vocabulary, real_measure = ingest_run.rebuild_vocabulary, profiling.measure_profile

    def vocabulary(*args: Any, **kwargs: Any) -> Any:
        out = real_vocabulary(*args, **kwargs)
        seen["beside"] = measuring.wait(timeout=20)
        return out

    def measure(*args: Any, **kwargs: Any) -> Any:
        seen["thread"] = threading.current_thread().name
        measuring.set()
        return real_measure(*args, **kwargs)

    monkeypatch.setattr(ingest_run, "rebuild_vocabulary", vocabulary)
    monkeypatch.setattr(profiling, "measure_profile", measure)
    report = ingest_folder(_kb(tmp_path), settings, embeddings=real_embeddings, show_progress=False)
    assert report.profile_error is None
    assert report.profile_seconds is not None
    assert seen["beside"] is True  # measured while the vocabulary was still being counted
    assert seen["thread"] != threading.main_thread().name
    stored = read_profile(open_client(settings), settings).profile
    assert stored is not None
    assert stored.to_dict() == real_measure(settings, embeddings=real_embeddings).to_dict()
