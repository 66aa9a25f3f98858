"""The lookup's orchestration: one plan, the fallbacks as graph edges, the error decided once.

Real Milvus Lite and the real embedder over the bundled sample knowledge base (ingested once
per session by ``sample_kb_store``); faults are injected paths (``FailingPath``: a FAKE L1 path
that raises) or a real misconfiguration (a collection that was never ingested, an embedder of
another dimension).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langsmith._internal._serde import dumps_json
from typing_extensions import TypedDict

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.compare import compare_paths
from langchain_lookup_knowledge.core.models import LookupResult, RetrievalAttempt, RetrievalError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import LookupRouters, build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.fakes import EightDimensions, FailingPath, call


@pytest.fixture
def recorded(sample_kb_store: LookupSettings, tmp_path: Path) -> LookupSettings:
    return sample_kb_store.model_copy(
        update={
            "record_invocations": True,
            "invocation_db_url": f"sqlite:///{tmp_path / 'records.sqlite3'}",
        }
    )


def rows(settings: LookupSettings) -> list[dict[str, Any]]:
    return SqlInvocationRecorder(settings.resolved_invocation_db_url).rows(limit=10)


# --- the graph: both auto-mode fallbacks are edges ------------------------------------------
def test_both_vectorstore_to_sdk_fallbacks_are_graph_edges() -> None:
    graph = build_lookup_graph(LookupSettings(record_invocations=False))
    edges = {(e.source, e.target) for e in graph.get_graph().edges}
    assert ("retrieve_vectorstore", "retrieve_sdk") in edges
    assert ("retry_unfiltered", "retry_unfiltered_sdk") in edges
    assert ("retry_unfiltered_sdk", "postprocess") in edges


def test_routers_raise_on_a_state_they_were_not_wired_for() -> None:
    routers = LookupRouters(LookupSettings(mode="auto"))
    sdk_attempt = RetrievalAttempt(name="unfiltered", path="sdk", status="ok")
    with pytest.raises(RuntimeError, match="route_after_vectorstore"):
        routers.route_after_vectorstore({"attempts": [sdk_attempt]})
    with pytest.raises(RuntimeError, match="without recording an attempt"):
        routers.route_quality({"attempts": []})
    with pytest.raises(RuntimeError, match="route_after_retry"):
        routers.route_after_retry({"attempts": [sdk_attempt]})


def test_retry_falls_back_to_sdk_through_its_own_edge(sample_kb_store, real_embeddings) -> None:
    settings = sample_kb_store.model_copy(
        update={"record_invocations": False, "reference_threshold": 1.0}  # always retry
    )
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    real_vectorstore = runtime.path("vectorstore")

    class FailsOnRetry:
        name = "vectorstore"

        def search(self, request: Any) -> list:
            if request.expr is None:  # the unfiltered retry (no tenant scope here)
                raise ConnectionError("vectorstore dropped the retry (injected)")
            return real_vectorstore.search(request)

    runtime._paths["vectorstore"] = FailsOnRetry()  # type: ignore[assignment]
    graph = build_lookup_graph(runtime=runtime)
    visited: list[str] = []
    for chunk in graph.stream({"query": "redis memory eviction policy"}, stream_mode="updates"):
        visited.extend(chunk)
    assert visited[:4] == [
        "transform_query",
        "retrieve_vectorstore",
        "retry_unfiltered",
        "retry_unfiltered_sdk",
    ]


# --- one plan: compare searches what the tool searches ---------------------------------------
def test_compare_plans_a_cjk_question_as_the_tool_does(tmp_path, real_embeddings) -> None:
    kb = tmp_path / "zh"
    (kb / "db").mkdir(parents=True)
    (kb / "db" / "pool.md").write_text(
        "# 数据库连接池耗尽\n\n连接数满了的时候，先看连接池的配置，再查慢查询。\n", encoding="utf-8"
    )
    (kb / "db" / "node.md").write_text(
        "# 节点 NotReady\n\n节点的 kubelet 停了，检查节点的磁盘和内存。\n", encoding="utf-8"
    )
    settings = LookupSettings(data_dir=tmp_path, collection="zh_plan", record_invocations=False)
    assert ingest_folder(kb, settings, embeddings=real_embeddings).bm25
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    question = "数据库连接数满了"
    out = build_lookup_graph(runtime=runtime).invoke({"query": question})
    result = LookupResult.model_validate(out["result"])
    report = compare_paths(question, settings, runtime=runtime)
    assert result.retrieval_trace.retrieval_mode == "sparse"
    assert report["retrievalMode"] == "sparse"  # was "hybrid": compare ignored the CJK rule
    assert report["filter"] == result.retrieval_trace.attempts[0].filter


# --- the error: decided once, carried in the output, read by the tool -------------------------
def test_output_carries_the_retrieval_error(sample_kb_store, real_embeddings) -> None:
    settings = sample_kb_store.model_copy(update={"record_invocations": False})
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    runtime._path_factories = {n: (lambda n=n: FailingPath(n)) for n in ("vectorstore", "sdk")}
    out = build_lookup_graph(runtime=runtime).invoke({"query": "disk is full"})
    error = RetrievalError.model_validate(out["error"])
    assert error is not None
    assert error.kind == "transient"
    assert error.retryable
    assert "vectorstore: ConnectionError" in error.message
    assert LookupResult.model_validate(out["result"]).error == error
    ok = build_lookup_graph(settings, embeddings=real_embeddings).invoke({"query": "disk is full"})
    assert ok["error"] is None
    assert ok["result"]["error"] is None


def test_transient_fault_tells_the_model_to_try_again(recorded, real_embeddings) -> None:
    runtime = LookupRuntime.configured(recorded, embeddings=real_embeddings)
    runtime._path_factories = {n: (lambda n=n: FailingPath(n)) for n in ("vectorstore", "sdk")}
    tool = create_lookup_knowledge_tool(recorded, graph=build_lookup_graph(runtime=runtime))
    msg = tool.invoke(call("disk is full"))
    assert msg.status == "error"
    assert msg.content.startswith("Knowledge retrieval unavailable")
    assert "Try again later" in msg.content
    assert msg.artifact is None
    [row] = rows(recorded)
    assert "injected" in row["error"]


def test_missing_collection_is_a_configuration_error_and_recorded(
    recorded, real_embeddings
) -> None:
    settings = recorded.model_copy(update={"collection": "never_ingested"})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    msg = tool.invoke(call("disk is full"))
    assert msg.status == "error"
    assert "misconfigured" in msg.content
    assert "retrying will not help" in msg.content
    assert "Try again" not in msg.content
    assert "never_ingested" in msg.content
    [row] = rows(settings)
    assert "never_ingested" in row["error"]
    steps = row["retrieval_details"]["retrieval_trace"]["attempts"]
    assert [(s["name"], s["status"], s["errorKind"]) for s in steps] == [
        ("open_collection", "error", "configuration")
    ]


def test_dimension_mismatch_is_a_configuration_error_and_recorded(recorded) -> None:
    tool = create_lookup_knowledge_tool(recorded, embeddings=EightDimensions())
    msg = tool.invoke(call("disk is full"))
    assert msg.status == "error"
    assert "misconfigured" in msg.content
    assert "retrying will not help" in msg.content
    [row] = rows(recorded)
    assert row["error"]
    assert "SchemaMismatchError" in row["error"]


def test_unreadable_catalog_costs_the_hints_only_and_is_recorded(recorded, real_embeddings) -> None:
    runtime = LookupRuntime.configured(recorded, embeddings=real_embeddings)

    def malformed(scope: str | None = None) -> Any:  # FAKE: an injected catalog fault
        raise ValueError("catalog row 'x.md': keywords is not a list (injected)")

    runtime.matcher = malformed  # type: ignore[method-assign]
    tool = create_lookup_knowledge_tool(recorded, graph=build_lookup_graph(runtime=runtime))
    msg = tool.invoke(call("redis memory eviction"))
    assert msg.status == "success"
    assert msg.artifact["found"]
    assert any("L0 catalog unreadable" in n for n in msg.artifact["retrievalTrace"]["notes"])
    [row] = rows(recorded)
    assert row["found"]


# --- L0 under every authoritative filter ---------------------------------------------------
def test_l0_hints_are_scoped_by_the_calls_filters(sample_kb_store, real_embeddings) -> None:
    settings = sample_kb_store.model_copy(update={"record_invocations": False})
    graph = build_lookup_graph(settings, embeddings=real_embeddings)
    question = "redis memory eviction and ImagePullBackOff on the etcd node"
    everything = LookupResult.model_validate(graph.invoke({"query": question})["result"])
    assert "kubernetes" in everything.l0_hints.domains  # the question names other documents
    scoped = LookupResult.model_validate(
        graph.invoke({"query": question, "filters": {"category": "databases"}})["result"]
    )
    hints = scoped.l0_hints
    assert hints.domains == ["databases"]
    assert all(s.startswith("databases/") for s in hints.matched_sources)
    assert "ImagePullBackOff" not in hints.matched_keywords
    assert "etcd" not in hints.entities
    assert "kubernetes" not in scoped.completeness_hint
    assert all(b.source.startswith("databases/") for b in scoped.evidence_blocks)


# --- one contract on every surface; Studio; a checkpointed parent; the trace -----------------
def test_graph_output_is_the_tools_artifact_json(sample_kb_store, real_embeddings) -> None:
    settings = sample_kb_store.model_copy(update={"record_invocations": False})
    graph = build_lookup_graph(settings, embeddings=real_embeddings)
    out = graph.invoke({"query": "redis memory eviction"})
    assert isinstance(out["result"], dict)
    assert "evidenceBlocks" in out["result"]  # camelCase, as the tool artifact and CLI --json
    typed = LookupResult.model_validate(out["result"])
    assert typed.to_json_dict() == out["result"]
    msg = create_lookup_knowledge_tool(settings, graph=graph).invoke(call("redis memory eviction"))
    assert set(msg.artifact) == set(out["result"])
    assert (
        msg.artifact["evidenceBlocks"][0]["source"] == out["result"]["evidenceBlocks"][0]["source"]
    )


def test_studio_gets_input_and_output_schemas() -> None:
    graph = build_lookup_graph(LookupSettings(record_invocations=False))
    schema_in = graph.get_input_jsonschema()
    schema_out = graph.get_output_jsonschema()
    assert schema_in["properties"]["query"]["type"] == "string"
    assert schema_in["required"] == ["query"]
    assert {"result", "retrieval_details", "error"} <= set(schema_out["properties"])


class Incident(TypedDict, total=False):
    query: str
    result: dict[str, Any]
    error: dict[str, Any] | None


def _checkpointed(node: Any, saver: InMemorySaver) -> Any:
    builder = StateGraph(Incident)
    builder.add_node("lookup", node)
    builder.add_edge(START, "lookup")
    builder.add_edge("lookup", END)
    return builder.compile(checkpointer=saver)


def _stored_bytes(saver: InMemorySaver) -> int:
    """What the saver holds: channel blobs, checkpoints (without values) and pending writes."""
    blobs = sum(len(value[1]) for value in saver.blobs.values())
    writes = sum(
        len(write[2][1]) for task_writes in saver.writes.values() for write in task_writes.values()
    )
    return blobs + writes


def test_checkpointed_parent_stores_the_lookup_once_and_strictly(
    sample_kb_store, real_embeddings
) -> None:
    settings = sample_kb_store.model_copy(update={"record_invocations": False})
    lookup = build_lookup_graph(settings, embeddings=real_embeddings)
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)  # LANGGRAPH_STRICT_MSGPACK
    config = {"configurable": {"thread_id": "incident"}}
    baseline_saver, saver = InMemorySaver(serde=strict), InMemorySaver(serde=strict)
    _checkpointed(lambda state: {}, baseline_saver).invoke({"query": "x"}, config)
    parent = _checkpointed(lookup, saver)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "will be blocked by strict msgpack"
        parent.invoke({"query": "redis memory eviction"}, config)
        values = parent.get_state(config).values
    added = len(list(saver.list(None))) - len(list(baseline_saver.list(None)))
    assert added <= 2
    assert _stored_bytes(saver) - _stored_bytes(baseline_saver) < 2 * 20_000  # blob + write
    assert sum(len(v[1]) for v in saver.blobs.values()) < 20_000
    assert LookupResult.model_validate(values["result"]).found  # loads back under strict serde
    assert values["error"] is None


def _runs(collector: RunCollectorCallbackHandler) -> list[Any]:
    stack, runs = list(collector.traced_runs), []
    while stack:
        run = stack.pop()
        runs.append(run)
        stack.extend(run.child_runs)
    return runs


TRACED_LOOKUPS = {
    # name: (question, settings, the retrieval nodes that run)
    "typical": ("redis memory eviction", {}, ("retrieve_vectorstore",)),
    "forced_unfiltered_retry": (  # an L0 domain filter, then the retry without it (issue 12)
        "redis memory eviction",
        {"reference_threshold": 1.0},  # no filtered attempt is ever good enough
        ("retrieve_vectorstore", "retry_unfiltered"),
    ),
    "off_topic": ("how do I bake sourdough bread at home", {}, ("retrieve_vectorstore",)),
}


@pytest.mark.parametrize("lookup", list(TRACED_LOOKUPS))
def test_trace_has_a_run_per_node_the_retriever_documents_and_no_vector(
    lookup: str, sample_kb_store, real_embeddings
) -> None:
    question, update, retrievals = TRACED_LOOKUPS[lookup]
    settings = sample_kb_store.model_copy(update={"record_invocations": False, **update})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    collector = RunCollectorCallbackHandler()  # a real tracer callback, collecting runs locally
    message = tool.invoke(call(question), config={"callbacks": [collector]})
    assert message.artifact["found"] is (lookup != "off_topic")
    runs = _runs(collector)
    names = [r.name for r in runs]
    for node in ("transform_query", *retrievals, "postprocess", "pack_context"):
        assert names.count(node) == 1, names
    assert names.count("assemble_result") == names.count("record_invocation") == 1
    retrievers = [r for r in runs if r.run_type == "retriever"]
    assert len(retrievers) == len(retrievals)
    assert all(r.outputs["documents"] for r in retrievers)
    sent = [dumps_json({"inputs": r.inputs, "outputs": r.outputs, "extra": r.extra}) for r in runs]
    # what a LangSmith tracer sends: each node sees its own input keys, not the whole state,
    # and records large values as summaries (pipeline.tracing): 201 KB before, about 68 KB now;
    # the forced retry (two retriever runs) 94 KB (99.7-100.4 KB while each retrieval node
    # recorded its candidates again beside its retriever run's documents), off-topic 31 KB
    assert sum(map(len, sent)) < 100_000
    postprocess = next(r for r in runs if r.name == "postprocess")
    assert set(postprocess.inputs) <= {"plan", "attempts", "candidates"}
    vector = real_embeddings.embed_query(question)
    assert not any(f"{vector[0]}" in text.decode() for text in sent)  # not 384 floats per run


def test_the_graph_keeps_its_name() -> None:
    assert build_lookup_graph(LookupSettings(record_invocations=False), name="kb").name == "kb"
