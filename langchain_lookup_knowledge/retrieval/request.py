"""What an L1 path is asked, and the protocol every path implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.core.models import Candidate
from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.core.search_depth import hybrid_list_depth
from langchain_lookup_knowledge.retrieval.bm25_query import bm25_query_text, drops_bm25_stopwords
from langchain_lookup_knowledge.settings import LookupSettings


@dataclass(frozen=True)
class SearchRequest:
    """One L1 search: the query (text for BM25, vector for dense: embedded once) and a filter."""

    query_text: str
    query_vector: list[float]
    expr: str | None
    k: int
    retrieval_mode: str = "dense"  # "dense" | "hybrid" | "sparse"
    fusion: str = "rrf"
    rrf_k: int = 60
    dense_weight: float = 0.6
    fetch_factor: int = 1  # hybrid: each list fetches k * fetch_factor before fusion
    list_depth: int = 0  # hybrid: ... and at least this many
    sparse_text: str | None = None  # what BM25 searches for (None: query_text)
    bm25_scores: bool = False  # hybrid: also give each candidate its BM25 score (lexical_score)
    attempt: str = ""  # the attempt the search is for: its candidates' ``attempt``

    @property
    def bm25_text(self) -> str:
        """The text the BM25 search is given."""
        return self.sparse_text or self.query_text

    @classmethod
    def configured(
        cls,
        settings: LookupSettings,
        *,
        query_text: str,
        query_vector: list[float],
        expr: str | None,
        k: int,
        retrieval_mode: str,
        row_count: int = 0,
        lexical: LexicalForm | None = None,
    ) -> SearchRequest:
        """A request with the fusion and BM25 settings of ``settings``.

        ``row_count``: the collection's size (``bm25_drop_stopwords=auto`` decides by it).
        ``lexical``: the lexical form of the collection's BM25 input (the BM25 text is put in
        the same form: stems, identifier parts); ``None``: the collection indexes plain text.
        """
        sparse = bm25_query_text(query_text) if drops_bm25_stopwords(settings, row_count) else None
        if lexical is not None:
            sparse = lexical.apply(sparse or query_text)
        return cls(
            query_text=query_text,
            query_vector=query_vector,
            expr=expr,
            k=k,
            retrieval_mode=retrieval_mode,
            fusion=settings.fusion,
            rrf_k=settings.rrf_k,
            dense_weight=settings.dense_weight,
            fetch_factor=settings.hybrid_fetch_factor,
            list_depth=settings.hybrid_list_depth,
            sparse_text=sparse,
            bm25_scores=RerankWeights.of(settings.rerank_weights).bm25_share > 0,
        )

    @property
    def fetch_k(self) -> int:
        """How many hits each list of a hybrid search brings to the fusion: ``k`` x
        ``fetch_factor``, and at least ``list_depth``.

        Example:
            >>> SearchRequest("q", [0.1], None, k=15, list_depth=50).fetch_k
            50
        """
        return hybrid_list_depth(self.k, self.fetch_factor, self.list_depth)


class L1Path(Protocol):
    """A way to search the chunk collection (VectorStore or SDK). Sync; async wraps it."""

    name: str

    def search(self, request: SearchRequest) -> list[Candidate]:
        """Candidates for the request, ranked, in the common shape."""
        ...


class PathProvider(Protocol):
    """Where L1 paths come from by name (a :class:`~..pipeline.runtime.LookupRuntime`)."""

    @property
    def settings(self) -> LookupSettings:
        """The configuration the paths were made from."""
        ...

    def path(self, name: str) -> L1Path:
        """The path called ``name`` ("vectorstore" or "sdk"), created once."""
        ...
