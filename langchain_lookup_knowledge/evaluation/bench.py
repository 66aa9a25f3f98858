"""``lookup-knowledge bench``: the tool against a bare ``langchain_milvus.Milvus``, same machine.

Measured in one run, on the same collection, embedder and ``k`` (``top_k``):

* **Lookup latency**: ``create_lookup_knowledge_tool(...).invoke`` (a tool call, recording on)
  against ``Milvus.similarity_search_with_score`` (dense: ``bare``; and, where the collection has
  a BM25 field, a plain hybrid ``Milvus`` with ``BM25BuiltInFunction`` and RRF: ``bare_hybrid``),
  interleaved query by query (the order flips every round). ``lookup_p50_ms`` is the tool with
  its query-embedding cache cleared before each call (a never-seen question: embedded once, as
  the bare store embeds every call);
  ``lookup_cached_p50_ms`` is a repeated question (the cache answers).
* **L1 search alone**: the query embedded and the pipeline's own L1 search (its path, retrieval
  mode and rerank pool), without the graph, rerank, packing or record: ``l1_search_p50_ms``.
  ``pipeline_overhead_p50_ms`` is ``lookup_p50_ms - l1_search_p50_ms`` (what the pipeline adds
  to the search it must do); ``pipeline_overhead_paired_p50_ms`` the median of that difference
  call by call (same question, same round). ``load_average`` at start and end says how quiet
  the machine was.
* **Graph floor**: the lookup's shape with no-op node bodies (:mod:`.graph_floor`), invoked as
  the tool invokes its graph: ``graph_floor_p50_ms`` is what LangGraph itself costs a lookup,
  and ``pipeline_overhead_beyond_floor_p50_ms`` what the node bodies and the tool layer add.
* **Forced retry**: a tool with ``reference_threshold=1.0`` (cache cleared too): every lookup
  whose L0 filter applies is retried without it (two L1 searches). Questions that get no filter are
  prefixed with a category of the catalog (e.g. ``"databases: ..."``); only lookups that
  really retried are counted, against the bare search on the same question text.
* **Ingest throughput**: ``ingest_folder`` against ``Milvus.from_documents`` on the same
  chunks (the same indexed text) with the same embedder, into throwaway collections (all
  dropped afterwards), and against the embedder alone on those chunks, measured alternately
  (embedder, ingest, embedder, ... ``ingest_rounds`` ingests; for the bundled model also with
  2x and 8x its padded-token budget per call): ``ingest_vs_embedder_ratio`` is the median over
  the ingests of the ingest's rate over the embedder's best setting in its neighbouring runs,
  ``ingest_vs_embedder_ratio_range`` their lowest and highest.
* **Cold start**: a fresh Python process until its first answer (tool and bare), measured from
  spawn. It needs the Milvus Lite database not to be open in this process (else skipped).
* **Peak memory**: ``ru_maxrss`` of this process and of the cold-start processes.

Invocation records go to a throwaway SQLite file, so a bench never fills the real table. A
queued record (``record_wait=false``) is written on the recorder's thread after its call returns;
the bench waits for that write outside the timer after each lookup, so it never lands inside the
next series' timed call.
"""

from __future__ import annotations

import resource
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

from langchain_lookup_knowledge.evaluation.bench_format import format_bench
from langchain_lookup_knowledge.evaluation.bench_questions import (
    DEFAULT_QUESTIONS,
    load_bench_questions,
    retry_questions_of,
    was_retried,
)
from langchain_lookup_knowledge.evaluation.cold_start import (
    CHILD_BARE,
    CHILD_TOOL,
    child_maxrss_mb,
    cold_start,
    lite_db_busy,
    wait_until_free,
)
from langchain_lookup_knowledge.evaluation.graph_floor import (
    GraphFloorNodes,
    build_graph_floor,
)
from langchain_lookup_knowledge.evaluation.ingest_bench import (
    INGEST_ROUNDS,
    bench_knowledge_folder,
    drop_scratch_collections,
    ingest_bench,
)
from langchain_lookup_knowledge.evaluation.timing import (
    ProgressBar,
    embed_ms_of,
    latency_report,
    load_average,
    timed_ms,
)
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "DEFAULT_QUESTIONS",
    "GraphFloorNodes",
    "bench_knowledge_folder",
    "build_graph_floor",
    "cold_start",
    "drop_scratch_collections",
    "format_bench",
    "load_bench_questions",
    "run_bench",
]

if TYPE_CHECKING:
    pass


def run_bench(
    settings: LookupSettings,
    *,
    rounds: int = 5,
    queries_file: str | Path | None = None,
    kb: str | Path | None = None,
    cold_start_enabled: bool = True,
    show_progress: bool | None = None,
    ingest_rounds: int = INGEST_ROUNDS,
) -> dict[str, Any]:
    """Run every measurement; the report's top level holds the headline figures."""
    from langchain_lookup_knowledge.embeddings import build_embeddings
    from langchain_lookup_knowledge.evaluation.baseline import progress_enabled, rrf_ranker
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.pipeline.transform import prepare_query
    from langchain_lookup_knowledge.recording import recorder_for
    from langchain_lookup_knowledge.retrieval.vectorstore import open_vectorstore
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.embedder_record import settings_for_collection
    from langchain_lookup_knowledge.store.schema import describe_chunk_collection
    from langchain_lookup_knowledge.tool import PIPELINE_RUN_NAME, create_lookup_knowledge_tool

    questions = load_bench_questions(queries_file)
    kb_path = bench_knowledge_folder(kb)
    records = tempfile.TemporaryDirectory(prefix="lookup-bench-")
    settings = settings.model_copy(
        update={
            "record_invocations": True,
            "invocation_db_url": f"sqlite:///{Path(records.name) / 'bench.sqlite3'}",
        }
    )
    report: dict[str, Any] = {
        "collection": settings.collection,
        "uri": mask_url(settings.resolved_milvus_uri),
        "k": settings.top_k,
        "rounds": rounds,
        "questions": len(questions),
        "retrieval_mode": settings.retrieval_mode,
        "path": settings.mode,
        "record_wait": settings.record_wait,
        "load_average": {"start": load_average()},
    }

    # Cold start first: a fresh process must be able to open the database.
    if cold_start_enabled and lite_db_busy(settings):
        report["cold_start"] = {
            "skipped": "the Milvus Lite database is open in this process "
            "or another one; run bench in a fresh process"
        }
    elif cold_start_enabled:
        report["cold_start"] = {
            "lookup": cold_start(settings, questions[0], CHILD_TOOL),
            "bare": cold_start(settings, questions[0], CHILD_BARE),
            "peak_rss_mb": round(child_maxrss_mb(), 1),
        }
        wait_until_free(settings)
    report["cold_start_s"] = (report.get("cold_start", {}).get("lookup") or {}).get("seconds")
    report["bare_cold_start_s"] = (report.get("cold_start", {}).get("bare") or {}).get("seconds")

    client = open_client(settings)
    settings, _ = settings_for_collection(client, settings)  # auto: the collection's model
    embedder = build_embeddings(settings)
    raw = embedder.inner
    dimension = len(embedder.embed_query("dimension probe"))
    layout = describe_chunk_collection(client, settings, dimension)
    bare_store = open_vectorstore(settings, layout, raw, hybrid=False)
    # Like for like in hybrid mode: the same collection through a plain hybrid Milvus
    # (BM25BuiltInFunction, RRF), as a LangChain user would search it.
    bare_hybrid_store = (
        open_vectorstore(settings, layout, raw, hybrid=True, dense_vectors=False)
        if layout.has_bm25
        else None
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=embedder)
    retry_embedder = build_embeddings(settings)
    retry_tool = create_lookup_knowledge_tool(
        settings.model_copy(update={"reference_threshold": 1.0}), embeddings=retry_embedder
    )
    k = settings.top_k
    # Both tools write through this recorder (one per configuration in a process). A queued
    # record is written on the recorder's thread after the call returns; waiting for it outside
    # the timer keeps that write out of whichever series happens to be timed next.
    recorder = recorder_for(settings)

    def call(tool: Any, query: str) -> Any:
        return tool.invoke(
            {"type": "tool_call", "id": "bench", "name": tool.name, "args": {"query": query}}
        )

    def fresh(tool: Any, cache: Any, query: str) -> Callable[[], Any]:
        cache.clear()  # outside the timed call
        return partial(call, tool, query)

    def bare(query: str) -> Any:
        return bare_store.similarity_search_with_score(query, k=k)

    # The pipeline's own L1 search alone (embedded as the bare store embeds, no graph, no
    # rerank, no record): how much of a lookup is the retrieval it must do. It searches what
    # the lookup's first attempt searches (prepare_query: CJK rule, L0 category filter), with the
    # question's L0 match made beforehand, outside the timed call.
    l1_runtime = LookupRuntime(settings, embeddings=raw)
    l1_path = l1_runtime.path("sdk" if settings.mode == "sdk" else "vectorstore")
    l0_matches = {q: l1_runtime.matcher().match(q) for q in questions}

    def l1_search(query: str) -> Any:
        prepared = prepare_query(l1_runtime, query, l0=l0_matches[query], embeddings=raw)
        return l1_path.search(prepared.first_request())

    # LangGraph's own cost for this shape: the lookup's wiring, no-op bodies, invoked as the
    # tool invokes its graph (a typical route: the plan of the first question, first attempt
    # answers).
    floor_plan = prepare_query(l1_runtime, questions[0], l0=l0_matches[questions[0]]).plan
    floor = build_graph_floor(settings, floor_plan)
    floor_config: RunnableConfig = {"callbacks": None, "run_name": PIPELINE_RUN_NAME}

    def graph_floor(query: str) -> Any:
        return floor.invoke({"query": query}, config=floor_config)

    def bare_hybrid(query: str) -> Any:
        assert bare_hybrid_store is not None
        return bare_hybrid_store.similarity_search_with_score(
            query, k=k, reranker=rrf_ranker(), fetch_k=2 * k
        )

    # Which questions really retry (their L0 filter applies); prefix a category otherwise.
    categories = sorted(
        {e.category for e in load_catalog(client, settings.resolved_catalog_collection)}
    )
    retry_qs = [q for q in questions if was_retried(call(retry_tool, q))]
    if not retry_qs:
        retry_qs = [
            q for q in retry_questions_of(questions, categories) if was_retried(call(retry_tool, q))
        ]
    # Warm-up (not measured): model, Milvus segments, the cached tool's cache.
    main_series = ["lookup", "lookup_cached", "l1_search", "bare", "graph_floor"]
    if bare_hybrid_store is not None:
        main_series.append("bare_hybrid")
    for q in questions:
        call(tool, q), bare(q), l1_search(q), graph_floor(q)
        if bare_hybrid_store is not None:
            bare_hybrid(q)

    series: dict[str, list[float]] = {name: [] for name in (*main_series, "retry", "bare_retry")}
    total = rounds * (len(questions) * len(main_series) + len(retry_qs) * 2)
    bar = ProgressBar(total, progress_enabled(show_progress))
    retried = 0
    for r in range(rounds):
        for q in questions:
            # the cached call right after the uncached one (same question, now in the cache)
            order = main_series if r % 2 == 0 else [*main_series[2:][::-1], *main_series[:2]]
            for name in order:
                fn: Callable[[], Any]
                if name == "lookup":
                    fn = fresh(tool, embedder, q)
                elif name == "lookup_cached":
                    fn = partial(call, tool, q)
                elif name == "bare_hybrid":
                    fn = partial(bare_hybrid, q)
                elif name == "l1_search":
                    fn = partial(l1_search, q)
                elif name == "graph_floor":
                    fn = partial(graph_floor, q)
                else:
                    fn = partial(bare, q)
                series[name].append(timed_ms(fn)[0])
                if name in ("lookup", "lookup_cached"):
                    recorder.flush()
                bar.update()
        for q in retry_qs:
            for name in ["retry", "bare_retry"] if r % 2 == 0 else ["bare_retry", "retry"]:
                fn = fresh(retry_tool, retry_embedder, q) if name == "retry" else partial(bare, q)
                elapsed, value = timed_ms(fn)
                if name == "retry":
                    retried += int(was_retried(value))
                    recorder.flush()
                series[name].append(elapsed)
                bar.update()
    bar.close()

    report.update(latency_report(series, retry_questions=len(retry_qs)))
    report["load_average"]["end"] = load_average()
    report["retried_lookups"] = retried
    report["embedding_cache"] = {"hits": embedder.hits, "misses": embedder.misses}
    report["query_embed_ms"] = embed_ms_of(raw, questions)
    report["ingest"] = ingest_bench(settings, kb_path, raw, rounds=ingest_rounds)
    report.update(
        {
            key: report["ingest"][key]
            for key in (
                "ingest_chunks_per_s",
                "bare_ingest_chunks_per_s",
                "ingest_vs_bare_ratio",
                "ingest_vs_embedder_ratio",
                "ingest_vs_embedder_ratio_range",
            )
        }
    )
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    records.cleanup()
    return report
