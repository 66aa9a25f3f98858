"""The tool inside agents (``ToolNode``, ``create_agent``) and the lookup graph inside a parent
graph, over the sample knowledge base; the chat model is a scripted fake, all else is real."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import TypedDict

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from langchain_lookup_knowledge import (
    LookupResult,
    build_lookup_graph,
    create_lookup_knowledge_tool,
)
from tests.fakes import PIPELINE_NODES, ScriptedToolCallingModel, call, failing_graph

REPO = Path(__file__).resolve().parents[2]


def tool_node_graph(tool) -> CompiledStateGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def test_tool_node_returns_evidence_and_readable_errors_side_by_side(tool):
    calls = [
        call("redis is evicting keys", "ok"),
        call("  ", "blank"),
        call(call_id="missing"),  # no query argument
    ]
    out = tool_node_graph(tool).invoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    replies = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert set(replies) == {"ok", "blank", "missing"}
    assert replies["ok"].status == "success"
    assert replies["ok"].artifact["evidenceBlocks"][0]["source"] == (
        "databases/redis-memory-eviction.md"
    )
    assert "source: databases/redis-memory-eviction.md" in replies["ok"].content
    assert replies["blank"].status == "error"
    assert "non-empty `query`" in replies["blank"].content
    assert replies["missing"].status == "error"
    assert "`query`" in replies["missing"].content


def test_create_agent_loop_cites_the_knowledge_base(tool):
    agent = create_agent(ScriptedToolCallingModel(), [tool], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "tls"}}
    out = agent.invoke(
        {"messages": [HumanMessage("TLS certificate expired on the ingress")]}, config=config
    )
    kinds = [type(m).__name__ for m in out["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    tool_msg = out["messages"][2]
    assert tool_msg.name == "lookup_knowledge"
    assert tool_msg.artifact["found"] is True
    answer = out["messages"][-1].content
    assert answer.startswith("According to networking/tls-certificate-expiry.md")
    # The thread was checkpointed (the lookup's state rides along without errors).
    assert len(agent.get_state(config).values["messages"]) == 4


async def test_create_agent_async_loop(tool):
    agent = create_agent(ScriptedToolCallingModel(), [tool])
    out = await agent.ainvoke({"messages": [HumanMessage("PVC stuck in Pending")]})
    assert out["messages"][2].status == "success"
    assert "kubernetes/pvc-stuck-pending.md" in out["messages"][-1].content


async def test_agent_survives_failed_retrieval(kb_settings, real_embeddings):
    broken = create_lookup_knowledge_tool(
        kb_settings, graph=failing_graph(kb_settings, real_embeddings)
    )
    agent = create_agent(ScriptedToolCallingModel(), [broken])
    out = await agent.ainvoke({"messages": [HumanMessage("node is NotReady")]})
    tool_msg = out["messages"][2]
    assert isinstance(tool_msg, ToolMessage)
    assert tool_msg.status == "error"
    assert tool_msg.content.startswith("Knowledge retrieval unavailable")
    assert out["messages"][-1].content.startswith(
        "I could not use the knowledge base: Knowledge retrieval unavailable"
    )


class IncidentState(TypedDict, total=False):
    query: str
    result: dict  # the lookup's camelCase result contract (JSON)
    answer: str


def test_lookup_graph_runs_as_a_node_of_a_parent_graph(kb_settings, real_embeddings):
    lookup = build_lookup_graph(kb_settings, embeddings=real_embeddings)

    def summarize(state: IncidentState) -> dict:
        result = LookupResult.model_validate(state["result"])
        top = result.evidence_blocks[0]
        return {"answer": f"{top.title} ({top.source}), relevance {result.relevance_level}"}

    builder = StateGraph(IncidentState)
    builder.add_node("lookup_knowledge", lookup)
    builder.add_node("summarize", summarize)
    builder.add_edge(START, "lookup_knowledge")
    builder.add_edge("lookup_knowledge", "summarize")
    builder.add_edge("summarize", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "incident-1"}}

    namespaces, nodes, streamed = set(), set(), {}
    for namespace, update in parent.stream(
        {"query": "MySQL queries are slow"}, config=config, stream_mode="updates", subgraphs=True
    ):
        namespaces.add(namespace[0].split(":")[0] if namespace else "")
        nodes.update(update)
        streamed.update(update)
    final = parent.get_state(config).values
    assert isinstance(final["result"], dict)  # plain JSON in the parent's checkpoint
    typed = LookupResult.model_validate(final["result"])
    assert typed.evidence_blocks[0].source == "databases/mysql-slow-queries.md"
    assert "databases/mysql-slow-queries.md" in final["answer"]
    # The subgraph's own nodes stream under its namespace inside the parent.
    assert "lookup_knowledge" in namespaces
    assert {"transform_query", "postprocess", "assemble_result", "record_invocation"} <= nodes
    assert {"lookup_knowledge", "summarize"} <= nodes
    # What the README says of streaming: a parent streams a subgraph node's update only for
    # the lookup's output keys (the other nodes show None); astream_events sees every value.
    assert streamed["transform_query"] is None
    assert set(streamed["record_invocation"]) == {"result", "error"}

    async def node_outputs() -> dict:
        outputs = {}
        async for event in parent.astream_events(
            {"query": "MySQL queries are slow"},
            config={"configurable": {"thread_id": "incident-2"}},
            version="v2",
        ):
            if event["event"] == "on_chain_end" and event["name"] in PIPELINE_NODES:
                outputs[event["name"]] = event["data"].get("output")
        return outputs

    outputs = asyncio.run(node_outputs())
    assert outputs["transform_query"]["plan"].search_text == "MySQL queries are slow"
    assert outputs["pack_context"]["context_pack"].included_sources


def test_langgraph_json_graph_builds_without_touching_milvus(tmp_path, monkeypatch):
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    file_name, _, attr = config["graphs"]["lookup_knowledge"].partition(":")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("LOOKUP_KNOWLEDGE_MILVUS_URI", raising=False)
    monkeypatch.delenv("LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", raising=False)
    spec = importlib.util.spec_from_file_location("lookup_knowledge_studio", REPO / file_name)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, attr)
    assert isinstance(graph, CompiledStateGraph)
    assert graph.name == "lookup_knowledge"
    assert set(graph.get_graph().nodes) >= PIPELINE_NODES
    runtime = module.runtime  # the graph's shared resources, built before it
    assert runtime.settings.data_dir == tmp_path
    assert runtime.recorder.url.endswith(str(tmp_path / "invocations.sqlite3"))
    # Lazily safe: no Milvus Lite database, no records file, no client yet.
    assert list(tmp_path.iterdir()) == []
    assert runtime._client is None
