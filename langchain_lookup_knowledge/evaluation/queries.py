"""``lookup-knowledge eval queries FILE``: a team's own question set, scored per document.

The file is JSONL, one ``{"q": question, "rel": [file stems]}`` per line. A ranking is the
document stems of the evidence blocks (or bare chunks) in order, first place wins; Recall@5 is
measured on the first five blocks, as the tool returns them with ``top_k=5``.

With ``--kb PATH`` the same run scores two bare langchain baselines over that folder, in their
own collections: ``RecursiveCharacterTextSplitter`` -> ``langchain_milvus.Milvus`` ->
``as_retriever()`` (dense), and the same with ``BM25BuiltInFunction`` (hybrid, RRF).
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.baseline import (
    BareKind,
    BareStore,
    SharedDocumentVectors,
    bm25_analyzer_params,
    progress_enabled,
    rrf_ranker,
)
from langchain_lookup_knowledge.evaluation.metrics import aggregate, dedupe
from langchain_lookup_knowledge.evaluation.runner import (
    embedder_fingerprint,
    eval_settings,
    rounded,
    run_pipeline,
    run_search,
    short_hash,
    stem,
    systems_table,
)
from langchain_lookup_knowledge.questions import (
    Question,
    UnreadableQuestion,
    read_question_file,
    readable_only,
)
from langchain_lookup_knowledge.settings import LookupSettings

METRICS = ("recall@5", "recall@10", "mrr@10", "ndcg@10")
K = 10


def load_questions(path: str | Path) -> tuple[dict[str, str], dict[str, dict[str, float]]]:
    """Questions and judgements (``q1``, ``q2``, ... in file order).

    Raises:
        ConfigurationError: missing file, or a line that is not UTF-8, not JSON, or lacks
            ``q`` / ``rel`` (every such line is named: a score over fewer questions misleads).
    """
    file = Path(path).expanduser()
    items = [
        UnreadableQuestion(item.origin, 'expected {"q": ..., "rel": [stems]}')
        if isinstance(item, Question) and not item.relevant
        else item
        for item in read_question_file(file)
    ]
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, float]] = {}
    for question in readable_only(items, str(file)):
        qid = f"q{len(queries) + 1}"
        queries[qid] = question.text
        qrels[qid] = {stem(r): 1.0 for r in question.relevant}
    return queries, qrels


def bare_chunks(
    kb: Path, chunk_size: int, chunk_overlap: int, only: set[str] | None = None
) -> tuple[list[Document], list[str]]:
    """What a bare user indexes: every markdown file read as text, split recursively
    (``only``: just these relative paths, the files the pipeline indexed)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
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


def _retriever_ids(retriever: Any, query: str) -> list[str]:
    return [str(d.metadata.get("doc_id", "")) for d in retriever.invoke(query)]


def _misses(
    rankings: dict[str, list[str]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, float]],
    k: int = 5,
) -> list[dict[str, Any]]:
    out = []
    for qid, text in queries.items():
        top = dedupe(rankings.get(qid, [])[:k])
        if not set(qrels[qid]) & set(top):
            out.append({"q": text, "rel": sorted(qrels[qid]), "got": top[:3]})
    return out


def indexed_sources(settings: LookupSettings) -> set[str]:
    """The sources in the collection's catalog (what the pipeline indexed); empty if none."""
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client

    client = open_client(settings)
    return {e.source for e in load_catalog(client, settings.resolved_catalog_collection)}


def run_queries(
    path: str | Path,
    settings: LookupSettings,
    *,
    kb: str | Path | None = None,
    show_progress: bool | None = None,
) -> dict[str, Any]:
    """Score the question file on the pipeline collection (and bare baselines with ``kb``)."""
    from langchain_lookup_knowledge.embeddings import build_embeddings
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

    progress = progress_enabled(show_progress)
    queries, qrels = load_questions(path)
    # A question whose documents the pipeline never indexed (refused, or not in this collection)
    # measures nothing about retrieval: listed apart, not scored, for every system alike.
    sources = indexed_sources(settings)
    stems = {stem(s) for s in sources}
    not_indexed = [
        {"q": queries[qid], "rel": sorted(qrels[qid])}
        for qid in queries
        if sources and not set(qrels[qid]) & stems
    ]
    if sources:
        queries = {qid: q for qid, q in queries.items() if set(qrels[qid]) & stems}
        qrels = {qid: qrels[qid] for qid in queries}
    if not queries:
        raise ConfigurationError(
            f"no question of {path} is about a document in collection {settings.collection!r}: "
            "was it ingested from the folder these questions are about?"
        )
    embedder = build_embeddings(settings)
    graph = build_lookup_graph(eval_settings(settings, top_k=K), embeddings=embedder)
    run = run_pipeline(graph, queries, doc_id=stem, progress=progress)
    # "@5" is the first five blocks (as the tool shows them), not five distinct documents.
    metrics = rounded(aggregate(run.rankings, qrels, METRICS))
    levels = run.extra["relevance"]
    pipeline = metrics | {
        "timing": run.timing(),
        "fallbacks": run.extra["fallbacks"],
        "relevance": {
            lvl: sum(1 for v in levels.values() if v == lvl) for lvl in ("high", "medium", "low")
        },
        "misses@5": _misses(run.rankings, queries, qrels),
    }
    baselines: dict[str, Any] = {}
    if kb is not None:
        root = Path(kb).expanduser()
        if not root.is_dir():
            raise ConfigurationError(f"knowledge folder not found: {root}")
        # The same corpus on both sides: the files the pipeline indexed (not the ones it refused).
        docs, ids = bare_chunks(
            root, settings.chunk_size, settings.chunk_overlap, only=sources or None
        )
        if not docs:
            raise ConfigurationError(
                f"no markdown file under {root} is indexed in collection {settings.collection!r}"
            )
        key = short_hash(
            *(d.page_content for d in docs),
            embedder_fingerprint(settings),
            f"{settings.chunk_size}/{settings.chunk_overlap}",
        )
        analyzer = bm25_analyzer_params([d.page_content for d in docs])
        shared = SharedDocumentVectors(embedder.inner)
        kinds: tuple[BareKind, ...] = ("dense", "hybrid")
        for kind in kinds:
            store = BareStore(
                settings, f"bare_{key}_{kind}", kind, shared, analyzer_params=analyzer
            )
            start = time.perf_counter()
            written = store.fill(docs, ids, progress=progress)
            ingest_s = round(time.perf_counter() - start, 2)
            search_kwargs: dict[str, Any] = {"k": K}
            if kind == "hybrid":
                search_kwargs |= {"reranker": rrf_ranker(), "fetch_k": 2 * K}
            retriever = store.store.as_retriever(search_kwargs=search_kwargs)
            bare = run_search(
                partial(_retriever_ids, retriever), queries, desc=f"bare {kind}", progress=progress
            )
            baselines[kind] = rounded(aggregate(bare.rankings, qrels, METRICS)) | {
                "timing": bare.timing(),
                "collection": store.collection,
                "chunks": len(docs),
                "cached": not written,
                "ingest_s": ingest_s,
                "misses@5": len(_misses(bare.rankings, queries, qrels)),
            }
    result: dict[str, Any] = {
        "questions": len(queries),
        "questions_not_indexed": len(not_indexed),
        "not_indexed": not_indexed,
        "file": str(path),
        "collection": settings.collection,
        **{m: pipeline[m] for m in METRICS},
        "pipeline": pipeline,
        "baselines": baselines,
        "settings": {
            "retrieval_mode": settings.retrieval_mode,
            "fusion": settings.fusion,
            "candidate_k": eval_settings(settings, top_k=K).rerank_pool,
            "top_k": K,
            "per_document_cap": settings.per_document_cap,
        },
    }
    for name, scores in baselines.items():
        result[f"recall@5_vs_{name}"] = round(pipeline["recall@5"] - scores["recall@5"], 4)
        result[f"mrr@10_vs_{name}"] = round(pipeline["mrr@10"] - scores["mrr@10"], 4)
    return result


def format_queries(report: dict[str, Any]) -> str:
    """A readable table of a :func:`run_queries` report."""
    lines = [
        f"{report['questions']} questions from {report['file']} on {report['collection']!r}",
        *systems_table(report, (*METRICS, "p50_ms"), name_width=14),
    ]
    pipeline = report["pipeline"]
    lines.append(f"relevance levels: {pipeline['relevance']}; fallbacks: {pipeline['fallbacks']}")
    for skipped in report.get("not_indexed", []):
        lines.append(
            f"  not scored (document not in the collection): {skipped['q']!r} rel={skipped['rel']}"
        )
    for miss in pipeline["misses@5"]:
        lines.append(f"  miss@5: {miss['q']!r} rel={miss['rel']} got={miss['got']}")
    return "\n".join(lines)
