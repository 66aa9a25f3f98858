"""One owner per fact: the graph, ``compare`` and ``bench`` prepare a question with one function;
one redacted description of an exception serves every sink; the retriever takes ``k`` per call
on one compiled graph. (The records scrubber: test_records_store.py and
tests/unit/test_tie_break.py; code nothing calls: tests/unit/test_no_uncalled_code.py.)"""

from __future__ import annotations

import json

from langchain_lookup_knowledge import LookupKnowledgeRetriever, LookupRuntime
from langchain_lookup_knowledge import retriever as retriever_module
from langchain_lookup_knowledge.compare import compare_paths
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.transform import prepare_query
from langchain_lookup_knowledge.retrieval.sidecar import start_sidecar
from tests.fakes import FailingPath

PASSWORD = "s3cret-pw-42"
SECRET_URL = f"http://admin:{PASSWORD}@milvus.internal:19530"


def test_compare_searches_the_question_the_graph_searches(sample_kb_store, real_embeddings):
    # A control character and a lone surrogate, as a model or a terminal may send them.
    question = "etcd\x00 fsync is\ud800 slow  "
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings, recorder=None)
    searched = graph.invoke({"query": question})["result"]["query"]
    runtime = LookupRuntime(sample_kb_store, embeddings=real_embeddings)
    report = compare_paths(question, sample_kb_store, k=3, runtime=runtime)
    assert report["query"] == searched == "etcd  fsync is  slow"
    assert report["vectorstore"]["status"] == "ok", report["vectorstore"]
    assert report["sdk"]["status"] == "ok", report["sdk"]
    json.dumps(report)  # no lone surrogate left to break the CLI's JSON


def test_compare_and_sidecar_errors_are_redacted(sample_kb_store, real_embeddings):
    settings = sample_kb_store.model_copy(update={"sidecar_path": "sdk"})
    failing = {"sdk": lambda: FailingPath("sdk", message=f"cannot reach {SECRET_URL}")}
    runtime = LookupRuntime(settings, embeddings=real_embeddings, path_factories=failing)
    report = compare_paths("disk is full", settings, k=3, runtime=runtime)
    sidecar = start_sidecar(
        runtime, prepare_query(runtime, "disk is full").first_request(), main_path="vectorstore"
    ).report([])
    for error in (report["sdk"]["error"], sidecar.error):
        assert error is not None
        assert error.startswith("ConnectionError: cannot reach http://admin:***@"), error
        assert PASSWORD not in error
    assert report["vectorstore"]["status"] == "ok"  # the other path is still shown


def test_retriever_takes_k_per_call_on_one_compiled_graph(
    kb_settings, real_embeddings, monkeypatch
):
    built: list[object] = []

    def counting(*args, **kwargs):  # a spy: the real graph, counted
        graph = build_lookup_graph(*args, **kwargs)
        built.append(graph)
        return graph

    monkeypatch.setattr(retriever_module, "build_lookup_graph", counting)
    retriever = LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings)
    question = "pgbouncer connection pool exhausted"
    sizes = {k: len(retriever.invoke(question, k=k)) for k in (1, 2)}
    assert sizes == {1: 1, 2: 2}
    seven = retriever.invoke(question, k=7)
    wide = retriever.invoke(question, k=60)  # beyond the tool's top_k limit (50)
    assert len(built) == 1
    assert 2 < len(seven) <= 7
    assert len(seven) <= len(wide)
    # The same blocks as a graph built for that k.
    own = build_lookup_graph(
        kb_settings.model_copy(update={"top_k": 7}), embeddings=real_embeddings, recorder=None
    ).invoke({"query": question})
    assert [d.id for d in seven] == [b["evidenceKey"] for b in own["result"]["evidenceBlocks"]]
