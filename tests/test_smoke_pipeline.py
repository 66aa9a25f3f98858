"""End-to-end smoke: the sample KB answers an ops question and refuses an off-topic one."""

from __future__ import annotations

from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph


def test_sample_kb_answers_crashloop_question(sample_kb_store, real_embeddings):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings)
    result = graph.invoke({"query": "my pod keeps crashing and restarting"})["result"]
    assert result.found
    assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"
    assert result.evidence_status == "evidence"


def test_off_topic_question_is_never_high_relevance(sample_kb_store, real_embeddings):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings)
    result = graph.invoke({"query": "recipe for chocolate cake"})["result"]
    assert result.relevance_level != "high"
