"""What an L1 path is asked, and the protocol every path implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from langchain_lookup_knowledge.pipeline.models import Candidate


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


class L1Path(Protocol):
    """A way to search the chunk collection (VectorStore or SDK). Sync; async wraps it."""

    name: str

    def search(self, request: SearchRequest) -> list[Candidate]:
        """Candidates for the request, ranked, in the common shape."""
        ...
