"""``LookupKnowledgeRetriever``: the lookup graph's evidence blocks as ``Document`` s (Milvus Lite,
the sample knowledge base, the real embedder), checked by langchain-tests' standard suite and
against the ``lookup_knowledge`` tool's own artifact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_lookup_knowledge import (
    LookupKnowledgeRetriever,
    LookupSettings,
    RetrievalUnavailableError,
    ingest_folder,
)
from langchain_lookup_knowledge.store.connection import open_client
from tests.conftest import BLOCK_KEYS
from tests.fakes import call
from tests.kb_helpers import write

POOL_QUERY = "pgbouncer connection pool exhausted"
POOL_SOURCE = "databases/pgbouncer-connection-exhaustion.md"
METADATA_KEYS = BLOCK_KEYS - {"content"}  # the content is the Document's page_content


class TestLookupKnowledgeRetrieverStandard(RetrieversIntegrationTests):
    """langchain-tests' retriever suite: ``k`` in the constructor and per call, sync and async."""

    @pytest.fixture(autouse=True)
    def _store(self, kb_settings: LookupSettings, real_embeddings) -> None:
        self.kb_settings = kb_settings
        self.embeddings = real_embeddings

    @property
    def retriever_constructor(self) -> type[LookupKnowledgeRetriever]:
        return LookupKnowledgeRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"settings": self.kb_settings, "embeddings": self.embeddings}

    @property
    def retriever_query_example(self) -> str:
        return POOL_QUERY


@pytest.fixture(scope="module")
def retriever(kb_settings: LookupSettings, real_embeddings) -> LookupKnowledgeRetriever:
    return LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings)


def test_documents_are_the_tools_evidence_blocks(retriever, tool) -> None:
    """The same graph as the tool: the same blocks, in order, with the contract's metadata."""
    artifact = tool.invoke(call(POOL_QUERY, "c1")).artifact
    docs = retriever.invoke(POOL_QUERY)
    blocks = artifact["evidenceBlocks"]
    assert len(docs) == len(blocks) == retriever.settings.top_k
    for doc, block in zip(docs, blocks, strict=True):
        assert set(doc.metadata) == METADATA_KEYS
        assert doc.page_content == block["content"]
        assert doc.id == block["evidenceKey"]
        assert doc.metadata == {k: v for k, v in block.items() if k != "content"}
    assert docs[0].metadata["source"] == POOL_SOURCE
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    top = docs[0].metadata
    assert 0 < top["scoreLabel"]["similarity"] <= 1
    assert top["hitReasons"]
    assert all("contribution" in r for r in top["hitReasons"])


def test_k_in_the_constructor_and_per_call(kb_settings, real_embeddings, retriever) -> None:
    two = LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings, k=2)
    assert len(two.invoke(POOL_QUERY)) == 2
    seven = LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings, k=7)
    per_call = two.invoke(POOL_QUERY, k=7)  # as many as the sample holds evidence for, up to 7
    assert 2 < len(per_call) <= 7
    assert [d.id for d in per_call] == [d.id for d in seven.invoke(POOL_QUERY)]
    # beyond the tool's default 5, as many as the category L0 names holds evidence for
    twelve = LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings, k=12)
    beyond = retriever.invoke(POOL_QUERY, k=12)
    assert len(beyond) > 5
    assert [d.id for d in beyond] == [d.id for d in twelve.invoke(POOL_QUERY)]
    with pytest.raises(ValueError, match="k"):
        LookupKnowledgeRetriever(settings=kb_settings, k=0)


async def test_a_call_option_it_does_not_know_is_an_error(retriever) -> None:
    # k and filters are the only per-call options; a misspelt one must not be ignored silently.
    with pytest.raises(TypeError, match="top_k"):
        retriever.invoke(POOL_QUERY, top_k=3)
    with pytest.raises(TypeError, match="top_k"):
        await retriever.ainvoke(POOL_QUERY, top_k=3)


async def test_ainvoke_returns_what_invoke_returns(retriever) -> None:
    sync = retriever.invoke(POOL_QUERY, k=3)
    async_docs = await retriever.ainvoke(POOL_QUERY, k=3)
    assert [d.id for d in async_docs] == [d.id for d in sync]
    assert [d.metadata for d in async_docs] == [d.metadata for d in sync]


def test_filters_scope_every_call_and_a_call_can_replace_them(kb_settings, real_embeddings) -> None:
    scoped = LookupKnowledgeRetriever(
        settings=kb_settings, embeddings=real_embeddings, filters={"category": "kubernetes"}
    )
    docs = scoped.invoke("why is it slow", k=4)
    assert docs
    assert {d.metadata["category"] for d in docs} == {"kubernetes"}
    other = scoped.invoke(POOL_QUERY, k=3, filters={"source": POOL_SOURCE})
    assert other
    assert {d.metadata["source"] for d in other} == {POOL_SOURCE}


def test_an_off_topic_question_returns_no_documents(retriever) -> None:
    assert retriever.invoke("what is the capital of France", k=3) == []


def test_retrieval_that_is_down_raises_instead_of_finding_nothing(
    tmp_path: Path, real_embeddings
) -> None:
    kb = tmp_path / "kb"
    write(
        kb,
        "db/pool.md",
        "---\ntitle: Pool exhausted\n---\n# Pool exhausted\nRaise max_client_conn.\n",
    )
    settings = LookupSettings(
        data_dir=tmp_path,
        milvus_uri=str(tmp_path / "milvus.db"),
        collection="kb",
        record_invocations=False,
    )
    ingest_folder(kb, settings, embeddings=real_embeddings)
    retriever = LookupKnowledgeRetriever(settings=settings, embeddings=real_embeddings, k=1)
    assert [d.metadata["source"] for d in retriever.invoke("pool exhausted")] == ["db/pool.md"]
    open_client(settings).drop_collection("kb")  # a real fault: the collection is gone
    with pytest.raises(RetrievalUnavailableError, match="unavailable") as caught:
        retriever.invoke("pool exhausted")
    # The graph's decided kind is passed on (a collection dropped under a running lookup is a
    # search failure: transient), and the cause is named.
    assert "(transient: try again later)" in str(caught.value)
    assert "does not exist" in str(caught.value)


def test_the_lookup_graph_runs_inside_the_retriever_run(retriever) -> None:
    from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

    collector = RunCollectorCallbackHandler()
    docs = retriever.invoke(POOL_QUERY, k=2, config={"callbacks": [collector]})
    (run,) = collector.traced_runs
    assert (run.run_type, len(run.outputs["documents"])) == ("retriever", len(docs))
    assert [child.name for child in run.child_runs] == ["lookup_knowledge_pipeline"]
