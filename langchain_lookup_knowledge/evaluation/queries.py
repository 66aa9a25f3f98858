"""``lookup-knowledge eval queries FILE``: a team's own question set, scored per document.

The file is JSONL, one ``{"q": question, "rel": [file stems]}`` per line; ``"rel": []`` marks a
question the knowledge base does not answer (out of scope), and an optional ``"kb"`` names the
knowledge base a row belongs to. A ranking is the document stems of the evidence blocks (or bare
chunks) in order, first place wins; ``@5`` is measured on the first five, as the tool returns
them with ``top_k=5``.

With ``--kb PATH`` the same run, at the same k, scores the bare langchain configurations over
that folder (:data:`BARE_CONFIGS`): ``RecursiveCharacterTextSplitter(1000/100)`` ->
``langchain_milvus.Milvus`` with the same embedder, dense, BM25 (jieba for a Chinese folder),
and hybrid RRF with langchain-milvus's default ``fetch_k`` and with ``fetch_k=50``. Each gets a
paired bootstrap interval of the pipeline's difference. ``--ablate`` runs the pipeline again
with one component off at a time (:data:`ABLATIONS`).

Out-of-scope questions measure the evidence decision: the share of in-scope questions with
``found=true``, of out-of-scope ones with ``found=false``, and per ``relevanceLevel`` the share
of answers whose first block is a relevant document.

A held-out file (its name holds ``test`` or ``holdout``) is scored blind: the report carries
its numbers but no question text, ranking or signal, so nobody tunes on what it shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.bare_runs import (
    BARE_CHUNK_OVERLAP,
    BARE_CHUNK_SIZE,
    BARE_CONFIGS,
    BareConfig,
    bare_chunks,
    bare_configs_for,
    run_baselines,
)
from langchain_lookup_knowledge.evaluation.baseline import progress_enabled
from langchain_lookup_knowledge.evaluation.decision import (
    decision_rates,
    first_is_relevant,
)
from langchain_lookup_knowledge.evaluation.queries_format import (
    format_decision,
    format_judgement,
    format_queries,
)
from langchain_lookup_knowledge.evaluation.question_sets import (
    HELD_OUT_MARKERS,
    QuestionSet,
    is_held_out,
    load_questions,
    question_paths,
)
from langchain_lookup_knowledge.evaluation.runner import eval_settings
from langchain_lookup_knowledge.evaluation.scoring import (
    INTERVAL_METRICS,
    METRICS,
    K,
    PipelineRunner,
    indexed_only,
    indexed_sources,
    intervals_of,
    scores_of,
    system_report,
)
from langchain_lookup_knowledge.evaluation.variants import (
    ABLATIONS,
    ablation_overrides,
    variant_overrides,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.embedder_record import settings_for_collection

__all__ = [
    "ABLATIONS",
    "BARE_CHUNK_OVERLAP",
    "BARE_CHUNK_SIZE",
    "BARE_CONFIGS",
    "HELD_OUT_MARKERS",
    "INTERVAL_METRICS",
    "METRICS",
    "BareConfig",
    "K",
    "QuestionSet",
    "ablation_overrides",
    "bare_chunks",
    "format_decision",
    "format_judgement",
    "format_queries",
    "indexed_sources",
    "is_held_out",
    "load_questions",
    "run_queries",
    "variant_overrides",
]


def _has_cjk_question(qset: QuestionSet) -> bool:
    from langchain_lookup_knowledge.knowledge.chunking import cjk_ratio

    return any(cjk_ratio(q) > 0.3 for q in qset.queries.values())


def run_queries(
    path: str | Path | Sequence[str | Path],
    settings: LookupSettings,
    *,
    kb: str | Path | None = None,
    kb_name: str | None = None,
    ablate: bool | Sequence[str] = False,
    blind: bool | None = None,
    show_progress: bool | None = None,
    bare: Sequence[str] | None = None,
    bare_uri: str | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Score the question file on the pipeline collection (and bare baselines with ``kb``).

    Args:
        path: The JSONL question file(s), concatenated.
        settings: The pipeline's settings (its collection must be ingested).
        kb: The knowledge folder the bare configurations index.
        kb_name: Keep only rows whose ``"kb"`` is this (rows without one are kept).
        ablate: True for every component of :data:`ABLATIONS`, or the names to switch off.
        blind: Leave question texts, rankings and signals out of the report; None: for a
            held-out file (:func:`is_held_out`).
        show_progress: Progress bars (None: on a terminal).
        bare: The names of :data:`BARE_CONFIGS` to run (None: all of them).
        bare_uri: The Milvus URI of the bare collections (None: the pipeline's).
        variants: Pipeline variants by name, each settings overrides (``rerank_weights`` on
            top of the user's): each is scored on the same questions in the same run, with
            its per-question scores and the interval of its difference from the pipeline
            (``variants.<name>.vs_pipeline``); ``eval pool --variant`` pools them.

    Raises:
        ConfigurationError: an unknown name in ``bare``, or a variant's setting (before
            anything runs).
    """
    configs = bare_configs_for(bare)
    variant_settings = {
        name: variant_overrides(settings, overrides) for name, overrides in (variants or {}).items()
    }
    progress = progress_enabled(show_progress)
    blind = is_held_out(path) if blind is None else blind
    qset = load_questions(path, kb_name=kb_name)
    sources = indexed_sources(settings)
    # The collection's own model (embedding_provider=auto), for the pipeline and the bare
    # wirings alike: like with like.
    settings, _ = settings_for_collection(open_client(settings), settings)
    qset, not_indexed = indexed_only(qset, sources)
    if not qset.in_scope:
        raise ConfigurationError(
            f"no question of {path} is about a document in collection {settings.collection!r}: "
            "was it ingested from the folder these questions are about?"
        )
    runner = PipelineRunner(settings, qset, progress)
    run = runner.run()
    pipeline, ours = system_report(run, qset, blind=blind)
    per_question: dict[str, dict[str, list[float]]] = {"pipeline": ours}

    baselines: dict[str, Any] = {}
    if kb is not None:
        bare_settings = (
            settings.model_copy(update={"milvus_uri": bare_uri}) if bare_uri else settings
        )
        baselines, bare_values = run_baselines(
            Path(kb), bare_settings, runner, qset, progress, only=sources or None, configs=configs
        )
        per_question |= bare_values
        for name in baselines:
            baselines[name]["vs_pipeline"] = intervals_of(ours, bare_values[name])

    ablations: dict[str, Any] = {}
    names = list(ABLATIONS) if ablate is True else list(ablate or [])
    for name in names:
        if name == "cjk_rule" and not _has_cjk_question(qset):
            continue
        variant = runner.run(desc=f"ablate {name}", **ablation_overrides(settings, name))
        scores, values = scores_of(variant, qset)
        ablations[name] = scores | {
            "off": ABLATIONS[name][0],
            "decision": decision_rates(variant, qset.qrels),
            # what the component adds: full pipeline minus the pipeline without it
            "gain": intervals_of(ours, values),
        }

    variant_reports: dict[str, Any] = {}
    for name, overrides in variant_settings.items():
        variant = runner.run(desc=f"variant {name}", **overrides)
        scores, values = scores_of(variant, qset)
        variant_reports[name] = scores | {
            "overrides": dict((variants or {})[name]),
            "timing": variant.timing(),
            "decision": decision_rates(variant, qset.qrels),
            "vs_pipeline": intervals_of(values, ours),
            "per_question": values,
        }

    result: dict[str, Any] = {
        "questions": len(qset.queries),
        "in_scope": len(qset.in_scope),
        "out_of_scope": len(qset.out_of_scope),
        "questions_not_indexed": len(not_indexed),
        "not_indexed": [] if blind else not_indexed,
        "file": ", ".join(str(p) for p in question_paths(path)),
        "blind": blind,
        "collection": settings.collection,
        "kb_name": kb_name,
        **{m: pipeline[m] for m in METRICS},
        "pipeline": pipeline,
        "baselines": baselines,
        "ablations": ablations,
        "variants": variant_reports,
        "per_question": per_question,
        "settings": {
            "retrieval_mode": settings.retrieval_mode,
            "fusion": settings.fusion,
            "candidate_k": eval_settings(settings, top_k=K).rerank_pool,
            "top_k": K,
            "per_document_cap": settings.per_document_cap,
        },
    }
    if not blind:
        result["signals"] = [
            {"id": q, "kb": qset.kbs[q], "in_scope": bool(qset.qrels[q])}
            | run.extra["signals"].get(q, {})
            | {"correct": first_is_relevant(run.rankings.get(q, []), qset.qrels[q])}
            for q in qset.queries
        ]
    for name, scores in baselines.items():
        result[f"recall@5_vs_{name}"] = round(pipeline["recall@5"] - scores["recall@5"], 4)
        result[f"mrr@10_vs_{name}"] = round(pipeline["mrr@10"] - scores["mrr@10"], 4)
    return result
