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
* **Graph floor**: a graph of the lookup's own shape (:func:`build_graph_floor`: the same nodes,
  edges, routers, state and input schemas; no trace policy, as the tool runs its graph when no
  tracer watches) whose node bodies do nothing but
  return a constant update of the keys the real node writes, on a typical lookup's route (one
  answered attempt, no retry: 6 nodes), invoked as the tool invokes its graph:
  ``graph_floor_p50_ms`` is what LangGraph itself costs a lookup of this shape, and
  ``pipeline_overhead_beyond_floor_p50_ms`` (``pipeline_overhead_p50_ms - graph_floor_p50_ms``)
  what the node bodies and the tool layer add to it.
* **Forced retry**: a tool with ``reference_threshold=1.0`` (cache cleared too): every lookup
  whose L0 filter applies is retried without it (two L1 searches). Questions that get no filter are
  prefixed with a category of the catalog (e.g. ``"databases: ..."``); only lookups that
  really retried are counted, against the bare search on the same question text.
* **Ingest throughput**: ``ingest_folder`` against ``Milvus.from_documents`` on the same
  chunks (the same indexed text) with the same embedder, into throwaway collections.
* **Cold start**: a fresh Python process until its first answer (tool and bare), measured from
  spawn. It needs the Milvus Lite database not to be open in this process (else skipped).
* **Peak memory**: ``ru_maxrss`` of this process and of the cold-start processes.

Invocation records go to a throwaway SQLite file, so a bench never fills the real table. A
queued record (``record_wait=false``) is written on the recorder's thread after its call returns;
the bench waits for that write outside the timer after each lookup, so it never lands inside the
next series' timed call.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from itertools import cycle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from pydantic import SecretStr

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.metrics import percentile
from langchain_lookup_knowledge.knowledge import SAMPLE_KB
from langchain_lookup_knowledge.questions import read_question_file, readable_only
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import URL_FIELDS, LookupSettings

if TYPE_CHECKING:
    from langchain_lookup_knowledge.pipeline.plan import QueryPlan

DEFAULT_QUESTIONS = Path(__file__).resolve().parent.parent / "sample_kb_questions.jsonl"

_CHILD_TOOL = """
import json, sys, time
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
settings = LookupSettings.model_validate_json(sys.stdin.read())
tool = create_lookup_knowledge_tool(settings)
msg = tool.invoke({"type": "tool_call", "id": "cold", "name": tool.name,
                   "args": {"query": sys.argv[1]}})
print(json.dumps({"found": bool(msg.artifact and msg.artifact.get("found"))}), flush=True)
"""

_CHILD_BARE = """
import json, sys
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_milvus import Milvus
settings = LookupSettings.model_validate_json(sys.stdin.read())
store = Milvus(embedding_function=build_embeddings(settings).inner,
               collection_name=settings.collection,
               connection_args={"uri": settings.resolved_milvus_uri},
               primary_field=settings.id_field, text_field=settings.content_field,
               vector_field=settings.vector_field, auto_id=False,
               index_params={"index_type": settings.index_type,
                             "metric_type": settings.metric_type},
               search_params={"metric_type": settings.metric_type})
hits = store.similarity_search_with_score(sys.argv[1], k=settings.top_k)
print(json.dumps({"found": bool(hits)}), flush=True)
"""


def load_bench_questions(path: str | Path | None) -> list[str]:
    """Questions: JSONL (``q``, or BEIR's ``text``) or one per line; the sample questions by
    default. A file with an unreadable line is refused, naming each such line.

    Raises:
        QuestionFileError: the file is missing, empty or has unreadable lines.
    """
    file = Path(path).expanduser() if path else DEFAULT_QUESTIONS
    return [q.text for q in readable_only(read_question_file(file), str(file))]


def bench_knowledge_folder(kb: str | Path | None) -> Path:
    """The folder the ingest benchmark reads, as an absolute path (the sample KB by default).

    Resolved first: the loader names each file relative to the folder it walked, so a relative
    ``--kb`` such as ``../runbooks`` would fail the ingest after every lookup was measured.

    Raises:
        ConfigurationError: the folder does not exist.

    Example:
        >>> bench_knowledge_folder(None) == SAMPLE_KB
        True
    """
    folder = Path(kb).expanduser().resolve() if kb else SAMPLE_KB
    if not folder.is_dir():
        raise ConfigurationError(f"knowledge folder not found: {folder}")
    return folder


def _settings_json(settings: LookupSettings) -> str:
    data = {
        k: (v.get_secret_value() if isinstance(v, SecretStr) else v)
        for k, v in settings.model_dump().items()
    }
    # model_dump masks URL passwords; the child process needs the real URLs.
    data.update({name: getattr(settings, name) for name in URL_FIELDS})
    return json.dumps(data, default=str)


def _lite_db_busy(settings: LookupSettings) -> bool:
    if not settings.is_milvus_lite:
        return False
    from langchain_lookup_knowledge.store.connection import _lite_lock_holder

    path = Path(settings.resolved_milvus_uri).expanduser()
    return path.is_dir() and _lite_lock_holder(path)


def _wait_until_free(settings: LookupSettings, timeout_s: float = 60.0) -> None:
    """A child's Milvus Lite server can outlive the child briefly; wait for its lock."""
    deadline = time.monotonic() + timeout_s
    while _lite_db_busy(settings) and time.monotonic() < deadline:
        time.sleep(0.2)


def _child_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def cold_start(settings: LookupSettings, query: str, script: str) -> dict[str, Any]:
    """Seconds from spawning a Python process until it prints its first answer."""
    with tempfile.TemporaryFile(mode="w+") as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", script, query],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=os.environ | {"TQDM_DISABLE": "1"},
        )
        stdin, stdout = proc.stdin, proc.stdout
        if stdin is None or stdout is None:  # pragma: no cover - PIPE always gives both
            msg = "cold start: no pipes to the child process"
            raise RuntimeError(msg)
        stdin.write(_settings_json(settings))
        stdin.close()
        line = stdout.readline()
        seconds = time.perf_counter() - start
        stdout.read()
        proc.wait(timeout=300)
        _wait_until_free(settings)
        errors.seek(0)
        err = errors.read()
    if proc.returncode != 0 or not line.strip():
        tail = err.strip().splitlines()[-1:] or ["no output"]
        return {"seconds": None, "error": tail[0][:300]}
    return {"seconds": round(seconds, 3), "found": json.loads(line).get("found")}


class GraphFloorNodes:
    """No-op bodies for the lookup graph's nodes (see :func:`build_graph_floor`).

    Each returns a constant update of the keys its real node writes, so LangGraph does the same
    channel writes and reducers (``attempts``, ``candidates``, ``timings_ms``); the plan has a
    first attempt and that attempt answers, so the real routers take a typical lookup's route.
    The retry nodes are wired, never reached.
    """

    def __init__(self, plan: QueryPlan) -> None:
        from langchain_lookup_knowledge.core.models import RetrievalAttempt

        first = plan.first_attempt.name if plan.first_attempt is not None else "unfiltered"
        self._plan = plan
        self._attempts = {
            path: [RetrievalAttempt(name=first, path=path, status="ok")]
            for path in ("vectorstore", "sdk")
        }

    def transform_query(self, state: Any) -> dict[str, Any]:
        return {
            "plan": self._plan,
            "query_vector": None,
            "attempts": [],
            "timings_ms": {"transform_query": 0.0},
            "started_at": 0.0,
        }

    def _retrieved(self, path: str) -> dict[str, Any]:
        return {"attempts": self._attempts[path], "candidates": [], "path_used": path}

    def retrieve_vectorstore(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return self._retrieved("vectorstore")

    def retrieve_sdk(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return self._retrieved("sdk")

    retry_unfiltered = retrieve_vectorstore
    retry_unfiltered_sdk = retrieve_sdk

    def postprocess(self, state: Any) -> dict[str, Any]:
        return {"selection": None, "nearest_sources": [], "timings_ms": {"postprocess": 0.0}}

    def pack_context(self, state: Any) -> dict[str, Any]:
        return {"context_pack": None}

    def assemble_result(self, state: Any) -> dict[str, Any]:
        return {"lookup_result": None, "retrieval_details": {}, "retrieval_error": None}

    def record_invocation(self, state: Any) -> dict[str, Any]:
        return {"result": {}, "error": None}


def build_graph_floor(settings: LookupSettings, plan: QueryPlan) -> Any:
    """The lookup graph's shape with no-op node bodies: what LangGraph alone costs a lookup.

    The same wiring as :func:`~langchain_lookup_knowledge.pipeline.graph.build_lookup_graph`
    (:func:`~langchain_lookup_knowledge.pipeline.graph.wire_lookup_graph`: node names, input
    schemas, edges, the real routers for ``settings.mode``; no trace policy, as the tool's
    untraced graph), the bodies :class:`GraphFloorNodes` over ``plan`` (a plan with a first
    attempt: a typical route).
    """
    from langchain_lookup_knowledge.pipeline.graph import LookupRouters, wire_lookup_graph

    builder = wire_lookup_graph(GraphFloorNodes(plan), LookupRouters(settings), trace_policy=False)
    return builder.compile(name="lookup_knowledge", checkpointer=False)


def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000.0, value


def _stats(values: Sequence[float]) -> dict[str, float | int]:
    return {
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
        "n": len(values),
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b > 0 else None


class _Bar:
    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="call", desc="bench", file=sys.stderr, leave=False)

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _ingest_bench(settings: LookupSettings, kb: Path, embedder: Any) -> dict[str, Any]:
    """``ingest_folder`` vs ``Milvus.from_documents`` on the same chunks and embedder."""
    from langchain_milvus import Milvus

    from langchain_lookup_knowledge.embeddings.window import window_of
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.knowledge.chunking import chunk_document, embedding_text
    from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document
    from langchain_lookup_knowledge.store.connection import connection_args, open_client

    window = window_of(embedder, settings.embedding_max_tokens)
    docs: list[Document] = []
    ids: list[str] = []
    for file in iter_markdown_files(kb):
        doc = load_document(file, kb, settings.max_file_bytes)
        if isinstance(doc, KnowledgeDocument):
            for chunk in chunk_document(doc, settings.chunk_size, settings.chunk_overlap, window):
                docs.append(
                    Document(
                        page_content=embedding_text(chunk, doc, window),
                        metadata={"source": chunk.source},
                    )
                )
                ids.append(chunk.evidence_key)
    if not docs:
        raise ConfigurationError(f"no markdown files to ingest under {kb}")
    tag = uuid.uuid4().hex[:8]
    ours = settings.model_copy(
        update={"collection": f"bench_ingest_{tag}", "catalog_collection": None}
    )
    bare_name = f"bench_bare_{tag}"
    client = open_client(settings)
    try:
        start = time.perf_counter()
        Milvus.from_documents(
            docs,
            embedder,
            ids=ids,
            collection_name=bare_name,
            connection_args=connection_args(settings),
            index_params={"index_type": "FLAT", "metric_type": "COSINE"},
        )
        bare_s = time.perf_counter() - start
        report = ingest_folder(kb, ours, embeddings=embedder, show_progress=False)
        ours_s = report.seconds
    finally:
        drop_scratch_collections(client, tag)
    ours_rate = report.chunks_written / ours_s if ours_s else 0.0
    bare_rate = len(docs) / bare_s if bare_s else 0.0
    return {
        "chunks": len(docs),
        "ingest_chunks_per_s": round(ours_rate, 2),
        "bare_ingest_chunks_per_s": round(bare_rate, 2),
        "ingest_vs_bare_ratio": _ratio(ours_rate, bare_rate),
        "ingest_s": round(ours_s, 3),
        "bare_ingest_s": round(bare_s, 3),
    }


def drop_scratch_collections(client: Any, tag: str) -> list[str]:
    """Drop every collection whose name holds ``tag`` (a bench's throwaway chunk collection
    and all it made beside it: catalog, vocabulary, the bare store's); returns their names.

    Example:
        >>> drop_scratch_collections(client, "3f2a9c1e")  # doctest: +SKIP
        ['bench_bare_3f2a9c1e', 'bench_ingest_3f2a9c1e', 'bench_ingest_3f2a9c1e_catalog', ...]
    """
    dropped = sorted(name for name in client.list_collections() if tag in name)
    for name in dropped:
        client.drop_collection(name)
    return dropped


def _retry_questions(questions: Sequence[str], categories: Sequence[str]) -> list[str]:
    cats = [c for c in categories if c.strip()]
    if not cats:
        return list(questions)
    return [f"{cat}: {q}" for q, cat in zip(questions, cycle(cats), strict=False)]


def run_bench(
    settings: LookupSettings,
    *,
    rounds: int = 5,
    queries_file: str | Path | None = None,
    kb: str | Path | None = None,
    cold_start_enabled: bool = True,
    show_progress: bool | None = None,
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
        "load_average": {"start": _load_average()},
    }

    # Cold start first: a fresh process must be able to open the database.
    if cold_start_enabled and _lite_db_busy(settings):
        report["cold_start"] = {
            "skipped": "the Milvus Lite database is open in this process "
            "or another one; run bench in a fresh process"
        }
    elif cold_start_enabled:
        report["cold_start"] = {
            "lookup": cold_start(settings, questions[0], _CHILD_TOOL),
            "bare": cold_start(settings, questions[0], _CHILD_BARE),
            "peak_rss_mb": round(_child_maxrss_mb(), 1),
        }
        _wait_until_free(settings)
    report["cold_start_s"] = (report.get("cold_start", {}).get("lookup") or {}).get("seconds")
    report["bare_cold_start_s"] = (report.get("cold_start", {}).get("bare") or {}).get("seconds")

    embedder = build_embeddings(settings)
    raw = embedder.inner
    client = open_client(settings)
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
    retry_qs = [q for q in questions if _retried(call(retry_tool, q))]
    if not retry_qs:
        retry_qs = [
            q for q in _retry_questions(questions, categories) if _retried(call(retry_tool, q))
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
    bar = _Bar(total, progress_enabled(show_progress))
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
                series[name].append(_ms(fn)[0])
                if name in ("lookup", "lookup_cached"):
                    recorder.flush()
                bar.update()
        for q in retry_qs:
            for name in ["retry", "bare_retry"] if r % 2 == 0 else ["bare_retry", "retry"]:
                fn = fresh(retry_tool, retry_embedder, q) if name == "retry" else partial(bare, q)
                elapsed, value = _ms(fn)
                if name == "retry":
                    retried += int(_retried(value))
                    recorder.flush()
                series[name].append(elapsed)
                bar.update()
    bar.close()

    stats = {name: _stats(values) for name, values in series.items()}
    report["latency"] = stats
    report["lookup_p50_ms"] = stats["lookup"]["p50_ms"]
    report["lookup_p95_ms"] = stats["lookup"]["p95_ms"]
    report["bare_p50_ms"] = stats["bare"]["p50_ms"]
    report["bare_p95_ms"] = stats["bare"]["p95_ms"]
    report["lookup_cached_p50_ms"] = stats["lookup_cached"]["p50_ms"]
    report["lookup_vs_bare_p50_ratio"] = _ratio(stats["lookup"]["p50_ms"], stats["bare"]["p50_ms"])
    report["lookup_cached_vs_bare_p50_ratio"] = _ratio(
        stats["lookup_cached"]["p50_ms"], stats["bare"]["p50_ms"]
    )
    report["l1_search_p50_ms"] = stats["l1_search"]["p50_ms"]
    report["l1_search_vs_bare_p50_ratio"] = _ratio(
        stats["l1_search"]["p50_ms"], stats["bare"]["p50_ms"]
    )
    # The pipeline's own overhead: what a lookup costs beyond the L1 search it must do.
    report["pipeline_overhead_p50_ms"] = round(
        stats["lookup"]["p50_ms"] - stats["l1_search"]["p50_ms"], 2
    )
    report["pipeline_overhead_paired_p50_ms"] = round(
        percentile([a - b for a, b in zip(series["lookup"], series["l1_search"], strict=True)], 50),
        2,
    )  # the same question in the same round, call by call: less noise than a difference of p50s
    # What LangGraph alone costs this shape, and what the node bodies and the tool layer add.
    report["graph_floor_p50_ms"] = stats["graph_floor"]["p50_ms"]
    report["pipeline_overhead_beyond_floor_p50_ms"] = round(
        report["pipeline_overhead_p50_ms"] - report["graph_floor_p50_ms"], 2
    )
    if "bare_hybrid" in stats:
        report["bare_hybrid_p50_ms"] = stats["bare_hybrid"]["p50_ms"]
        report["lookup_vs_bare_hybrid_p50_ratio"] = _ratio(
            stats["lookup"]["p50_ms"], stats["bare_hybrid"]["p50_ms"]
        )
        report["l1_search_vs_bare_hybrid_p50_ratio"] = _ratio(
            stats["l1_search"]["p50_ms"], stats["bare_hybrid"]["p50_ms"]
        )
    report["load_average"]["end"] = _load_average()
    report["retry_p50_ms"] = stats["retry"]["p50_ms"] if retry_qs else None
    report["retry_vs_bare_p50_ratio"] = (
        _ratio(stats["retry"]["p50_ms"], stats["bare_retry"]["p50_ms"]) if retry_qs else None
    )
    report["retry_questions"] = len(retry_qs)
    report["retried_lookups"] = retried
    report["embedding_cache"] = {"hits": embedder.hits, "misses": embedder.misses}
    report["query_embed_ms"] = _embed_ms(raw, questions)
    report["ingest"] = _ingest_bench(settings, kb_path, raw)
    report.update(
        {
            key: report["ingest"][key]
            for key in ("ingest_chunks_per_s", "bare_ingest_chunks_per_s", "ingest_vs_bare_ratio")
        }
    )
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    records.cleanup()
    return report


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (timings are only comparable on a quiet machine)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return None


def _embed_ms(raw: Any, questions: Sequence[str]) -> float:
    """p50 of one query embedding (what the cache saves on a repeated question)."""
    return round(percentile([_ms(partial(raw.embed_query, q))[0] for q in questions], 50), 2)


def _retried(message: Any) -> bool:
    artifact = getattr(message, "artifact", None) or {}
    trace = artifact.get("retrievalTrace") or {}
    return bool(trace.get("fallbackReason"))


def format_bench(report: dict[str, Any]) -> str:
    """A readable summary of a :func:`run_bench` report."""
    lat = report["latency"]
    lines = [
        f"bench on {report['collection']!r} ({report['uri']}), k={report['k']}, "
        f"{report['questions']} questions x {report['rounds']} rounds, "
        f"retrieval_mode={report['retrieval_mode']}"
    ]
    for name, label in (
        ("lookup", "tool lookup (new question)"),
        ("lookup_cached", "tool lookup (repeated: cached vector)"),
        ("l1_search", "its L1 search alone (embed + search)"),
        ("graph_floor", "its graph, no-op node bodies (floor)"),
        ("bare", "bare similarity_search_with_score"),
        ("bare_hybrid", "bare, hybrid Milvus (BM25 + RRF)"),
        ("retry", "tool lookup with forced retry"),
        ("bare_retry", "bare, same questions as retry"),
    ):
        if name not in lat:
            continue
        s = lat[name]
        lines.append(
            f"  {label:<36} p50 {s['p50_ms']:>8.2f} ms  p95 {s['p95_ms']:>8.2f} ms  (n={s['n']})"
        )
    if "pipeline_overhead_p50_ms" in report:
        lines.append(
            f"  pipeline overhead (lookup p50 - its L1 search p50) "
            f"{report['pipeline_overhead_p50_ms']:.2f} ms; paired per call "
            f"{report['pipeline_overhead_paired_p50_ms']:.2f} ms"
        )
    if "graph_floor_p50_ms" in report:
        lines.append(
            f"  LangGraph floor of this shape (no-op nodes) {report['graph_floor_p50_ms']:.2f} ms; "
            f"overhead beyond it (node bodies + tool layer) "
            f"{report['pipeline_overhead_beyond_floor_p50_ms']:.2f} ms"
        )
    if "lookup_vs_bare_hybrid_p50_ratio" in report:
        lines.append(
            f"  lookup/bare hybrid p50 ratio {report['lookup_vs_bare_hybrid_p50_ratio']} "
            f"(like for like in hybrid mode); L1 search/bare hybrid "
            f"{report.get('l1_search_vs_bare_hybrid_p50_ratio')}"
        )
    lines.append(
        f"  lookup/bare p50 ratio {report['lookup_vs_bare_p50_ratio']}; cached/bare "
        f"{report['lookup_cached_vs_bare_p50_ratio']}; retry/bare "
        f"{report['retry_vs_bare_p50_ratio']} ({report['retried_lookups']} retried)"
    )
    ing = report["ingest"]
    lines.append(
        f"  ingest {ing['ingest_chunks_per_s']} chunks/s vs Milvus.from_documents "
        f"{ing['bare_ingest_chunks_per_s']} chunks/s ({ing['chunks']} chunks; ratio "
        f"{ing['ingest_vs_bare_ratio']})"
    )
    cold = report.get("cold_start", {})
    if "skipped" in cold:
        lines.append(f"  cold start: skipped ({cold['skipped']})")
    elif cold:
        lines.append(
            f"  cold start to first answer: tool {report['cold_start_s']} s, bare "
            f"{report['bare_cold_start_s']} s (peak RSS {cold.get('peak_rss_mb')} MB)"
        )
    lines.append(f"  peak RSS of this process: {report['peak_rss_mb']} MB")
    load = report.get("load_average") or {}
    if load.get("start") and load.get("end"):
        lines.append(
            f"  load average (1/5/15 min) at start {load['start']}, at end {load['end']} "
            "(2+ on this machine: the timings are noisy, read the ratios)"
        )
    lines.append(f"  records: {'waited for' if report.get('record_wait') else 'queued'}")
    return "\n".join(lines)
