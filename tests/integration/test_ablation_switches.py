"""The settings switches ``eval queries --ablate`` turns off really change the pipeline.

Real parts: the bundled sample knowledge base in Milvus Lite, the real embedder.
"""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.settings import LookupSettings

TERM_BOOSTS = ("query_term_coverage", "title_term_overlap")


def lookup(settings: LookupSettings, embeddings, query: str, **overrides):
    graph = build_lookup_graph(
        settings.model_copy(update={"record_invocations": False, **overrides}),
        embeddings=embeddings,
    )
    return LookupResult.model_validate(graph.invoke({"query": query})["result"])


def test_l0_category_filter_off_searches_unfiltered(sample_kb_store, real_embeddings):
    query = "postgresql replication lag"  # L0: the databases folder, unambiguous
    default = lookup(sample_kb_store, real_embeddings, query)
    assert default.retrieval_trace.attempts[0].name == "filtered"
    assert "databases" in (default.retrieval_trace.attempts[0].filter or "")
    off = lookup(sample_kb_store, real_embeddings, query, l0_category_filter=False)
    assert [a.name for a in off.retrieval_trace.attempts] == ["unfiltered"]
    assert off.retrieval_trace.attempts[0].filter is None
    assert off.l0_hints.domains == default.l0_hints.domains  # L0 still hints


def test_rerank_weights_turn_a_boost_family_off(sample_kb_store, real_embeddings):
    query = "pod keeps restarting with crashloopbackoff"
    default = lookup(sample_kb_store, real_embeddings, query)
    kinds = {b.kind for entry in default.rerank_trace for b in entry.boosts}
    assert set(TERM_BOOSTS) <= kinds
    off = lookup(
        sample_kb_store, real_embeddings, query, rerank_weights=dict.fromkeys(TERM_BOOSTS, 0.0)
    )
    kinds_off = {b.kind for entry in off.rerank_trace for b in entry.boosts}
    assert not set(TERM_BOOSTS) & kinds_off
    assert off.rerank_trace[0].final_score < default.rerank_trace[0].final_score


def test_an_unknown_rerank_weight_is_named():
    with pytest.raises(ConfigurationError, match="l0_titel"):
        LookupSettings(rerank_weights={"l0_titel": 0.1})
    with pytest.raises(ConfigurationError, match="first_chunk"):
        LookupSettings(rerank_weights={"first_chunk": -1})
