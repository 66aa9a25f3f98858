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

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.baseline import (
    BareKind,
    BareStore,
    SharedDocumentVectors,
    bm25_analyzer_params,
    progress_enabled,
    rrf_ranker,
)
from langchain_lookup_knowledge.evaluation.decision import decision_rates, first_is_relevant
from langchain_lookup_knowledge.evaluation.metrics import aggregate, dedupe, per_query
from langchain_lookup_knowledge.evaluation.runner import (
    RunOutput,
    embedder_fingerprint,
    eval_settings,
    rounded,
    run_pipeline,
    run_search,
    short_hash,
    stem,
    systems_table,
)
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap
from langchain_lookup_knowledge.questions import (
    Question,
    UnreadableQuestion,
    read_question_file,
    readable_only,
)
from langchain_lookup_knowledge.settings import LookupSettings

METRICS = ("recall@5", "mrr@5", "mrr@10", "ndcg@10", "recall@10")
INTERVAL_METRICS = ("recall@5", "mrr@5", "ndcg@10")
K = 10
BARE_CHUNK_SIZE = 1000
BARE_CHUNK_OVERLAP = 100
HELD_OUT_MARKERS = ("test", "holdout")


@dataclass(frozen=True)
class BareConfig:
    """One bare wiring: the store kind and the extra ``similarity_search`` arguments."""

    kind: BareKind
    fetch_k: int | None = None  # hybrid only; None: langchain-milvus's default (4)


BARE_CONFIGS: dict[str, BareConfig] = {
    "dense": BareConfig("dense"),
    "bm25": BareConfig("bm25"),
    "hybrid": BareConfig("hybrid"),
    "hybrid_fetch50": BareConfig("hybrid", fetch_k=50),
}
"""The ten-minute wirings a LangChain user would build, each scored in the same run."""

_L0_BOOSTS = ("l0_title", "l0_keyword", "l0_alias", "l0_entity", "domain_match")
ABLATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "l0_filter": ("L0 category filter", {"l0_category_filter": False}),
    "retry_guard": (
        "retry guard (an unreliable filtered attempt ranks last)",
        {"l0_retry_guard": False},
    ),
    "l0_boosts": ("L0 boosts (title, keyword, alias, entity, domain)", {"_weights": _L0_BOOSTS}),
    "term_boosts": (
        "query-term boosts (coverage, title overlap)",
        {"_weights": ("query_term_coverage", "title_term_overlap")},
    ),
    "first_chunk": ("first-chunk boost", {"_weights": ("first_chunk",)}),
    "rank_mix": ("fused rank in the rerank base", {"_similarity_only": True}),
    "doc_cap": ("per-document cap", {"per_document_cap": K}),
    "list_depth": (
        "hybrid list depth (each list only candidate_k x hybrid_fetch_factor deep)",
        {"hybrid_list_depth": 0},
    ),
    "cjk_rule": ("CJK rule (BM25 alone for a Chinese question)", {"_cjk_rule_off": True}),
}
"""Name -> (what is switched off, settings overrides). ``_``-keys are resolved per run."""


@dataclass(frozen=True)
class QuestionSet:
    """Questions (``q1``, ``q2``, ... in file order), their judgements and knowledge bases.

    An out-of-scope question has empty judgements.
    """

    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]
    kbs: dict[str, str]

    @property
    def in_scope(self) -> list[str]:
        """Ids of questions with at least one relevant document."""
        return [q for q in self.queries if self.qrels[q]]

    @property
    def out_of_scope(self) -> list[str]:
        """Ids of questions the knowledge base does not answer."""
        return [q for q in self.queries if not self.qrels[q]]


def is_held_out(paths: str | Path | Sequence[str | Path]) -> bool:
    """A test or holdout split among ``paths``, by file name: scored blind.

    Example:
        >>> is_held_out("evals/tidb_zh_test.jsonl"), is_held_out(["evals/tidb_zh_dev.jsonl"])
        (True, False)
    """
    return any(marker in path.name.lower() for path in _paths(paths) for marker in HELD_OUT_MARKERS)


def _paths(paths: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    return [Path(p).expanduser() for p in items]


def load_questions(
    paths: str | Path | Sequence[str | Path], *, kb_name: str | None = None
) -> QuestionSet:
    """Read question files (concatenated in order); with ``kb_name``, only rows of that
    ``"kb"`` (and rows without one), e.g. one knowledge base's out-of-scope questions.

    Raises:
        ConfigurationError: missing file, bad JSON, a line without ``q`` or ``rel``, or no
            question left.
    """
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, float]] = {}
    kbs: dict[str, str] = {}
    for file in _paths(paths):
        _read_rows(file, kb_name, queries, qrels, kbs)
    if not queries:
        where = f" for kb {kb_name!r}" if kb_name is not None else ""
        names = ", ".join(str(p) for p in _paths(paths))
        raise ConfigurationError(f"no questions in {names}{where}")
    return QuestionSet(queries=queries, qrels=qrels, kbs=kbs)


def _read_rows(
    file: Path,
    kb_name: str | None,
    queries: dict[str, str],
    qrels: dict[str, dict[str, float]],
    kbs: dict[str, str],
) -> None:
    items = [
        UnreadableQuestion(
            item.origin,
            'expected {"q": ..., "rel": [stems]} ("rel": [] for a question the knowledge base '
            "does not answer)",
        )
        if isinstance(item, Question) and not item.judged
        else item
        for item in read_question_file(file)
    ]
    for question in readable_only(items, str(file)):
        if kb_name is not None and question.kb and question.kb != kb_name:
            continue
        qid = f"q{len(queries) + 1}"
        queries[qid] = question.text
        qrels[qid] = {stem(r): 1.0 for r in question.relevant if r}
        kbs[qid] = question.kb


def bare_chunks(
    kb: Path,
    chunk_size: int = BARE_CHUNK_SIZE,
    chunk_overlap: int = BARE_CHUNK_OVERLAP,
    only: set[str] | None = None,
) -> tuple[list[Document], list[str]]:
    """What a bare user indexes: every markdown file read as text, split recursively
    (``only``: just these relative paths, the files the pipeline indexed)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    kb = kb.resolve()  # the loader lists resolved paths (a relative --kb must match them)
    docs: list[Document] = []
    ids: list[str] = []
    for path in iter_markdown_files(kb):
        text = path.read_text(encoding="utf-8", errors="replace")
        source = path.relative_to(kb).as_posix()
        if only is not None and source not in only:
            continue
        for i, piece in enumerate(splitter.split_text(text)):
            docs.append(
                Document(page_content=piece, metadata={"doc_id": stem(source), "source": source})
            )
            ids.append(f"{source}#{i}")
    return docs, ids


def _bare_configs(names: Sequence[str] | None) -> dict[str, BareConfig]:
    """The bare wirings named (all of :data:`BARE_CONFIGS` for None).

    Example:
        >>> list(_bare_configs(["bm25"])), len(_bare_configs(None))
        (['bm25'], 4)
    """
    if names is None:
        return dict(BARE_CONFIGS)
    unknown = [n for n in names if n not in BARE_CONFIGS]
    if unknown or not names:
        raise ConfigurationError(
            f"unknown bare wiring {unknown[0] if unknown else ''!r}: use one or more of "
            + ", ".join(BARE_CONFIGS)
        )
    return {n: BARE_CONFIGS[n] for n in dict.fromkeys(names)}


def _bare_search(store: BareStore, config: BareConfig, query: str) -> list[str]:
    kwargs: dict[str, Any] = {}
    if config.kind == "hybrid":
        kwargs["reranker"] = rrf_ranker()  # a fresh Function per call
        if config.fetch_k is not None:
            kwargs["fetch_k"] = config.fetch_k
    docs = store.store.similarity_search(query, k=K, **kwargs)
    return [str(d.metadata.get("doc_id", "")) for d in docs]


def _misses(rankings: dict[str, list[str]], qset: QuestionSet, k: int = 5) -> list[dict[str, Any]]:
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


def _indexed_only(qset: QuestionSet, sources: set[str]) -> tuple[QuestionSet, list[dict[str, Any]]]:
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


def _scores(run: RunOutput, qset: QuestionSet) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Mean metrics and per-question values (in-scope questions, file order)."""
    values = {m: per_query(run.rankings, qset.qrels, m) for m in METRICS}
    per_question = {m: [values[m][q] for q in qset.in_scope] for m in METRICS}
    return rounded(aggregate(run.rankings, qset.qrels, METRICS)), per_question


def _intervals(
    ours: Mapping[str, Sequence[float]], theirs: Mapping[str, Sequence[float]]
) -> dict[str, dict[str, float | int]]:
    return {m: paired_bootstrap(ours[m], theirs[m]).as_dict() for m in INTERVAL_METRICS}


def _has_cjk_question(qset: QuestionSet) -> bool:
    from langchain_lookup_knowledge.knowledge.chunking import cjk_ratio

    return any(cjk_ratio(q) > 0.3 for q in qset.queries.values())


def variant_overrides(settings: LookupSettings, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A variant's settings overrides, its ``rerank_weights`` on top of the user's own.

    Raises:
        ConfigurationError: an unknown setting, or a value the settings refuse.

    Example:
        >>> user = LookupSettings(rerank_weights={"l0_title": 0.2})
        >>> variant_overrides(user, {"rerank_weights": {"bm25_share": 0.2}, "rrf_k": 20})
        {'rerank_weights': {'l0_title': 0.2, 'bm25_share': 0.2}, 'rrf_k': 20}
    """
    unknown = sorted(set(overrides) - set(LookupSettings.model_fields))
    if unknown:
        raise ConfigurationError(f"variant: unknown setting {unknown[0]!r}")
    out = dict(overrides)
    if "rerank_weights" in out:
        out["rerank_weights"] = dict(settings.rerank_weights) | dict(out["rerank_weights"])
    try:
        checked = LookupSettings.model_validate(settings.model_dump() | out)
        RerankWeights.from_overrides(checked.rerank_weights)
    except ValueError as exc:  # pydantic's ValidationError is one
        raise ConfigurationError(f"variant {dict(overrides)}: {exc}") from None
    return out


def ablation_overrides(settings: LookupSettings, name: str) -> dict[str, Any]:
    """The settings overrides that switch component ``name`` of :data:`ABLATIONS` off.

    Example:
        >>> ablation_overrides(LookupSettings(), "first_chunk")
        {'rerank_weights': {'first_chunk': 0.0}}
        >>> ablation_overrides(LookupSettings(), "list_depth")
        {'hybrid_list_depth': 0}
    """
    if name not in ABLATIONS:
        raise ConfigurationError(f"unknown ablation {name!r}: use one of {', '.join(ABLATIONS)}")
    out: dict[str, Any] = {}
    for key, value in ABLATIONS[name][1].items():
        if key == "_weights":
            out["rerank_weights"] = dict(settings.rerank_weights) | dict.fromkeys(value, 0.0)
        elif key == "_similarity_only":
            dense_only = {"similarity_share": 1.0, "bm25_share": 0.0}
            out["rerank_weights"] = dict(settings.rerank_weights) | dense_only
        elif key == "_cjk_rule_off":
            out["cjk_retrieval_mode"] = settings.retrieval_mode
        else:
            out[key] = value
    return out


class _PipelineRunner:
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


def _system_report(
    run: RunOutput, qset: QuestionSet, *, blind: bool
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    metrics, per_question = _scores(run, qset)
    rates = decision_rates(run, qset.qrels)
    report: dict[str, Any] = metrics | {
        "timing": run.timing(),
        "fallbacks": run.extra["fallbacks"],
        "decision": rates,
        "relevance": {lvl: rates["levels"][lvl]["count"] for lvl in ("high", "medium", "low")},
    }
    report["misses@5"] = len(_misses(run.rankings, qset)) if blind else _misses(run.rankings, qset)
    return report, per_question


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
    configs = _bare_configs(bare)
    variant_settings = {
        name: variant_overrides(settings, overrides) for name, overrides in (variants or {}).items()
    }
    progress = progress_enabled(show_progress)
    blind = is_held_out(path) if blind is None else blind
    qset = load_questions(path, kb_name=kb_name)
    sources = indexed_sources(settings)
    qset, not_indexed = _indexed_only(qset, sources)
    if not qset.in_scope:
        raise ConfigurationError(
            f"no question of {path} is about a document in collection {settings.collection!r}: "
            "was it ingested from the folder these questions are about?"
        )
    runner = _PipelineRunner(settings, qset, progress)
    run = runner.run()
    pipeline, ours = _system_report(run, qset, blind=blind)
    per_question: dict[str, dict[str, list[float]]] = {"pipeline": ours}

    baselines: dict[str, Any] = {}
    if kb is not None:
        bare_settings = (
            settings.model_copy(update={"milvus_uri": bare_uri}) if bare_uri else settings
        )
        baselines, bare_values = _run_baselines(
            Path(kb), bare_settings, runner, qset, progress, only=sources or None, configs=configs
        )
        per_question |= bare_values
        for name in baselines:
            baselines[name]["vs_pipeline"] = _intervals(ours, bare_values[name])

    ablations: dict[str, Any] = {}
    names = list(ABLATIONS) if ablate is True else list(ablate or [])
    for name in names:
        if name == "cjk_rule" and not _has_cjk_question(qset):
            continue
        variant = runner.run(desc=f"ablate {name}", **ablation_overrides(settings, name))
        scores, values = _scores(variant, qset)
        ablations[name] = scores | {
            "off": ABLATIONS[name][0],
            "decision": decision_rates(variant, qset.qrels),
            # what the component adds: full pipeline minus the pipeline without it
            "gain": _intervals(ours, values),
        }

    variant_reports: dict[str, Any] = {}
    for name, overrides in variant_settings.items():
        variant = runner.run(desc=f"variant {name}", **overrides)
        scores, values = _scores(variant, qset)
        variant_reports[name] = scores | {
            "overrides": dict((variants or {})[name]),
            "timing": variant.timing(),
            "decision": decision_rates(variant, qset.qrels),
            "vs_pipeline": _intervals(values, ours),
            "per_question": values,
        }

    result: dict[str, Any] = {
        "questions": len(qset.queries),
        "in_scope": len(qset.in_scope),
        "out_of_scope": len(qset.out_of_scope),
        "questions_not_indexed": len(not_indexed),
        "not_indexed": [] if blind else not_indexed,
        "file": ", ".join(str(p) for p in _paths(path)),
        "blind": blind,
        "collection": settings.collection,
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


def _run_baselines(
    root: Path,
    settings: LookupSettings,
    runner: _PipelineRunner,
    qset: QuestionSet,
    progress: bool,
    *,
    only: set[str] | None,
    configs: Mapping[str, BareConfig] = BARE_CONFIGS,
) -> tuple[dict[str, Any], dict[str, dict[str, list[float]]]]:
    root = root.expanduser()
    if not root.is_dir():
        raise ConfigurationError(f"knowledge folder not found: {root}")
    # The same corpus on both sides: the files the pipeline indexed (not the ones it refused).
    docs, ids = bare_chunks(root, only=only)
    if not docs:
        raise ConfigurationError(
            f"no markdown file under {root} is indexed in collection {settings.collection!r}"
        )
    key = short_hash(
        *(d.page_content for d in docs),
        embedder_fingerprint(settings),
        f"{BARE_CHUNK_SIZE}/{BARE_CHUNK_OVERLAP}",
    )
    analyzer = bm25_analyzer_params([d.page_content for d in docs])
    tokenizer = "jieba" if analyzer.get("tokenizer") == "jieba" else "standard"
    shared = SharedDocumentVectors(runner.embedder.inner)
    stores: dict[BareKind, tuple[BareStore, bool, float]] = {}
    out: dict[str, Any] = {}
    values: dict[str, dict[str, list[float]]] = {}
    for name, config in configs.items():
        if config.kind not in stores:
            store = BareStore(
                settings,
                # A BM25 collection is analysed once: another analyzer is another collection.
                f"bare_{key}_{config.kind}"
                + (f"_{tokenizer}" if config.kind != "dense" and tokenizer == "jieba" else ""),
                config.kind,
                None if config.kind == "bm25" else shared,
                analyzer_params=analyzer,
            )
            start = time.perf_counter()
            written = store.fill(docs, ids, progress=progress)
            stores[config.kind] = (store, written, round(time.perf_counter() - start, 2))
        store, written, ingest_s = stores[config.kind]
        bare = run_search(
            partial(_bare_search, store, config),
            qset.queries,
            desc=f"bare {name}",
            progress=progress,
        )
        metrics, values[name] = _scores(bare, qset)
        out[name] = metrics | {
            "timing": bare.timing(),
            "collection": store.collection,
            "chunks": len(docs),
            "cached": not written,
            "ingest_s": ingest_s,
            "misses@5": len(_misses(bare.rankings, qset)),
            "fetch_k": config.fetch_k,
            "analyzer": None if config.kind == "dense" else tokenizer,
        }
    return out, values


def _interval_text(interval: Mapping[str, Any]) -> str:
    return f"{interval['delta']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def format_decision(rates: Mapping[str, Any]) -> str:
    """One line of evidence-decision rates."""
    levels = ", ".join(
        f"{lvl} {v['count']} ({v['correct_share']:.0%} correct)"
        for lvl, v in rates["levels"].items()
        if v["count"]
    )
    oos = rates["out_of_scope_no_evidence"]
    return (
        f"found on in-scope {rates['in_scope_found']:.3f}; found=false on out-of-scope "
        + ("n/a" if oos is None else f"{oos:.3f}")
        + f"; levels: {levels or 'none'}"
    )


def format_queries(report: dict[str, Any]) -> str:
    """A readable table of a :func:`run_queries` report."""
    lines = [
        f"{report['questions']} questions ({report['in_scope']} in scope, "
        f"{report['out_of_scope']} out of scope) from {report['file']} on "
        f"{report['collection']!r}" + (" [blind]" if report.get("blind") else ""),
        *systems_table(report, ("recall@5", "mrr@5", "mrr@10", "ndcg@10", "p50_ms"), name_width=20),
    ]
    for name, scores in report["baselines"].items():
        iv = scores["vs_pipeline"]
        lines.append(
            f"pipeline - bare {name}: MRR@5 {_interval_text(iv['mrr@5'])}, "
            f"nDCG@10 {_interval_text(iv['ndcg@10'])}"
        )
    if report["baselines"]:
        lines.append(
            "  (difference of the means on the same questions, [95% bootstrap interval]: "
            "above 0, the pipeline ranks better)"
        )
    pipeline = report["pipeline"]
    lines.append("evidence decision: " + format_decision(pipeline["decision"]))
    lines.append(
        "  (found: the lookup returned evidence; levels: how many answers got each "
        "relevanceLevel, and how many of those were right)"
    )
    lines.append(
        f"unfiltered retries (fallbacks): {pipeline['fallbacks']} of {report['questions']} "
        "questions (the search within the category the question names found nothing or too "
        "little, so the whole collection was searched)"
    )
    for name, ablation in report.get("ablations", {}).items():
        gain = ablation["gain"]
        lines.append(
            f"ablate {name} ({ablation['off']} off): MRR@5 {ablation['mrr@5']:.4f}, gain of the "
            f"component MRR@5 {_interval_text(gain['mrr@5'])}, nDCG@10 "
            f"{_interval_text(gain['ndcg@10'])}"
        )
    for name, variant in report.get("variants", {}).items():
        iv = variant["vs_pipeline"]
        lines.append(
            f"variant {name} {json.dumps(variant['overrides'])}: MRR@5 {variant['mrr@5']:.4f}, "
            f"variant - pipeline MRR@5 {_interval_text(iv['mrr@5'])}, "
            f"nDCG@10 {_interval_text(iv['ndcg@10'])}"
        )
    for skipped in report.get("not_indexed", []):
        lines.append(
            f"  not scored (document not in the collection): {skipped['q']!r} rel={skipped['rel']}"
        )
    misses = pipeline["misses@5"]
    if isinstance(misses, list):
        for miss in misses:
            lines.append(f"  miss@5: {miss['q']!r} rel={miss['rel']} got={miss['got']}")
        if misses:
            lines.append("  (miss@5: no relevant document in the first 5; rel: the relevant ones)")
    else:
        lines.append(
            f"misses@5 (no relevant document in the first 5): {misses} (blind: questions not shown)"
        )
    return "\n".join(lines)
