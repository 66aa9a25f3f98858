"""The BM25 input of an English collection is its lexical form (stems, identifier parts), on
Milvus Lite, through both L1 paths.

Vectors come from the FAKE deterministic ``DirectionEmbeddings`` (tests/fakes.py): every chunk
and question here names no axis, so the dense side cannot tell the documents apart and
``retrieval_mode=sparse`` isolates what BM25 matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core import lexical
from langchain_lookup_knowledge.errors import SchemaMismatchError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.models import LookupResult
from langchain_lookup_knowledge.pipeline.plan import plan_query
from langchain_lookup_knowledge.retrieval.request import L1Path
from langchain_lookup_knowledge.retrieval.sdk import SdkPath
from langchain_lookup_knowledge.retrieval.vectorstore import VectorStorePath
from langchain_lookup_knowledge.store import schema
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.schema import describe_chunk_collection
from tests.fakes import DirectionEmbeddings
from tests.kb_helpers import write

KB = {
    "workers/crash.md": (
        "---\ntitle: Worker restarts\n---\n# Worker restarts\n\n"
        "KubePodCrashLooping fires when a worker pod restarts again and again.\n"
    ),
    "storage/volume.md": (
        "---\ntitle: Volume usage\n---\n# Volume usage\n\n"
        "The volume holds logs; rotate them before it is full.\n"
    ),
    "gateway/cache.md": (
        "---\ntitle: Gateway cache\n---\n# Gateway cache\n\n"
        "Set proxy_cache on the route to keep responses.\n"
    ),
}


def _ingest(root: Path, **overrides: object) -> LookupSettings:
    kb = root / "kb"
    for rel, text in KB.items():
        write(kb, rel, text)
    settings = LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection="lexical",
        record_invocations=False,
        retrieval_mode="sparse",
        **overrides,  # type: ignore[arg-type]
    )
    ingest_folder(kb, settings, embeddings=DirectionEmbeddings(), show_progress=False)
    return settings


@pytest.fixture(scope="module")
def stemmed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LookupSettings]:
    """A collection whose BM25 input holds stems and identifier parts. No setting builds
    stems any more; a collection built with them is read as built, so the form is FORCED here
    at creation (the one place it is chosen)."""
    forced = lexical.LexicalForm(stem=True, split_identifiers=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "configured_lexical_form", lambda settings, analyzer: forced)
        settings = _ingest(tmp_path_factory.mktemp("lexical_on"))
    yield settings
    close_all_clients()


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LookupSettings]:
    yield _ingest(tmp_path_factory.mktemp("lexical_off"), bm25_split_identifiers=False)
    close_all_clients()


def sources(settings: LookupSettings, query: str, mode: str = "sdk") -> list[str]:
    """The documents a BM25 search finds for ``query``, planned as a lookup plans it."""
    fake = DirectionEmbeddings()
    client = open_client(settings)
    layout = describe_chunk_collection(client, settings, None)
    vector = fake.embed_query(query)
    plan = plan_query(query, settings, vector=vector, layout=layout)
    path: L1Path = (
        SdkPath(client, layout, settings)
        if mode == "sdk"
        else VectorStorePath(settings, layout, fake)
    )
    return [c.source for c in path.search(plan.request(None, vector))]


def test_the_collection_records_its_lexical_form(stemmed, plain):
    layout = describe_chunk_collection(open_client(stemmed), stemmed, None)
    assert layout.lexical_field == "lexical"
    assert layout.lexical_form == lexical.LexicalForm(stem=True, split_identifiers=True)
    assert layout.analyzer == "standard"
    old = describe_chunk_collection(open_client(plain), plain, None)
    assert old.has_bm25
    assert old.lexical_field is None
    assert old.lexical_form is None


@pytest.mark.parametrize("mode", ["sdk", "vectorstore"])
def test_another_inflection_finds_the_document(stemmed, plain, mode):
    assert sources(stemmed, "restarting", mode)[:1] == ["workers/crash.md"]
    assert sources(plain, "restarting", mode) == []  # "restarts" is another token


@pytest.mark.parametrize("mode", ["sdk", "vectorstore"])
def test_the_words_of_an_identifier_find_it_and_so_does_the_whole_token(stemmed, plain, mode):
    assert sources(stemmed, "crash looping", mode)[:1] == ["workers/crash.md"]
    assert sources(plain, "crash looping", mode) == []
    assert sources(stemmed, "KubePodCrashLooping", mode)[:1] == ["workers/crash.md"]
    assert sources(stemmed, "proxy cache", mode)[:1] == ["gateway/cache.md"]


def test_evidence_shows_the_text_as_written(stemmed):
    graph = build_lookup_graph(stemmed, embeddings=DirectionEmbeddings())
    result = LookupResult.model_validate(graph.invoke({"query": "worker pod restarts"})["result"])
    assert result.evidence_blocks[0].source == "workers/crash.md"
    assert "pod restarts again and again" in result.evidence_blocks[0].content


def test_by_default_identifiers_are_split_and_words_not_stemmed(tmp_path):
    settings = _ingest(tmp_path)  # the settings' defaults (measured: stemming did not help)
    layout = describe_chunk_collection(open_client(settings), settings, None)
    assert layout.lexical_form == lexical.LexicalForm(stem=False, split_identifiers=True)
    assert sources(settings, "crash looping")[:1] == ["workers/crash.md"]
    assert sources(settings, "restarting") == []
    close_all_clients()


def test_a_collection_of_another_lexical_version_is_refused_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(lexical, "LEXICAL_VERSION", lexical.LEXICAL_VERSION + 1)
    settings = _ingest(tmp_path)
    monkeypatch.undo()
    with pytest.raises(SchemaMismatchError, match=r"lexical form version \d+.*new collection"):
        describe_chunk_collection(open_client(settings), settings, None)
    close_all_clients()
