"""Scoring a run against a question set: metrics per question, intervals, misses.

Example:
    >>> METRICS
    ('recall@5', 'mrr@5', 'mrr@10', 'ndcg@10', 'recall@10')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_lookup_knowledge.evaluation.decision import (
    decision_rates,
    judgement_rates,
)
from langchain_lookup_knowledge.evaluation.metrics import aggregate, dedupe, per_query
from langchain_lookup_knowledge.evaluation.question_sets import QuestionSet
from langchain_lookup_knowledge.evaluation.runner import (
    RunOutput,
    eval_settings,
    rounded,
    run_pipeline,
    stem,
)
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "INTERVAL_METRICS",
    "METRICS",
    "K",
    "PipelineRunner",
    "indexed_only",
    "indexed_sources",
    "intervals_of",
    "misses_at_5",
    "scores_of",
    "system_report",
]


METRICS = ("recall@5", "mrr@5", "mrr@10", "ndcg@10", "recall@10")


INTERVAL_METRICS = ("recall@5", "mrr@5", "ndcg@10")


K = 10


def misses_at_5(
    rankings: dict[str, list[str]], qset: QuestionSet, k: int = 5
) -> list[dict[str, Any]]:
    out = []
    for qid in qset.in_scope:
        top = dedupe(rankings.get(qid, [])[:k])
        if not set(qset.qrels[qid]) & set(top):
            out.append({"q": qset.queries[qid], "rel": sorted(qset.qrels[qid]), "got": top[:3]})
    return out


def indexed_sources(settings: LookupSettings) -> set[str]:
    """The sources in the collection's catalog (what the pipeline indexed); empty if none.

    Raises:
        CollectionNotFoundError: the chunk collection does not exist (never ingested).
    """
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.schema import require_chunk_collection

    client = open_client(settings)
    sources = {e.source for e in load_catalog(client, settings.resolved_catalog_collection)}
    if not sources:  # a figure of 0.000 over a collection never ingested would mislead
        require_chunk_collection(client, settings)
    return sources


def indexed_only(qset: QuestionSet, sources: set[str]) -> tuple[QuestionSet, list[dict[str, Any]]]:
    """Leave out in-scope questions whose documents the pipeline never indexed (refused, or
    not in this collection): they measure nothing about retrieval, for every system alike.
    Out-of-scope questions stay."""
    if not sources:
        return qset, []
    stems = {stem(s) for s in sources}
    keep = [q for q in qset.queries if not qset.qrels[q] or set(qset.qrels[q]) & stems]
    skipped = [
        {"q": qset.queries[q], "rel": sorted(qset.qrels[q])}
        for q in qset.queries
        if q not in set(keep)
    ]
    kept = QuestionSet(
        queries={q: qset.queries[q] for q in keep},
        qrels={q: qset.qrels[q] for q in keep},
        kbs={q: qset.kbs[q] for q in keep},
    )
    return kept, skipped


def scores_of(run: RunOutput, qset: QuestionSet) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Mean metrics and per-question values (in-scope questions, file order)."""
    values = {m: per_query(run.rankings, qset.qrels, m) for m in METRICS}
    per_question = {m: [values[m][q] for q in qset.in_scope] for m in METRICS}
    return rounded(aggregate(run.rankings, qset.qrels, METRICS)), per_question


def intervals_of(
    ours: Mapping[str, Sequence[float]], theirs: Mapping[str, Sequence[float]]
) -> dict[str, dict[str, float | int]]:
    return {m: paired_bootstrap(ours[m], theirs[m]).as_dict() for m in INTERVAL_METRICS}


class PipelineRunner:
    """Builds and runs pipeline variants over one question set."""

    def __init__(self, settings: LookupSettings, qset: QuestionSet, progress: bool) -> None:
        from langchain_lookup_knowledge.embeddings import build_embeddings

        self.settings = settings
        self.qset = qset
        self.progress = progress
        self.embedder = build_embeddings(settings)

    def run(self, desc: str = "pipeline", **overrides: Any) -> RunOutput:
        from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
        from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

        settings = eval_settings(self.settings, top_k=K, **overrides)
        runtime = LookupRuntime.configured(settings, embeddings=self.embedder)
        graph = build_lookup_graph(runtime=runtime)
        return run_pipeline(
            graph,
            self.qset.queries,
            doc_id=stem,
            desc=desc,
            progress=self.progress,
            settings=settings,
            vocabulary=runtime.vocabulary().vocabulary,
        )


def system_report(
    run: RunOutput, qset: QuestionSet, *, blind: bool
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    metrics, per_question = scores_of(run, qset)
    rates = decision_rates(run, qset.qrels)
    report: dict[str, Any] = metrics | {
        "timing": run.timing(),
        "fallbacks": run.extra["fallbacks"],
        "decision": rates,
        "judgement": judgement_rates(run, qset.qrels),
        "relevance": {lvl: rates["levels"][lvl]["count"] for lvl in ("high", "medium", "low")},
    }
    report["misses@5"] = (
        len(misses_at_5(run.rankings, qset)) if blind else misses_at_5(run.rankings, qset)
    )
    return report, per_question
