"""``lookup-knowledge eval beir DIR``: a BEIR dataset through the pipeline and two bare baselines.

The folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``) and ``qrels/<split>.tsv`` (query-id, corpus-id, score; a header line). Every corpus
document becomes one knowledge document whose ``source`` is its id, ingested into a collection
named after a hash of the corpus, the chunking and the embedder (re-runs skip ingestion). The
bare baselines (dense, BM25 and hybrid RRF, as :mod:`..baseline` wires them) get one ``Document``
per corpus entry (title + text) in their own collections; dense and hybrid embed the corpus once
between them (:class:`SharedDocumentVectors`), and a collection already full is reused.

Ranking per system: evidence blocks of the pipeline with ``per_document_cap=1`` (one block per
document, so ten blocks are ten documents), ``top_k=10`` for nDCG@10 / Recall@10 / MRR@10 with
the configured ``candidate_k``; a second pass with ``top_k=100`` / ``candidate_k=200`` gives
Recall@100. The bare dense and BM25 stores are asked for ``k=100`` once (their order does not
depend on ``k``); bare hybrid fuses ``fetch_k = 2k`` hits of each leg, so it is asked for ``k=10``
(as a user asking for ten would) and again for ``k=100`` for Recall@100.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.core.lexical import LEXICAL_VERSION
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.embeddings.window import window_of
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation import runner
from langchain_lookup_knowledge.evaluation.baseline import (
    BareKind,
    BareStore,
    SharedDocumentVectors,
    progress_enabled,
)
from langchain_lookup_knowledge.evaluation.beir_data import (
    BeirData,
    bare_documents,
    corpus_documents,
    load_beir,
    read_jsonl,
)
from langchain_lookup_knowledge.evaluation.metrics import aggregate
from langchain_lookup_knowledge.knowledge.chunking import chunk_document, embedding_text
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.schema import (
    apply_bm25_parameters,
    bm25_parameters,
    describe_chunk_collection,
    indexed_bm25_parameters,
)

__all__ = [
    "DEEP_CANDIDATES",
    "DEEP_K",
    "METRICS",
    "TOP_METRICS",
    "BeirData",
    "bare_documents",
    "corpus_documents",
    "format_beir",
    "load_beir",
    "pipeline_collection",
    "read_jsonl",
    "run_baselines",
    "run_beir",
]

METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")
TOP_METRICS = ("ndcg@10", "recall@10", "mrr@10")
DEEP_K = 100
DEEP_CANDIDATES = 200


def pipeline_collection(
    data: BeirData, settings: LookupSettings, docs: list[KnowledgeDocument]
) -> str:
    """Collection name from the corpus, the chunking, the embedded text of a sample and the
    lexical form of the BM25 input."""
    window = window_of(build_embeddings(settings), settings.embedding_max_tokens)
    sample = "\n".join(
        embedding_text(c, d, window)
        for d in docs[:5]
        for c in chunk_document(d, settings.chunk_size, settings.chunk_overlap, window)
    )
    return "beir_" + runner.short_hash(
        data.corpus_hash,
        runner.embedder_fingerprint(settings),
        f"{settings.chunk_size}/{settings.chunk_overlap}",
        sample,
        settings.bm25_analyzer,
        # the lexical form of the BM25 input (core.lexical): another form is another collection
        f"lex{LEXICAL_VERSION}s0i{int(settings.bm25_split_identifiers)}",
    )


def _bare_ids(store: BareStore, k: int, query: str) -> Sequence[str]:
    return store.search(query, k)


def run_baselines(
    data: BeirData,
    settings: LookupSettings,
    embedder: Any,
    *,
    progress: bool = False,
    timings: dict[str, Any] | None = None,
    kinds: Sequence[BareKind] = ("dense", "bm25", "hybrid"),
) -> dict[str, Any]:
    """The bare dense, BM25 and hybrid baselines over ``data`` (collections reused when full);
    ``kinds`` names fewer (BM25 alone embeds nothing).

    ``embedder``: the pipeline's (its uncached ``inner`` embeds; dense and hybrid share the
    corpus vectors). Fill times go to ``timings`` as ``bare_<kind>_ingest_s``.
    """
    timings = {} if timings is None else timings
    out_baselines: dict[str, Any] = {}
    bare_docs, bare_ids = bare_documents(data)
    key = runner.short_hash(data.corpus_hash, runner.embedder_fingerprint(settings))
    # the bare baselines have no query cache; dense and hybrid embed the corpus once
    shared = SharedDocumentVectors(embedder.inner)
    for kind in kinds:
        store = BareStore(
            settings, f"beir_{key}_bare_{kind}", kind, None if kind == "bm25" else shared
        )
        start = time.perf_counter()
        written = store.fill(bare_docs, bare_ids, progress=progress)
        timings[f"bare_{kind}_ingest_s"] = round(time.perf_counter() - start, 2)
        if kind == "hybrid":  # its fused order depends on k (fetch_k = 2k per leg)
            run = runner.run_search(
                partial(_bare_ids, store, 10),
                data.queries,
                desc="bare hybrid@10",
                progress=progress,
            )
            deep_run = runner.run_search(
                partial(_bare_ids, store, DEEP_K),
                data.queries,
                desc="bare hybrid@100",
                progress=progress,
            )
            scores = aggregate(run.rankings, data.qrels, TOP_METRICS) | aggregate(
                deep_run.rankings, data.qrels, ["recall@100"]
            )
        else:
            run = runner.run_search(
                partial(_bare_ids, store, DEEP_K),
                data.queries,
                desc=f"bare {kind}",
                progress=progress,
            )
            scores = aggregate(run.rankings, data.qrels, METRICS)
        out_baselines[kind] = runner.rounded(scores) | {
            "timing": run.timing(),
            "collection": store.collection,
            "cached": not written,
        }
    return out_baselines


def run_beir(
    folder: str | Path,
    settings: LookupSettings,
    *,
    split: str = "test",
    limit: int | None = None,
    show_progress: bool | None = None,
    baselines: bool = True,
) -> dict[str, Any]:
    """Evaluate; returns the report (pipeline metrics at top level, ``baselines`` beside)."""
    from langchain_lookup_knowledge.core.language import KnowledgeLanguage
    from langchain_lookup_knowledge.embeddings import build_embeddings
    from langchain_lookup_knowledge.embeddings.choice import choice_for_language, with_provider
    from langchain_lookup_knowledge.ingest import ingest_documents
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

    progress = progress_enabled(show_progress)
    data = load_beir(folder, split, limit)
    if not data.queries:
        raise ConfigurationError(f"no judged queries in split {split!r} of {folder}")
    docs = corpus_documents(data)
    if settings.embedding_provider == "auto":  # the model that reads the corpus, as ingest does
        choice = choice_for_language(KnowledgeLanguage.of(doc.body for doc in docs))
        settings = with_provider(settings, choice.provider)
    embedder = build_embeddings(settings)
    collection = pipeline_collection(data, settings, docs)
    base = settings.model_copy(update={"collection": collection, "catalog_collection": None})

    timings: dict[str, Any] = {}
    start = time.perf_counter()
    report = ingest_documents(
        docs, base, label=str(folder), embeddings=embedder, show_progress=progress
    )
    timings["pipeline_ingest_s"] = round(time.perf_counter() - start, 2)
    cached = report.chunks_written == 0
    client = open_client(base)
    layout = describe_chunk_collection(client, base, None)
    # An evaluation scores what the settings build for a new collection, so its cached
    # collection (no live one) gets that BM25 index explicitly: an ingest's defaults never
    # rebuild an existing index (bm25_defaults decides a new collection's).
    new_index = bm25_parameters(base, layout.analyzer)
    if new_index:
        apply_bm25_parameters(client, base.model_copy(update=new_index), layout)
    bm25_index = indexed_bm25_parameters(client, layout)

    # BEIR measures ranking: every judged query is answerable, so the evidence decision (which
    # eval queries measures with out-of-scope questions) does not withhold rankings here: they
    # are the reranked blocks whatever it concluded.
    top = runner.eval_settings(base, top_k=10, per_document_cap=1)
    deep = runner.eval_settings(
        base, top_k=DEEP_K, candidate_k=max(base.rerank_pool, DEEP_CANDIDATES), per_document_cap=1
    )
    graph = build_lookup_graph(top, embeddings=embedder)
    first = runner.run_pipeline(
        graph, data.queries, desc="pipeline", progress=progress, ranking_only=True
    )
    deep_graph = build_lookup_graph(deep, embeddings=embedder)
    second = runner.run_pipeline(
        deep_graph, data.queries, desc="pipeline@100", progress=progress, ranking_only=True
    )
    metrics = aggregate(first.rankings, data.qrels, TOP_METRICS) | aggregate(
        second.rankings, data.qrels, ["recall@100"]
    )
    pipeline = runner.rounded(metrics) | {
        "timing": first.timing(),
        "fallbacks": first.extra["fallbacks"],
    }

    out_baselines = (
        run_baselines(data, base, embedder, progress=progress, timings=timings) if baselines else {}
    )
    result: dict[str, Any] = {
        "dataset": data.name,
        "split": split,
        "queries": len(data.queries),
        "corpus": len(data.corpus),
        "collection": collection,
        "cached": cached,
        "chunks": report.total_chunks,
        **{m: pipeline[m] for m in METRICS},
        "pipeline": pipeline,
        "baselines": out_baselines,
        "settings": {
            "retrieval_mode": base.retrieval_mode,
            "fusion": base.fusion,
            "rrf_k": base.rrf_k,
            "dense_weight": base.dense_weight,
            "hybrid_list_depth": base.hybrid_list_depth,
            # what the BM25 index was built with ({}: the engine's defaults; bm25_k1 / bm25_b)
            "bm25_index": bm25_index,
            "candidate_k": top.rerank_pool,
            "chunk_size": base.chunk_size,
            "chunk_overlap": base.chunk_overlap,
            "top_k": 10,
            "per_document_cap": 1,
            "mode": base.mode,
        },
        "timings": timings,
    }
    for name, scores in out_baselines.items():
        result[f"ndcg@10_vs_{name}"] = round(pipeline["ndcg@10"] - scores["ndcg@10"], 4)
    return result


def format_beir(report: dict[str, Any]) -> str:
    """A readable table of a :func:`run_beir` report."""
    lines = [
        f"BEIR {report['dataset']} ({report['split']}): {report['queries']} queries, "
        f"{report['corpus']} documents, {report['chunks']} chunks in {report['collection']!r}"
        f"{' (cached)' if report['cached'] else ''}",
        *runner.systems_table(report, (*METRICS, "p50_ms", "p95_ms"), name_width=12),
    ]
    s = report["settings"]
    lines.append(
        f"pipeline: retrieval_mode={s['retrieval_mode']} fusion={s['fusion']} "
        f"candidate_k={s['candidate_k']} chunk_size={s['chunk_size']} "
        f"bm25_index={s['bm25_index'] or 'engine defaults'}; "
        f"timings: {report['timings']}"
    )
    return "\n".join(lines)
