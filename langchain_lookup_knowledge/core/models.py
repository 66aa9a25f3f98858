"""The result contract: pydantic models with snake_case attributes and camelCase JSON keys.

Example:
    >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", content="x", score=0.7)
    >>> block.model_dump(by_alias=True)["evidenceKey"]
    'a.md#0'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

RetrievalLayer = Literal["L0", "L1", "L0+L1"]
RelevanceLevel = Literal["high", "medium", "low"]
EvidenceStatus = Literal["evidence", "no_evidence"]
FallbackReason = Literal["filtered_vector_no_evidence", "filtered_vector_low_quality"]
AttemptStatus = Literal["ok", "empty", "low_quality", "error"]
ErrorKind = Literal["configuration", "transient", "damaged"]


class ContractModel(BaseModel):
    """Base: camelCase aliases, populate by field name too."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def to_json_dict(self) -> dict[str, Any]:
        """The camelCase JSON-ready dict of this model."""
        return self.model_dump(by_alias=True, mode="json")


class ScoreLabel(ContractModel):
    """What a score means: the path that produced it, the metric, raw and normalized values."""

    path: str  # "vectorstore" | "sdk"
    metric: str  # "COSINE" | "IP" | "L2" | "BM25" | "RRF" | "WEIGHTED"
    raw: float
    similarity: float  # normalized dense similarity in [0, 1]; thresholds compare this only
    formula: str
    kind: str = "dense"  # "dense" | "sparse" | "hybrid"
    rank_score: float | None = None  # fused ranking score in [0, 1] (hybrid/sparse); None: dense
    # BM25 score of the chunk over the best BM25 score among the attempt's candidates, in
    # [0, 1] (0: no query term); a hybrid hit's, only when the rerank base mixes it in
    lexical_score: float | None = None

    @property
    def base(self) -> float:
        """What rerank starts from: the fused ranking score, else the similarity."""
        return self.similarity if self.rank_score is None else self.rank_score


class HitReason(ContractModel):
    """One reason a block ranks where it does, with its contribution to the final score."""

    kind: str  # "l1_similarity" | "l0_title" | "l0_keyword" | "l0_alias" | "l0_entity" | ...
    detail: str
    contribution: float = 0.0
    path: str | None = None


class ChunkIdentity(ContractModel):
    """Which chunk: its identity and where it sits (shared by candidates and evidence blocks)."""

    evidence_key: str
    source: str
    title: str = ""
    breadcrumb: str = ""
    category: str = ""


class Candidate(ChunkIdentity):
    """One L1 hit, normalized across paths (VectorStore and SDK give the same shape)."""

    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    rank: int  # 1-based rank within its attempt
    score_label: ScoreLabel
    attempt: str = ""  # name of the attempt that produced it


class EvidenceBlock(ChunkIdentity):
    """The unit of evidence the agent reads."""

    retrieval_layer: RetrievalLayer = "L1"
    content: str
    score: float = 0.0
    score_label: ScoreLabel | None = None
    hit_reasons: list[HitReason] = Field(default_factory=list)


class L0Hints(ContractModel):
    """What L0 matched in the catalog: steering data, never evidence."""

    matched_titles: list[str] = Field(default_factory=list)
    matched_keywords: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    matched_sources: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when nothing matched."""
        return not (self.matched_titles or self.matched_keywords or self.domains or self.entities)


class RetrievalAttempt(ContractModel):
    """One L1 search: which filter, which path, what came back, how long it took."""

    name: str  # "filtered" | "unfiltered" | "unfiltered_retry"
    filter: str | None = None
    path: str | None = None
    candidates: int = 0
    top_similarity: float | None = None
    latency_ms: float = 0.0
    status: AttemptStatus = "ok"
    error: str | None = None
    error_kind: ErrorKind | None = None  # configuration: retrying will not help
    path_fallback: str | None = None  # why auto mode went from vectorstore to sdk


class RetrievalError(ContractModel):
    """Why a lookup could not search at all (every L1 step failed), decided once.

    ``kind="configuration"``: the collection is missing, its schema does not fit the embedder,
    a setting or filter cannot work: retrying will not help until an operator fixes it.
    ``kind="transient"``: Milvus or the embedding service is down, locked or slow: try again.
    ``kind="damaged"``: the store's files are missing or corrupt, or it holds no chunks while its
    catalog lists documents: retrying will not help; rebuild it (``ingest --rebuild``).
    """

    kind: ErrorKind
    message: str

    @property
    def retryable(self) -> bool:
        """True for a transient fault."""
        return self.kind == "transient"


class SidecarReport(ContractModel):
    """Comparison run of another L1 path; never affects the main result."""

    status: str  # "disabled" | "ok" | "error" | "timeout"
    path: str | None = None
    error: str | None = None
    overlap_at_k: float | None = None
    k: int | None = None
    results: list[dict[str, Any]] = Field(default_factory=list)
    rank_differences: list[dict[str, Any]] = Field(default_factory=list)
    latency_ms: float | None = None


class RetrievalTrace(ContractModel):
    """Every attempt, the one selected, and why a retry happened."""

    attempts: list[RetrievalAttempt] = Field(default_factory=list)
    selected_attempt: str | None = None  # the attempt of record: its ranks count in the rerank
    contributing_attempts: list[str] = Field(default_factory=list)  # whose candidates are blocks
    fallback_reason: FallbackReason | None = None
    path_used: str | None = None
    retrieval_mode: str = "dense"
    candidate_count: int = 0
    final_count: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    sidecar: SidecarReport | None = None
    recording: dict[str, Any] | None = None


class RerankEntry(ContractModel):
    """Why a block got its final rank."""

    rank: int
    evidence_key: str
    source: str
    base_score: float | None
    final_score: float
    boosts: list[HitReason] = Field(default_factory=list)


class ContextPack(ContractModel):
    """The text the agent reads, within a budget; metadata is never truncated."""

    text: str = ""
    included_sources: list[str] = Field(default_factory=list)
    omitted_sources: list[str] = Field(default_factory=list)
    budget: int = 0
    used: int = 0
    truncated: bool = False


class LookupResult(ContractModel):
    """The evidence-first result of one ``lookup_knowledge`` call."""

    query: str
    found: bool
    evidence_status: EvidenceStatus
    message: str
    evidence_blocks: list[EvidenceBlock] = Field(default_factory=list)
    context_pack: ContextPack = Field(default_factory=ContextPack)
    retrieval_trace: RetrievalTrace = Field(default_factory=RetrievalTrace)
    rerank_trace: list[RerankEntry] = Field(default_factory=list)
    relevance_level: RelevanceLevel = "low"
    completeness_hint: str = ""
    l0_hints: L0Hints = Field(default_factory=L0Hints)
    retrieval_layer: RetrievalLayer | None = None
    error: RetrievalError | None = None  # set when retrieval could not run at all
