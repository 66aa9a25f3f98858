"""How L0 steers and L1 searches: the path, dense / BM25 / hybrid, depth, filters, retries.

Example:
    >>> RetrievalSettings().rerank_pool, RetrievalSettings(top_k=10).rerank_pool
    (15, 30)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_lookup_knowledge.settings.types import (
    CANDIDATES_PER_BLOCK,
    RetrievalMode,
    RetrievalPathMode,
    UnitInterval,
)

__all__ = ["RetrievalSettings"]

FilterValue = str | int | float | bool | list[str | int | float | bool]


class RetrievalSettings(BaseModel):
    """The L1 search and the L0 steering of it."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    mode: RetrievalPathMode = Field(
        default="auto",
        description="L1 path: vectorstore (langchain-milvus; alias spring-ai), sdk (pymilvus), "
        "auto (vectorstore, falling back to sdk).",
    )
    retrieval_mode: RetrievalMode = Field(
        default="hybrid", description="dense, hybrid (dense+BM25 fused) or sparse (BM25)."
    )
    fusion: Literal["rrf", "weighted"] = Field(default="rrf", description="Hybrid fusion.")
    rrf_k: int = Field(
        default=10,
        ge=1,
        description="RRF constant: 1/(rrf_k+rank) per list. 10 favours the top of each list "
        "more than the textbook 60 (measured better on SciFact and the runbooks).",
    )
    dense_weight: UnitInterval = Field(default=0.6, description="Weighted fusion: dense.")
    cjk_retrieval_mode: RetrievalMode | Literal["auto"] = Field(
        default="auto",
        description="retrieval_mode for a question mostly in CJK script. auto: sparse (BM25 "
        "with jieba) while the embedder is the bundled English-only model, else retrieval_mode.",
    )
    l1_enabled: bool = Field(default=True, description="False: L0 alone (never evidence).")
    top_k: int = Field(default=5, ge=1, le=50, description="Evidence blocks returned.")
    candidate_k: int | None = Field(
        default=None,
        ge=1,
        le=200,
        description="L1 candidates fetched for the rerank; None: 3 x top_k (15 for the tool's "
        "5 blocks, 30 for an evaluation's 10). Never fewer than top_k.",
    )
    bm25_drop_stopwords: bool | Literal["auto"] = Field(
        default="auto",
        description="BM25 searches the question without English stopwords. auto: in "
        "collections of 5,000+ chunks, where their posting lists make BM25 slow (SciFact, "
        "10,652 chunks: hybrid search 40% faster, nDCG@10 +0.002); a small collection keeps "
        "them (fast anyway, and there they still nudge the ranking).",
    )
    hybrid_fetch_factor: int = Field(
        default=1,
        ge=1,
        le=10,
        description="Hybrid search: each list (dense, BM25) brings candidate_k x this many "
        "hits to the fusion. 1 and 2 rank alike on SciFact and the runbook sets; 1 is faster.",
    )
    hybrid_list_depth: int = Field(
        default=0,
        ge=0,
        le=1000,
        description="Hybrid search: each list (dense, BM25) brings at least this many hits to "
        "the fusion (candidate_k x hybrid_fetch_factor when that is more); 0: no minimum. "
        "RRF finds a chunk that ranks well in both lists only if both lists reach it; the "
        "rerank pool (candidate_k) stays as it is. 50 (the depth of bare hybrid fetch_k=50): "
        "at most one question better on the dev sets, and the L1 search 1.4-1.6x as slow, so "
        "it is off by default.",
    )
    reference_threshold: UnitInterval = Field(
        default=0.62,
        description="Top normalized similarity under which a filtered attempt is retried "
        "without the L0 filter: an L0 category filter stands only when its evidence is at "
        "least this similar (a folder name such as 'node' in a question is a weak hint).",
    )
    l0_category_filter: bool = Field(
        default=True,
        description="Filter the first L1 attempt by the L0 domain when it is unambiguous. "
        "False: L0 hints still boost the rerank, but never filter (``eval queries --ablate``).",
    )
    l0_retry_guard: bool = Field(
        default=True,
        description="After the L0-filtered attempt was judged empty or weak and retried "
        "unfiltered, its candidates rank after the retry's and its domain gives no boost. "
        "False: both attempts' candidates compete on their scores (``eval queries --ablate``).",
    )
    default_filter: dict[str, FilterValue] | None = Field(
        default=None,
        description="Authoritative caller filter (e.g. a tenant), never relaxed by any retry. "
        "A list matches any of its values.",
    )
    sidecar_enabled: bool = Field(default=False, description="Run a comparison path beside.")
    sidecar_path: Literal["other", "vectorstore", "sdk"] = Field(
        default="other", description="Which path the sidecar runs (other = not the main one)."
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _accept_spring_ai_alias(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in {"spring-ai", "spring_ai"}:
            return "vectorstore"
        return value

    @field_validator("default_filter")
    @classmethod
    def _default_filter_is_safe(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        from langchain_lookup_knowledge.core.filters import filter_to_expr

        if value is not None and not value:  # an authoritative filter that filters nothing
            raise ValueError(
                "an empty filter would match every tenant: name a field and its value "
                '({"tenant": "acme"}), or leave default_filter unset for no filter'
            )
        filter_to_expr(value)  # UnsafeFilterError (a ValueError) names the field or value
        return value

    @property
    def rerank_pool(self) -> int:
        """How many L1 candidates a lookup fetches and reranks (``candidate_k`` resolved)."""
        return self.rerank_pool_for(self.top_k)

    def rerank_pool_for(self, top_k: int) -> int:
        """:attr:`rerank_pool` for a lookup that returns ``top_k`` blocks (a call's own ``k``).

        Example:
            >>> RetrievalSettings().rerank_pool_for(20)
            60
        """
        return max(self.candidate_k or CANDIDATES_PER_BLOCK * top_k, top_k)
