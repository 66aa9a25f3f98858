"""Ingest streams its documents: past the survey's keep budget, a document is read and chunked
again at its turn, and the store ends the same as when everything was kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_lookup_knowledge import ingest_feed
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import load_catalog, stored_chunk_keys
from langchain_lookup_knowledge.store.connection import open_client
from tests.conftest import SAMPLE_KB


def _state(settings: LookupSettings) -> tuple[dict[str, set[str]], list[tuple[str, str, int]]]:
    client = open_client(settings)
    keys = stored_chunk_keys(client, settings.collection, settings.id_field)
    catalog = load_catalog(client, settings.resolved_catalog_collection)
    return keys, [(e.source, e.content_hash, e.chunk_count) for e in catalog]


def test_documents_read_again_after_the_survey_give_the_same_store(
    settings: LookupSettings, ingest_embeddings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    kept = ingest_folder(SAMPLE_KB, settings, embeddings=ingest_embeddings, show_progress=False)
    reads: list[Path] = []
    real_load = ingest_feed.load_document

    def counted_load(path: Path, *args, **kwargs):  # a spy: the real loader runs
        reads.append(path)
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(ingest_feed, "load_document", counted_load)
    monkeypatch.setattr(ingest_feed, "KEEP_BYTES", 0)  # nothing kept past the survey
    streamed_settings = settings.model_copy(update={"collection": "streamed"})
    progress: list[tuple[int, int]] = []
    streamed = ingest_folder(
        SAMPLE_KB,
        streamed_settings,
        embeddings=ingest_embeddings,
        show_progress=False,
        on_chunk_progress=lambda done, total: progress.append((done, total)),
    )
    files = kept.files_seen
    assert len(reads) == 2 * files  # the survey, then each document again at its turn
    assert streamed.chunks_written == kept.chunks_written > 0
    assert streamed.indexed == kept.indexed
    assert progress[-1] == (kept.chunks_written, kept.chunks_written)
    assert _state(streamed_settings) == _state(settings)
