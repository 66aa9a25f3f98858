"""One rule for the depth of a hybrid search's lists: the request's ``fetch_k`` and the HNSW
``ef`` of the dense search parameters both come from ``core.search_depth.hybrid_list_depth``."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.core.search_depth import hybrid_list_depth
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.schema import CollectionLayout, dense_search_params


def _hnsw_layout() -> CollectionLayout:
    return CollectionLayout(
        name="kb", id_field="pk", content_field="text", vector_field="vector", dimension=384,
        metric_type="COSINE", index_type="HNSW", sparse_field="sparse", metadata_field=None,
        category_field=None, source_field=None, analyzer="standard",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("k", "factor", "depth", "expected"),
    [(15, 1, 0, 15), (15, 3, 0, 45), (15, 1, 50, 50), (15, 4, 50, 60), (5, 0, 0, 5)],
)
def test_the_rule(k: int, factor: int, depth: int, expected: int) -> None:
    assert hybrid_list_depth(k, factor, depth) == expected


@pytest.mark.parametrize(
    "update",
    [
        {},
        {"hybrid_fetch_factor": 3},
        {"hybrid_list_depth": 50},
        {"hybrid_list_depth": 200, "hnsw_ef": 64},
        {"candidate_k": 40, "hybrid_fetch_factor": 2},
        {"hnsw_ef": 500, "hybrid_list_depth": 50},
    ],
)
def test_hnsw_ef_covers_the_depth_every_hybrid_list_is_asked_for(update: dict[str, int]) -> None:
    settings = LookupSettings(**update)  # type: ignore[arg-type]
    request = SearchRequest.configured(
        settings, query_text="q", query_vector=[0.1], expr=None, k=settings.rerank_pool,
        retrieval_mode="hybrid",
    )  # fmt: skip
    ef = dense_search_params(_hnsw_layout(), settings)["params"]["ef"]
    assert ef == max(settings.hnsw_ef, request.fetch_k)
    assert request.fetch_k == hybrid_list_depth(
        settings.rerank_pool, settings.hybrid_fetch_factor, settings.hybrid_list_depth
    )
