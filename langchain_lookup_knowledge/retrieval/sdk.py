"""The raw pymilvus (``MilvusClient``) L1 path: dense ``search``, BM25, and ``hybrid_search``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pymilvus import AnnSearchRequest, Function, FunctionType, MilvusClient

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.retrieval.hits import (
    candidate_from_fields,
    entity_vector,
    fetch_dense_vectors,
    take_hit_vectors,
)
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.scores import (
    cosine_to,
    dense_label,
    fused_label,
    scaled_bm25,
    sparse_label,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.schema import CollectionLayout, dense_search_params

SPARSE_SEARCH_PARAMS: dict[str, Any] = {"metric_type": "BM25", "params": {"drop_ratio_search": 0.0}}


def hybrid_ranker(request: SearchRequest) -> Function:
    """The RERANK function that fuses the dense and BM25 lists of a ``hybrid_search``: RRF with
    ``request.rrf_k``, or the two scores weighted ``dense_weight`` / ``1 - dense_weight``, each
    normalised first (``norm_score``).

    Example:
        >>> r = hybrid_ranker(SearchRequest("q", [0.0], None, k=5, fusion="rrf", rrf_k=60))
        >>> r.params
        {'reranker': 'rrf', 'k': 60}
    """
    if request.fusion == "rrf":
        params: dict[str, Any] = {"reranker": "rrf", "k": request.rrf_k}
    else:
        weights = [request.dense_weight, 1.0 - request.dense_weight]
        params = {"reranker": "weighted", "weights": weights, "norm_score": True}
    return Function(
        name=f"{request.fusion}_ranker",
        input_field_names=[],
        function_type=FunctionType.RERANK,
        params=params,
    )


def bm25_search(
    client: MilvusClient,
    layout: CollectionLayout,
    request: SearchRequest,
    *,
    timeout: float,
    output_fields: list[str] | None = None,
) -> list[dict[str, Any]]:
    """BM25 hits of the query text (Milvus's built-in function), with each dense vector (or
    only ``output_fields``)."""
    return list(
        client.search(
            layout.name,
            data=[request.bm25_text],
            anns_field=layout.sparse_field,
            search_params=SPARSE_SEARCH_PARAMS,
            limit=request.k,
            filter=request.expr or "",
            output_fields=layout.fields_with_vector if output_fields is None else output_fields,
            timeout=timeout,
        )[0]
    )


def with_bm25_scores(
    client: MilvusClient,
    layout: CollectionLayout,
    request: SearchRequest,
    candidates: list[Candidate],
    *,
    timeout: float,
) -> list[Candidate]:
    """The fused candidates, each label with its ``lexical_score`` (its scaled BM25 score).

    A hybrid search returns each hit's fused score only. When the rerank base mixes in BM25
    (``RerankWeights.bm25_share`` > 0, ``request.bm25_scores``), one more BM25 search,
    restricted to the candidates' keys, gives their BM25 scores (a candidate without a query
    term gets none: 0).

    Example:
        >>> with_bm25_scores(client, layout, request, candidates, timeout=10)  # doctest: +SKIP
    """
    if not request.bm25_scores or not candidates or not layout.sparse_field:
        return candidates
    keys = [c.evidence_key for c in candidates]
    among_candidates = replace(request, k=len(keys), expr=condition(layout.id_field, keys))
    hits = bm25_search(
        client, layout, among_candidates, timeout=timeout, output_fields=[layout.id_field]
    )
    raw = {str(h["entity"].get(layout.id_field, h.get("id"))): float(h["distance"]) for h in hits}
    scaled = scaled_bm25(keys, raw)
    return [
        c.model_copy(
            update={
                "score_label": c.score_label.model_copy(
                    update={"lexical_score": scaled[c.evidence_key]}
                )
            }
        )
        for c in candidates
    ]


class SdkPath:
    """L1 through ``MilvusClient`` on the same collection as the VectorStore path.

    Example:
        >>> path = SdkPath(client, layout, settings)  # doctest: +SKIP
        >>> path.search(SearchRequest("disk full", vector, None, k=5))  # doctest: +SKIP
    """

    name = "sdk"

    def __init__(self, client: MilvusClient, layout: CollectionLayout, settings: LookupSettings):
        self.client = client
        self.layout = layout
        self.timeout = settings.milvus_timeout_s
        self.settings = settings
        self.dense_params = dense_search_params(layout, settings)

    def _dense_params(self, request: SearchRequest) -> dict[str, Any]:
        """The dense search parameters for ``request`` (a call's own larger ``k`` included)."""
        if request.k <= self.settings.rerank_pool:
            return self.dense_params
        return dense_search_params(self.layout, self.settings, request.k)

    def search(self, request: SearchRequest) -> list[Candidate]:
        """Run the request in its retrieval mode; candidates ranked best first."""
        if request.retrieval_mode == "dense" or not self.layout.has_bm25:
            return self._dense(request)
        if request.retrieval_mode == "sparse":
            return self._sparse(request)
        return self._hybrid(request)

    def _dense(self, request: SearchRequest) -> list[Candidate]:
        hits = self.client.search(
            self.layout.name,
            data=[request.query_vector],
            anns_field=self.layout.vector_field,
            search_params=self._dense_params(request),
            limit=request.k,
            filter=request.expr or "",
            output_fields=self.layout.scalar_fields,
            timeout=self.timeout,
        )[0]
        return [
            candidate_from_fields(
                hit["entity"],
                self.layout,
                dense_label(self.name, self.layout.metric_type, hit["distance"]),
                rank,
                request.attempt,
            )
            for rank, hit in enumerate(hits, start=1)
        ]

    def _sparse(self, request: SearchRequest) -> list[Candidate]:
        hits = bm25_search(self.client, self.layout, request, timeout=self.timeout)
        return self._scored_by_cosine(
            hits,
            request,
            lambda raw, rank, sim: sparse_label(self.name, raw, rank, sim, rrf_k=request.rrf_k),
        )

    def _hybrid(self, request: SearchRequest) -> list[Candidate]:
        fetch = request.fetch_k
        reqs = [
            AnnSearchRequest(
                [request.query_vector],
                self.layout.vector_field,
                self._dense_params(request),
                fetch,
                expr=request.expr or None,
            ),
            AnnSearchRequest(
                [request.bm25_text],
                self.layout.sparse_field or "",
                SPARSE_SEARCH_PARAMS,
                fetch,
                expr=request.expr or None,
            ),
        ]
        hits = self.client.hybrid_search(
            self.layout.name,
            reqs,
            hybrid_ranker(request),
            limit=request.k,
            output_fields=self.layout.fields_with_vector,
            timeout=self.timeout,
        )[0]
        fused = self._scored_by_cosine(
            hits,
            request,
            lambda raw, _rank, sim: fused_label(
                self.name, request.fusion, raw, sim, lists=2, rrf_k=request.rrf_k
            ),
        )
        return with_bm25_scores(self.client, self.layout, request, fused, timeout=self.timeout)

    def _scored_by_cosine(
        self,
        hits: list[dict[str, Any]],
        request: SearchRequest,
        label_for: Callable[[float, int, float], ScoreLabel],
    ) -> list[Candidate]:
        """Candidates of BM25 / fused hits, each labelled with its dense cosine to the query."""
        sims = cosine_to(request.query_vector, self._hit_vectors(hits))
        return [
            candidate_from_fields(
                hit["entity"],
                self.layout,
                label_for(hit["distance"], rank, sim),
                rank,
                request.attempt,
            )
            for rank, (hit, sim) in enumerate(zip(hits, sims, strict=True), start=1)
        ]

    def _hit_vectors(self, hits: list[dict[str, Any]]) -> Any:
        """The stored dense vector of each hit (row i: hit i); those a hit came without (a row
        written without a vector copy) fetched by key."""
        vectors = take_hit_vectors(hits, self.layout)
        if vectors is not None:
            return vectors
        found = [entity_vector(hit["entity"], self.layout) for hit in hits]
        key_of = [str(h["entity"].get(self.layout.id_field, h.get("id"))) for h in hits]
        missing = [key for key, vector in zip(key_of, found, strict=True) if vector is None]
        if missing:
            fetched = fetch_dense_vectors(self.client, self.layout, missing, timeout=self.timeout)
            zero = [0.0] * self.layout.dimension  # deleted since the search: cosine 0
            found = [
                fetched.get(key, zero) if vector is None else vector
                for key, vector in zip(key_of, found, strict=True)
            ]
        return found
