"""The run tree of a lookup, collected offline: the tool run (with compact per-call metadata), the
pipeline graph run, one named run per node, and the L1 search as a retriever run with documents."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.documents import Document
from langchain_core.tracers.langchain import LangChainTracer
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run

from langchain_lookup_knowledge import LookupRuntime, build_lookup_graph
from langchain_lookup_knowledge import create_lookup_knowledge_tool as make_tool
from tests.fakes import PIPELINE_NODES, FailingPath, call, failing_graph


def walk(run: Run) -> list[Run]:
    out = [run]
    for child in run.child_runs:
        out.extend(walk(child))
    return out


def children(run: Run, name: str) -> list[Run]:
    return [c for c in run.child_runs if c.name == name]


def tool_run_of(collector: RunCollectorCallbackHandler) -> Run:
    (root,) = collector.traced_runs
    assert root.name == "lookup_knowledge"
    assert root.run_type == "tool"
    return root


def assert_main_tree(root: Run, artifact: dict[str, Any]) -> None:
    (pipeline,) = children(root, "lookup_pipeline")
    node_names = [c.name for c in pipeline.child_runs]
    assert node_names[0] == "transform_query"
    assert node_names[-4:] == [
        "postprocess",
        "pack_context",
        "assemble_result",
        "record_invocation",
    ]
    (retrieve,) = children(pipeline, "retrieve_vectorstore")
    (search,) = children(retrieve, "l1_search_vectorstore")
    assert search.run_type == "retriever"
    assert search.inputs["query"] == artifact["query"]
    docs = search.outputs["documents"]
    assert docs
    assert all(isinstance(d, Document) and d.metadata["evidence_key"] for d in docs)
    assert artifact["evidenceBlocks"][0]["evidenceKey"] in {
        d.metadata["evidence_key"] for d in docs
    }
    assert search.extra["metadata"]["l1_path"] == "vectorstore"
    # Compact per-call details on the tool run itself, next to its static metadata.
    meta = root.extra["metadata"]
    assert meta["lookup_collection"] == "sample_kb"
    assert meta["lookup_found"] is True
    assert meta["lookup_path"] == "vectorstore"
    assert meta["lookup_sources"] == list(
        dict.fromkeys(b["source"] for b in artifact["evidenceBlocks"])
    )
    assert meta["lookup_final_count"] == len(artifact["evidenceBlocks"])
    assert meta["lookup_recording"] == "ok"
    assert meta["lookup_invocation_id"] == artifact["retrievalTrace"]["recording"]["id"]
    assert meta["lookup_latency_ms"] == artifact["retrievalTrace"]["timingsMs"]["total"]


def test_tool_run_tree_has_node_runs_and_a_retriever_run(kb_settings, real_embeddings):
    collector = RunCollectorCallbackHandler()
    msg = make_tool(kb_settings, embeddings=real_embeddings).invoke(
        call("etcd is slow and the API server times out"), config={"callbacks": [collector]}
    )
    assert_main_tree(tool_run_of(collector), msg.artifact)


async def test_async_tool_run_tree_is_the_same(kb_settings, real_embeddings):
    collector = RunCollectorCallbackHandler()
    msg = await make_tool(kb_settings, embeddings=real_embeddings).ainvoke(
        call("etcd is slow and the API server times out"), config={"callbacks": [collector]}
    )
    assert_main_tree(tool_run_of(collector), msg.artifact)


def test_fallback_and_retry_are_named_runs(kb_settings, real_embeddings):
    """The vectorstore path fails (fake) -> retrieve_sdk; a filtered attempt under an
    unreachable reference threshold -> retry_unfiltered: every node of the graph shows."""
    settings = kb_settings.model_copy(
        update={"reference_threshold": 0.99, "record_invocations": False}
    )
    runtime = LookupRuntime(
        settings,
        embeddings=real_embeddings,
        path_factories={"vectorstore": lambda: FailingPath("vectorstore")},
    )
    tool = make_tool(settings, graph=build_lookup_graph(runtime=runtime))
    collector = RunCollectorCallbackHandler()
    msg = tool.invoke(call("redis memory eviction"), config={"callbacks": [collector]})
    assert msg.status == "success"
    root = tool_run_of(collector)
    (pipeline,) = children(root, "lookup_pipeline")
    assert {c.name for c in pipeline.child_runs} >= PIPELINE_NODES
    (failed,) = children(children(pipeline, "retrieve_vectorstore")[0], "l1_search_vectorstore")
    assert failed.run_type == "retriever"
    assert "injected outage" in (failed.error or "")
    for node in ("retrieve_sdk", "retry_unfiltered"):
        (search,) = children(children(pipeline, node)[0], "l1_search_sdk")
        assert search.run_type == "retriever"
        assert search.outputs["documents"]
    retry = children(children(pipeline, "retry_unfiltered")[0], "l1_search_sdk")[0]
    assert retry.extra["metadata"]["filter"] == ""  # the L0 category filter was dropped
    meta = root.extra["metadata"]
    assert meta["lookup_fallback_reason"] == "filtered_vector_low_quality"
    assert meta["lookup_attempts"][0] == "filtered@vectorstore:error"
    assert meta["lookup_attempts"][1].startswith("filtered@sdk:low_quality")
    assert meta["lookup_recording"] == "disabled"


def test_failed_lookup_tool_run_carries_the_failure(kb_settings, real_embeddings):
    collector = RunCollectorCallbackHandler()
    tool = make_tool(kb_settings, graph=failing_graph(kb_settings, real_embeddings))
    msg = tool.invoke(call("node is NotReady"), config={"callbacks": [collector]})
    assert msg.status == "error"
    meta = tool_run_of(collector).extra["metadata"]
    assert meta["lookup_found"] is False
    assert [a.split("@")[1] for a in meta["lookup_attempts"]] == ["vectorstore:error", "sdk:error"]


class CapturingLangSmithClient:
    """FAKE LangSmith client: keeps the create/update payloads ``LangChainTracer`` sends."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.updated: list[dict[str, Any]] = []

    def create_run(self, **kwargs: Any) -> None:
        self.created.append(kwargs)

    def update_run(self, **kwargs: Any) -> None:
        self.updated.append(kwargs)

    def flush(self) -> None:
        pass


def test_langsmith_receives_the_metadata_on_the_tool_run(kb_settings, real_embeddings):
    client = CapturingLangSmithClient()
    tracer = LangChainTracer(client=client, project_name="offline")  # type: ignore[arg-type]
    make_tool(kb_settings, embeddings=real_embeddings).invoke(
        call("TLS certificate expired"), config={"callbacks": [tracer]}
    )
    tracer.wait_for_futures()
    (start,) = [r for r in client.created if r["name"] == "lookup_knowledge"]
    (end,) = [r for r in client.updated if r["name"] == "lookup_knowledge"]
    assert "lookup_found" not in start["extra"]["metadata"]  # unknown when the run starts
    assert end["extra"]["metadata"]["lookup_found"] is True
    assert "networking/tls-certificate-expiry.md" in end["extra"]["metadata"]["lookup_sources"]
    (search,) = [r for r in client.updated if r["run_type"] == "retriever"]
    assert search["outputs"]["documents"]
    # each chunk's text goes to LangSmith once (its document), not again in the metadata,
    # which holds plain JSON values only
    for doc in search["outputs"]["documents"]:
        if not isinstance(doc, Document):
            doc = Document(page_content=doc["page_content"], metadata=doc["metadata"])
        metadata = json.dumps(doc.metadata)
        assert doc.page_content[:60] not in metadata
    assert search["parent_run_id"] in {
        r["run_id"] for r in client.updated if r["name"] == "retrieve_vectorstore"
    }
    # the node runs LangSmith receives carry the summaries: the text once, in the documents
    (node,) = [r for r in client.updated if r["name"] == "retrieve_vectorstore"]
    posted = node["outputs"]["candidates"]
    assert posted["evidence_keys"] == [
        (d.metadata if isinstance(d, Document) else d["metadata"])["evidence_key"]
        for d in search["outputs"]["documents"]
    ]
    assert set(posted) == {"count", "by_attempt", "evidence_keys"}  # no text, no scores again


# --- what each node's run records: trace-only summaries that say what the node decided ---------
def node_run(runs: list[Run], name: str) -> Run:
    (run,) = [r for r in runs if r.name == name]
    return run


def test_node_runs_record_summaries_that_say_what_each_node_decided(kb_settings, real_embeddings):
    collector = RunCollectorCallbackHandler()
    msg = make_tool(kb_settings, embeddings=real_embeddings).invoke(
        call("etcd is slow and the API server times out"), config={"callbacks": [collector]}
    )
    artifact = msg.artifact
    runs = walk(tool_run_of(collector))
    (search,) = [r for r in runs if r.run_type == "retriever"]
    docs = search.outputs["documents"]
    # transform_query: the plan in full, the query vector only as its size
    transform = node_run(runs, "transform_query")
    assert transform.outputs["query_vector"] == {"float32_values": 384}
    assert transform.outputs["plan"].search_text == artifact["query"]
    # retrieval: the candidates' keys in rank order; their text, scores and score labels are
    # the documents of the node's own retriever run (a child of the node's run), once
    retrieve = node_run(runs, "retrieve_vectorstore")
    assert search.parent_run_id == retrieve.id
    attempt = retrieve.outputs["attempts"][0]
    assert retrieve.outputs["candidates"] == {
        "count": len(docs),
        "by_attempt": {attempt.name: len(docs)},
        "evidence_keys": [d.metadata["evidence_key"] for d in docs],
    }
    assert attempt.candidates == len(docs)
    assert all(d.metadata["score_label"]["similarity"] > 0 for d in docs)
    assert search.extra["metadata"]["l1_path"] == attempt.path  # the labels' path, said once
    assert all("path" not in d.metadata["score_label"] for d in docs)
    # a node that reads them records a reference: what it read, not the values again
    assert node_run(runs, "postprocess").inputs["candidates"] == {
        "count": len(docs),
        "by_attempt": {attempt.name: len(docs)},
    }
    assert node_run(runs, "postprocess").inputs["plan"]["search_text"] == artifact["query"]
    # postprocess: the step counts and the rerank trace (every boost) of the returned blocks
    selection = node_run(runs, "postprocess").outputs["selection"]
    assert selection["final_count"] == len(artifact["evidenceBlocks"])
    assert selection["candidate_count"] == artifact["retrievalTrace"]["candidateCount"]
    assert [e.to_json_dict() for e in selection["rerank_trace"]] == artifact["rerankTrace"]
    assert selection["contributing_attempts"] == artifact["retrievalTrace"]["contributingAttempts"]
    # pack_context: what was packed within the budget, without the packed text
    assert node_run(runs, "pack_context").inputs["selection"]["evidence_keys"] == [
        b["evidenceKey"] for b in artifact["evidenceBlocks"]
    ]
    pack = node_run(runs, "pack_context").outputs["context_pack"]
    assert pack["included_sources"] == artifact["contextPack"]["includedSources"]
    assert pack["text_chars"] == len(artifact["contextPack"]["text"])
    assert "text" not in pack
    # assemble_result: the decision (found, relevance, hint, blocks and scores)
    decided = node_run(runs, "assemble_result").outputs["lookup_result"]
    assert decided["found"] is artifact["found"] is True
    assert decided["relevance_level"] == artifact["relevanceLevel"]
    assert decided["completeness_hint"] == artifact["completenessHint"]
    assert [b["evidence_key"] for b in decided["evidence_blocks"]] == [
        b["evidenceKey"] for b in artifact["evidenceBlocks"]
    ]
    trace = artifact["retrievalTrace"]
    assert decided["retrieval_trace"]["selected_attempt"] == trace["selectedAttempt"]
    assert decided["retrieval_trace"]["contributing_attempts"] == trace["contributingAttempts"]
    # its attempts by name: the attempts themselves (and the timings) are the node's input
    assert decided["retrieval_trace"]["attempts"] == [a["name"] for a in trace["attempts"]]
    assert [a.name for a in node_run(runs, "assemble_result").inputs["attempts"]] == [
        a["name"] for a in trace["attempts"]
    ]
    assert "timings_ms" in node_run(runs, "assemble_result").inputs
    # record_invocation: the recording's outcome
    recorded = node_run(runs, "record_invocation").outputs["result"]
    assert recorded["recording"] == artifact["retrievalTrace"]["recording"]
    assert recorded["recording"]["status"] == "ok"
    # The whole result is on the graph run (and the tool run), the chunk text on the retriever
    # run: no node run repeats either.
    (pipeline,) = children(tool_run_of(collector), "lookup_pipeline")
    assert pipeline.outputs["result"] == artifact
    text = artifact["evidenceBlocks"][0]["content"][:80]
    for run in runs:
        if run.run_type == "chain" and run is not pipeline:
            assert text not in json.dumps({"i": run.inputs, "o": run.outputs}, default=str)


async def test_the_tracer_gets_summaries_and_streamed_events_the_full_state(
    kb_settings, real_embeddings
):
    """In one run: a tracer records the summaries, while astream_events (and so the next node)
    gets the real values."""
    graph = build_lookup_graph(
        kb_settings.model_copy(update={"record_invocations": False}), embeddings=real_embeddings
    )
    collector = RunCollectorCallbackHandler()
    ended: dict[str, Any] = {}
    async for event in graph.astream_events(
        {"query": "redis memory eviction"}, config={"callbacks": [collector]}, version="v2"
    ):
        if event["event"] == "on_chain_end" and event["name"] in PIPELINE_NODES:
            ended[event["name"]] = event["data"]["output"]
    candidates = ended["retrieve_vectorstore"]["candidates"]
    assert candidates
    assert all(c.content for c in candidates)  # Candidate models, their text included
    (root,) = collector.traced_runs
    traced = node_run(walk(root), "retrieve_vectorstore").outputs["candidates"]
    assert traced["evidence_keys"] == [c.evidence_key for c in candidates]
    assert set(traced) == {"count", "by_attempt", "evidence_keys"}  # the text is not recorded
    assert len(ended["transform_query"]["query_vector"]) == 384 * 4  # the packed vector
    assert ended["pack_context"]["context_pack"].text
    blocks = ended["record_invocation"]["result"]["evidenceBlocks"]
    assert blocks
    assert all(b["content"] for b in blocks)


def _without_times(value: Any) -> Any:
    """``value`` with every timing and latency removed (they differ from call to call)."""
    if isinstance(value, dict):
        return {
            k: _without_times(v)
            for k, v in value.items()
            if k not in {"timingsMs", "latencyMs", "latency_ms", "timings_ms"}
        }
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_the_trace_policy_runs_only_when_a_tracer_receives_the_call(
    kb_settings, real_embeddings, monkeypatch
):
    """LangGraph applies a node's trace policy on every call; the tool runs its graph without
    the policy when no tracer is attached, so an untraced call makes no summary."""
    from langchain_lookup_knowledge.pipeline import tracing

    summarized: list[int] = []
    real_apply = tracing._apply

    def counted(values: Any, table: Any) -> Any:
        summarized.append(1)
        return real_apply(values, table)

    monkeypatch.setattr(tracing, "_apply", counted)  # a spy: the summaries are still made
    tool = make_tool(
        kb_settings.model_copy(update={"record_invocations": False}), embeddings=real_embeddings
    )
    question = "etcd is slow and the API server times out"
    assert tool.invoke(call(question)).artifact["found"]
    assert summarized == []
    tool.invoke(call(question), config={"callbacks": [RunCollectorCallbackHandler()]})
    assert len(summarized) >= 2 * 6  # each node's input and update, 6 nodes at least


def test_an_untraced_lookup_returns_what_a_traced_one_returns(
    kb_settings, real_embeddings, monkeypatch
):
    """Without a callback handler the L1 search runs without its retriever run (nobody could
    see it) and the tool run's metadata is never made: the result is the same to the key."""
    from langchain_lookup_knowledge.retrieval.traced import L1SearchRetriever

    retriever_runs: list[str] = []
    real_invoke = L1SearchRetriever.invoke

    def counted(self: L1SearchRetriever, *args: Any, **kwargs: Any) -> Any:
        retriever_runs.append(self.path.name)
        return real_invoke(self, *args, **kwargs)

    monkeypatch.setattr(L1SearchRetriever, "invoke", counted)  # a spy: the real run goes on
    settings = kb_settings.model_copy(update={"record_invocations": False})
    tool = make_tool(settings, embeddings=real_embeddings)
    for question in ("etcd is slow and the API server times out", "recipe for chocolate cake"):
        collector = RunCollectorCallbackHandler()
        traced = tool.invoke(call(question), config={"callbacks": [collector]})
        assert retriever_runs
        retriever_runs.clear()
        untraced = tool.invoke(call(question))
        assert retriever_runs == []
        assert untraced.content == traced.content
        assert _without_times(untraced.artifact) == _without_times(traced.artifact)
