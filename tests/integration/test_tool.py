"""The ``lookup_knowledge`` tool: its schema, content and artifact, tool errors, real async, and
the ``langchain-tests`` standard suites, over the sample knowledge base in Milvus Lite."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.tool import EMPTY_QUERY_ERROR
from tests.conftest import CONTRACT_KEYS
from tests.fakes import call, failing_graph, gated_graph


def test_tool_takes_one_described_query_argument(tool):
    assert tool.name == "lookup_knowledge"
    assert list(tool.args) == ["query"]
    assert "question" in tool.args["query"]["description"]
    assert tool.response_format == "content_and_artifact"


def test_tool_call_returns_cited_context_and_camelcase_artifact(tool):
    msg = tool.invoke(call("my pod keeps crashing and restarting"))
    assert isinstance(msg, ToolMessage)
    assert msg.status == "success"
    artifact = msg.artifact
    assert artifact["found"] is True
    assert artifact["evidenceStatus"] == "evidence"
    first = artifact["evidenceBlocks"][0]
    assert first["source"] == "kubernetes/pod-crashloopbackoff.md"
    assert first["evidenceKey"].startswith("kubernetes/pod-crashloopbackoff.md#")
    assert set(artifact) >= CONTRACT_KEYS
    # The model reads the packed context, each block citing its source and evidenceKey.
    assert msg.content.endswith(artifact["contextPack"]["text"])
    assert f"source: {first['source']} (evidenceKey {first['evidenceKey']}" in msg.content
    assert "sources: kubernetes/pod-crashloopbackoff.md" in msg.content


def test_off_topic_question_reports_no_evidence_not_an_error(tool):
    """The README: an off-topic question is ``found=false`` / ``no_evidence``, a success (the
    model is told there is no evidence), never an error and never a weak guess."""
    msg = tool.invoke(call("how long should I bake a chocolate cake at 180 degrees"))
    assert msg.status == "success"
    assert msg.artifact["found"] is False
    assert msg.artifact["evidenceStatus"] == "no_evidence"
    assert msg.artifact["evidenceBlocks"] == []
    assert msg.artifact["relevanceLevel"] == "low"
    assert msg.content.startswith("No knowledge evidence")


@pytest.mark.parametrize("query", ["", "   ", "\n\t  "])
def test_empty_query_reaches_the_model_as_a_tool_error(tool, query):
    msg = tool.invoke(call(query))
    assert msg.status == "error"
    assert msg.content == EMPTY_QUERY_ERROR
    assert msg.artifact is None


def test_missing_or_mistyped_argument_is_a_tool_error(tool):
    missing = tool.invoke(call(call_id="c"))
    assert missing.status == "error"
    assert "`query`" in missing.content
    assert "required" in missing.content
    mistyped = tool.invoke(call(["not", "a", "string"]))
    assert mistyped.status == "error"
    assert "`query`" in mistyped.content


def test_failed_retrieval_reaches_the_model_as_a_tool_error(kb_settings, real_embeddings):
    graph = failing_graph(kb_settings, real_embeddings)
    tool = create_lookup_knowledge_tool(kb_settings, graph=graph)
    msg = tool.invoke(call("node is not ready"))
    assert msg.status == "error"
    assert msg.content.startswith("Knowledge retrieval unavailable")
    # Both paths were tried (auto mode falls back to the SDK path) and both are named.
    assert "vectorstore: ConnectionError" in msg.content
    assert "sdk: ConnectionError" in msg.content


async def test_failed_retrieval_is_a_tool_error_under_ainvoke(kb_settings, real_embeddings):
    tool = create_lookup_knowledge_tool(
        kb_settings, graph=failing_graph(kb_settings, real_embeddings)
    )
    msg = await tool.ainvoke(call("node is not ready"))
    assert msg.status == "error"
    assert msg.content.startswith("Knowledge retrieval unavailable")


def test_unopenable_store_is_a_tool_error(tmp_path, real_embeddings):
    not_a_dir = tmp_path / "plain-file"
    not_a_dir.write_text("not a directory")
    settings = LookupSettings(
        data_dir=tmp_path, milvus_uri=str(not_a_dir / "milvus.db"), record_invocations=False
    )
    msg = create_lookup_knowledge_tool(settings, embeddings=real_embeddings).invoke(
        call("disk is full")
    )
    assert msg.status == "error"
    assert msg.content.startswith("Knowledge retrieval unavailable")
    assert "milvus.db" in msg.content


async def test_ainvoke_leaves_the_event_loop_free(kb_settings, real_embeddings):
    """The SDK search waits until a coroutine on this loop opens a gate: it can only finish
    if the lookup runs off the event loop (a blocking ``ainvoke`` times the search out)."""
    entered, gate = threading.Event(), threading.Event()
    tool = create_lookup_knowledge_tool(
        kb_settings, graph=gated_graph(kb_settings, real_embeddings, entered, gate)
    )
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while not entered.is_set():  # the search has started and is now waiting
            ticks += 1
            await asyncio.sleep(0.005)
        gate.set()

    msg, _ = await asyncio.gather(tool.ainvoke(call("etcd is slow")), ticker())
    assert ticks > 0
    assert msg.status == "success", msg.content
    assert msg.artifact["retrievalTrace"]["attempts"][0]["status"] != "error"
    assert msg.artifact["found"] is True


class TestLookupKnowledgeToolUnit(ToolsUnitTests):
    """Standard unit suite: built from settings (or env vars) without touching any store."""

    @pytest.fixture(autouse=True)
    def _data_dir(self, tmp_path: Path) -> None:
        self._dir = tmp_path

    @property
    def tool_constructor(self):
        return create_lookup_knowledge_tool

    @property
    def tool_constructor_params(self) -> dict:
        return {"settings": LookupSettings(data_dir=self._dir, collection="unit_kb")}

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "pod keeps restarting"}

    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        env = {
            "LOOKUP_KNOWLEDGE_DATA_DIR": str(self._dir),
            "LOOKUP_KNOWLEDGE_COLLECTION": "env_kb",
            "LOOKUP_KNOWLEDGE_MODE": "spring-ai",
        }
        expected = {
            "name": "lookup_knowledge",
            "metadata": {"lookup_collection": "env_kb", "lookup_mode": "vectorstore"},
        }
        return env, {}, expected

    def test_building_touches_no_store(self, tool) -> None:
        assert tool.name == "lookup_knowledge"
        assert list(self._dir.iterdir()) == []


class TestLookupKnowledgeToolIntegration(ToolsIntegrationTests):
    """Standard integration suite against the sample knowledge base."""

    @pytest.fixture(autouse=True)
    def _store(self, kb_settings, real_embeddings) -> None:
        self._settings, self._embeddings = kb_settings, real_embeddings

    @property
    def tool_constructor(self):
        return create_lookup_knowledge_tool

    @property
    def tool_constructor_params(self) -> dict:
        return {"settings": self._settings, "embeddings": self._embeddings}

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "TLS certificate expired on the ingress"}
