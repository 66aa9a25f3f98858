"""The LangChain ``VectorStore`` L1 path: ``langchain_milvus.Milvus`` on the existing collection.

It is opened on the collection's real field names with explicit index and search params (without
them langchain-milvus assumes L2 on reopen). Dense search goes by the precomputed query vector;
hybrid / sparse go through the store's BM25 built-in function with an explicit ranker (the
implicit WeightedRanker breaks on a second call). Hybrid hits carry no vector: their dense
similarity comes from their stored vectors, which the hybrid store returns with the hits
(:class:`_DenseVectorOutputMilvus`: the vector copies where the collection has them, read as one
array), else fetched by primary key in one call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from pymilvus import Function, FunctionType

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
    sparse_label,
)
from langchain_lookup_knowledge.retrieval.sdk import (
    SPARSE_SEARCH_PARAMS,
    bm25_search,
    with_bm25_scores,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import connection_args
from langchain_lookup_knowledge.store.schema import (
    CollectionLayout,
    dense_index_params,
    dense_search_params,
)

_DENSE_VECTOR_KEY = "__dense_vector__"
"""Metadata key under which a hybrid hit carries its stored dense vector (removed before use)."""


@cache
def _without_vector_copy_class() -> type[Any]:
    """``Milvus`` whose searches leave out the collection's vector copy (``vector_copy_field``).

    langchain-milvus returns every scalar field of the collection: a hit of a collection with
    vector copies would carry 2 KB of base64 in its metadata. Without it, a search costs what
    it costs on a collection without the copies.
    """
    from langchain_milvus import Milvus

    class _WithoutVectorCopyMilvus(Milvus):
        vector_copy_field: str | None = None

        def _get_output_fields(self) -> list[str]:
            fields: list[str] = super()._get_output_fields()
            return [f for f in fields if f != self.vector_copy_field]

    return _WithoutVectorCopyMilvus


@cache
def _dense_vector_output_class() -> type[Any]:
    """``Milvus`` whose searches also return the dense vector of each hit.

    langchain-milvus drops vector fields from its output fields, so hybrid hits come without the
    dense vector the pipeline needs for their cosine; fetching it costs a second round trip.
    This subclass asks for it in the same search (its copy, where the collection has one:
    :attr:`CollectionLayout.returned_vector_field`) and keeps it in the metadata under
    ``_DENSE_VECTOR_KEY`` (a row of the hits' vectors read at once: :func:`take_hit_vectors`).
    """

    class _DenseVectorOutputMilvus(_without_vector_copy_class()):  # type: ignore[misc]
        layout: CollectionLayout

        def _get_output_fields(self) -> list[str]:
            # Not the BM25 input field (the lexical form of the text): nothing reads it back.
            lexical = self.layout.lexical_field
            fields = [f for f in super()._get_output_fields() if f != lexical]
            return [*fields, self.layout.returned_vector_field]

        def _parse_document(self, data: dict[str, Any]) -> Document:
            vector = entity_vector(data, self.layout)
            data.pop(self.layout.vector_field, None)
            doc = super()._parse_document(data)
            if vector is not None:
                doc.metadata[_DENSE_VECTOR_KEY] = vector
            return doc

        def _parse_documents_from_search_results(
            self, col_search_res: list[list[dict[str, Any]]] | None
        ) -> list[tuple[Document, float]]:
            vectors = take_hit_vectors(col_search_res[0], self.layout) if col_search_res else None
            pairs: list[tuple[Document, float]] = super()._parse_documents_from_search_results(
                col_search_res
            )
            if vectors is not None:
                for (doc, _), vector in zip(pairs, vectors, strict=True):
                    doc.metadata[_DENSE_VECTOR_KEY] = vector
            return pairs

    return _DenseVectorOutputMilvus


class PrecomputedQueryEmbeddings(Embeddings):
    """Embeddings that answer ``embed_query`` with a vector given beforehand (per thread).

    langchain-milvus's hybrid search embeds its query string itself; the pipeline already has
    the query's vector (embedded once per lookup) and gives the store a different string (the
    BM25 text). Inside :meth:`given`, ``embed_query`` returns the given vector; outside it, and
    for documents, the wrapped embeddings answer.

    Example:
        >>> from langchain_core.embeddings import FakeEmbeddings
        >>> emb = PrecomputedQueryEmbeddings(FakeEmbeddings(size=2))
        >>> with emb.given([0.6, 0.8]):
        ...     emb.embed_query("any text")
        [0.6, 0.8]
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._local = threading.local()

    @contextmanager
    def given(self, vector: list[float]) -> Iterator[None]:
        """``embed_query`` returns ``vector`` in this thread until the block ends."""
        previous = getattr(self._local, "vector", None)
        self._local.vector = vector
        try:
            yield
        finally:
            self._local.vector = previous

    def embed_query(self, text: str) -> list[float]:
        """The given vector, else the wrapped embeddings' answer."""
        vector = getattr(self._local, "vector", None)
        return list(vector) if vector is not None else self.inner.embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The wrapped embeddings' vectors."""
        return self.inner.embed_documents(texts)


def open_vectorstore(
    settings: LookupSettings,
    layout: CollectionLayout,
    embeddings: Embeddings,
    *,
    hybrid: bool,
    dense_vectors: bool = True,
) -> Any:
    """A ``langchain_milvus.Milvus`` bound to the existing collection (never creates one).

    The hybrid store also returns each hit's dense vector (one round trip, not two), unless
    ``dense_vectors=False`` (a ``Milvus`` as a user would open it). No store returns the
    collection's vector copy as a field (:func:`_without_vector_copy_class`).
    """
    from langchain_milvus import BM25BuiltInFunction

    dense_index = dense_index_params(settings) | {
        "index_type": layout.index_type,
        "metric_type": layout.metric_type,
    }
    kwargs: dict[str, Any] = {
        "embedding_function": embeddings,
        "collection_name": layout.name,
        "connection_args": connection_args(settings),
        "primary_field": layout.id_field,
        "text_field": layout.content_field,
        "auto_id": False,
        "metadata_field": None,
        "enable_dynamic_field": False,
    }
    if hybrid and layout.sparse_field:
        kwargs |= {
            "vector_field": [layout.vector_field, layout.sparse_field],
            "builtin_function": BM25BuiltInFunction(
                input_field_names=layout.lexical_field or layout.content_field,
                output_field_names=layout.sparse_field,
                enable_match=False,
            ),
            "index_params": [
                dense_index,
                {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25"},
            ],
            "search_params": [dense_search_params(layout, settings), SPARSE_SEARCH_PARAMS],
        }
        if dense_vectors:
            store = _dense_vector_output_class()(**kwargs)
            store.layout = layout
            store.vector_copy_field = layout.vector_copy_field
            return store
    else:
        kwargs |= {
            "vector_field": layout.vector_field,
            "index_params": dense_index,
            "search_params": dense_search_params(layout, settings),
        }
    store = _without_vector_copy_class()(**kwargs)
    store.vector_copy_field = layout.vector_copy_field
    return store


class VectorStorePath:
    """L1 through ``langchain_milvus.Milvus`` (the spec's "Spring AI VectorStore" path).

    Example:
        >>> path = VectorStorePath(settings, layout, embeddings)  # doctest: +SKIP
        >>> path.search(SearchRequest("disk full", vector, None, k=5))  # doctest: +SKIP
    """

    name = "vectorstore"

    def __init__(
        self, settings: LookupSettings, layout: CollectionLayout, embeddings: Embeddings
    ) -> None:
        self.layout = layout
        self.settings = settings
        self.timeout = settings.milvus_timeout_s
        self.dense_store = open_vectorstore(settings, layout, embeddings, hybrid=False)
        self._query_vectors = PrecomputedQueryEmbeddings(embeddings)
        self.hybrid_store = (
            open_vectorstore(settings, layout, self._query_vectors, hybrid=True)
            if layout.has_bm25
            else None
        )
        if self.dense_store.col is None:
            msg = f"langchain-milvus could not open collection {layout.name!r}"
            raise RuntimeError(msg)

    def search(self, request: SearchRequest) -> list[Candidate]:
        """Run the request in its retrieval mode; candidates ranked best first."""
        if request.retrieval_mode == "dense" or self.hybrid_store is None:
            pairs = self.dense_store.similarity_search_with_score_by_vector(
                request.query_vector, request.k, timeout=self.timeout, **self._params(request)
            )
            return [
                self._candidate(
                    doc, dense_label(self.name, self.layout.metric_type, score), rank, request
                )
                for rank, (doc, score) in enumerate(pairs, start=1)
            ]
        if request.retrieval_mode == "sparse":
            pairs = bm25_search(
                self.hybrid_store.client, self.layout, request, timeout=self.timeout
            )
            docs = [
                (self.hybrid_store._parse_document(dict(h["entity"])), h["distance"]) for h in pairs
            ]
        else:
            # The store embeds the text it is given for its dense list: hand it the vector
            # this lookup already has, and the BM25 text for its sparse list.
            with self._query_vectors.given(request.query_vector):
                docs = self.hybrid_store.similarity_search_with_score(
                    request.bm25_text,
                    k=request.k,
                    fetch_k=request.fetch_k,
                    reranker=_ranker(request),
                    timeout=self.timeout,
                    **self._params(request, hybrid=True),
                )
        sims = self._dense_similarities(request.query_vector, docs)
        out = []
        for rank, (doc, score) in enumerate(docs, start=1):
            sim = sims.get(str(doc.metadata.get(self.layout.id_field)), 0.0)
            label: ScoreLabel
            if request.retrieval_mode == "sparse":
                label = sparse_label(self.name, score, rank, sim, rrf_k=request.rrf_k)
            else:
                label = fused_label(
                    self.name, request.fusion, score, sim, lists=2, rrf_k=request.rrf_k
                )
            out.append(self._candidate(doc, label, rank, request))
        if request.retrieval_mode == "sparse":
            return out
        client = self.hybrid_store.client
        return with_bm25_scores(client, self.layout, request, out, timeout=self.timeout)

    def _params(self, request: SearchRequest, *, hybrid: bool = False) -> dict[str, Any]:
        """The filter, and ``param=`` for a call's ``k`` beyond the configured pool (an HNSW
        index's ef must cover it; else the store's own search parameters)."""
        if request.k <= self.settings.rerank_pool:
            return {"expr": request.expr}
        dense = dense_search_params(self.layout, self.settings, request.k)
        return {"expr": request.expr, "param": [dense, SPARSE_SEARCH_PARAMS] if hybrid else dense}

    def _candidate(
        self, doc: Document, label: ScoreLabel, rank: int, request: SearchRequest
    ) -> Candidate:
        fields = dict(doc.metadata)
        fields[self.layout.content_field] = doc.page_content
        return candidate_from_fields(fields, self.layout, label, rank, request.attempt)

    def _dense_similarities(
        self, query_vector: list[float], docs: list[tuple[Document, float]]
    ) -> dict[str, float]:
        keys = [str(doc.metadata.get(self.layout.id_field)) for doc, _ in docs]
        vectors = {
            key: doc.metadata.pop(_DENSE_VECTOR_KEY)
            for key, (doc, _) in zip(keys, docs, strict=True)
            if _DENSE_VECTOR_KEY in doc.metadata
        }
        missing = [k for k in keys if k not in vectors]
        if missing:
            client = self.dense_store.client
            vectors |= fetch_dense_vectors(client, self.layout, missing, timeout=self.timeout)
        ordered = [k for k in keys if k in vectors]
        sims = cosine_to(query_vector, [vectors[k] for k in ordered])
        return dict(zip(ordered, sims, strict=True))


def _ranker(request: SearchRequest) -> Function:
    if request.fusion == "rrf":
        params: dict[str, Any] = {"reranker": "rrf", "k": request.rrf_k}
    else:
        params = {
            "reranker": "weighted",
            "weights": [request.dense_weight, 1.0 - request.dense_weight],
        }
    return Function(
        name=f"{request.fusion}_ranker",
        input_field_names=[],
        function_type=FunctionType.RERANK,
        params=params,
    )
