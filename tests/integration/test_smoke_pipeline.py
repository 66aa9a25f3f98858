"""End-to-end smoke: the sample KB answers an ops question and refuses an off-topic one."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

# The README's off-topic question first, then other people's phrasing of questions the sample
# knowledge base does not answer.
OFF_TOPIC = [
    "recipe for chocolate cake",
    "how long should I bake a chocolate cake at 180 degrees",
    "what is the capital of France",
    "who won the 1998 football world cup",
]


def test_sample_kb_answers_crashloop_question(sample_kb_store, real_embeddings):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings)
    result = LookupResult.model_validate(
        graph.invoke({"query": "my pod keeps crashing and restarting"})["result"]
    )
    assert result.found
    assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"
    assert result.evidence_status == "evidence"


@pytest.mark.parametrize("query", OFF_TOPIC)
def test_off_topic_question_comes_back_found_false(sample_kb_store, real_embeddings, query):
    """The README: an off-topic question comes back ``found=false`` (no_evidence), not a weak
    guess; its similarity stays below ``min_evidence_similarity``."""
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings)
    result = LookupResult.model_validate(graph.invoke({"query": query})["result"])
    assert result.found is False
    assert result.evidence_status == "no_evidence"
    assert result.evidence_blocks == []
    assert result.context_pack.text == ""
    assert result.relevance_level == "low"
    top = max((a.top_similarity or 0.0) for a in result.retrieval_trace.attempts)
    assert top < sample_kb_store.min_evidence_similarity
