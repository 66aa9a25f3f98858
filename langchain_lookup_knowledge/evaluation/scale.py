"""``lookup-knowledge bench --scale``: how search latency, memory and index builds grow with a
collection of synthetic chunks (Milvus Lite or a Milvus server by URI).

A throwaway collection of the pipeline's shape (a dense vector, a BM25 field built by Milvus from
the text) is grown to each size in turn with random unit vectors and texts drawn from a
synthetic vocabulary (Zipf-like, so BM25 has common and rare terms). At each size, for each
index type the store accepts: the dense index is built again (timed) and queries are measured:
dense search and the hybrid search (dense + BM25 fused by RRF) with the pipeline's ``k`` and
list depth. Peak RSS is this process's (Milvus Lite runs inside it). The collection is dropped
at the end.

A store without BM25 (a Milvus server before 2.5) refuses the BM25 field: the collection is then
dense only, its hybrid figures are absent and the report says why (``bm25``, ``bm25_note``),
so the dense curve of such a server is still measured.

Example:
    >>> report = run_scale(LookupSettings(), sizes=[10_000], queries=20)  # doctest: +SKIP
    >>> report["sizes"][0]["indexes"]["FLAT"]["hybrid"]["p50_ms"]  # doctest: +SKIP
    4.1
"""

from __future__ import annotations

import os
import resource
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from langchain_lookup_knowledge.evaluation.metrics import percentile
from langchain_lookup_knowledge.redaction import describe_exception, mask_url
from langchain_lookup_knowledge.settings import LookupSettings

DIMENSION = 384
VOCABULARY = 20_000
WORDS_PER_TEXT = 80
INSERT_BATCH = 2_000
INDEX_TYPES = ("FLAT", "IVF_FLAT", "HNSW")


def _index_params(index_type: str, rows: int) -> dict[str, Any]:
    if index_type == "HNSW":
        return {"M": 16, "efConstruction": 200}
    if index_type == "IVF_FLAT":  # nlist about 4 x sqrt(rows), as Milvus advises
        return {"nlist": int(min(65536, max(128, 4 * rows**0.5)))}
    return {}


def _search_params(index_type: str, depth: int) -> dict[str, Any]:
    if index_type == "HNSW":
        return {"ef": max(64, depth)}
    if index_type == "IVF_FLAT":
        return {"nprobe": 16}
    return {}


class _Corpus:
    """Synthetic texts and unit vectors, reproducible from a seed."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        self.words = np.array([f"w{i}x" for i in range(VOCABULARY)])
        ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
        self.p = (1.0 / ranks) / (1.0 / ranks).sum()

    def texts(self, n: int) -> list[str]:
        picks = self.rng.choice(VOCABULARY, size=(n, WORDS_PER_TEXT), p=self.p)
        return [" ".join(self.words[row]) for row in picks]

    def vectors(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, DIMENSION)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _create(client: Any, name: str, bm25: bool = True) -> None:
    """The throwaway collection: a dense vector, and (``bm25``) a BM25 field Milvus builds from
    the text."""
    from pymilvus import DataType

    from langchain_lookup_knowledge.store.bm25_index import add_bm25_field

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("text", DataType.VARCHAR, max_length=8192, enable_analyzer=bm25)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIMENSION)
    index = client.prepare_index_params()
    index.add_index("vector", index_type="FLAT", metric_type="COSINE")
    if bm25:
        add_bm25_field(schema, source="text", sparse="sparse", name="bm25")
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=index)


def _rebuild_dense_index(client: Any, name: str, index_type: str, rows: int) -> float:
    """Seconds to build the dense index ``index_type`` again and load the collection."""
    client.release_collection(name)
    client.drop_index(name, "vector")
    index = client.prepare_index_params()
    index.add_index(
        "vector",
        index_type=index_type,
        metric_type="COSINE",
        params=_index_params(index_type, rows),
    )
    # A dropped index lingers a moment after drop_index returns (and after list_indexes stops
    # naming it): the new one is refused as "already exists" until it is gone.
    deadline = time.monotonic() + 120.0
    while True:
        start = time.perf_counter()
        try:
            client.create_index(name, index)
            break
        except Exception as exc:
            if "already exists" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    client.load_collection(name)
    return time.perf_counter() - start


def _timed(fn: Callable[[], Any], n: int) -> dict[str, float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return {"p50_ms": round(percentile(times, 50), 2), "p95_ms": round(percentile(times, 95), 2)}


def _measure(
    client: Any, name: str, index_type: str, k: int, depth: int, queries: int, *, bm25: bool
) -> Any:
    from pymilvus import AnnSearchRequest, Function, FunctionType

    corpus = _Corpus(seed=11)
    vectors = corpus.vectors(queries)
    texts = [" ".join(t.split()[:6]) for t in corpus.texts(queries)]
    params = {"metric_type": "COSINE", "params": _search_params(index_type, depth)}
    ranker = Function(
        name="rrf",
        input_field_names=[],
        function_type=FunctionType.RERANK,
        params={"reranker": "rrf", "k": 60},
    )
    i = iter(range(10**9))

    def dense() -> Any:
        n = next(i) % queries
        return client.search(
            name, data=[vectors[n].tolist()], anns_field="vector", limit=k, search_params=params
        )

    def hybrid() -> Any:
        n = next(i) % queries
        return client.hybrid_search(
            name,
            [
                AnnSearchRequest([vectors[n].tolist()], "vector", params, limit=depth),
                AnnSearchRequest([texts[n]], "sparse", {"metric_type": "BM25"}, limit=depth),
            ],
            ranker=ranker,
            limit=k,
            output_fields=["text"],
        )

    kinds = {"dense": dense, "hybrid": hybrid} if bm25 else {"dense": dense}
    for _ in range(3):  # warm-up
        for fn in kinds.values():
            fn()
    return {kind: _timed(fn, queries) for kind, fn in kinds.items()}


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def run_scale(
    settings: LookupSettings,
    *,
    sizes: Sequence[int],
    queries: int = 50,
    index_types: Sequence[str] = INDEX_TYPES,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Grow a throwaway collection through ``sizes`` (chunks) and measure each (see module)."""
    from langchain_lookup_knowledge.core.search_depth import hybrid_list_depth
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.schema import create_with_bm25_or_dense

    say = progress or (lambda _: None)
    client = open_client(settings)
    name = f"bench_scale_{uuid.uuid4().hex[:8]}"
    k = settings.top_k
    depth = hybrid_list_depth(
        settings.rerank_pool, settings.hybrid_fetch_factor, settings.hybrid_list_depth
    )
    report: dict[str, Any] = {
        "uri": mask_url(settings.resolved_milvus_uri),
        "lite": settings.is_milvus_lite,
        "k": k,
        "hybrid_list_depth": depth,
        "queries": queries,
        "dimension": DIMENSION,
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
        "sizes": [],
    }
    corpus = _Corpus()
    dense_only = create_with_bm25_or_dense(client, name, partial(_create, client, name))
    no_bm25 = f"this store has no BM25: {dense_only}; dense only" if dense_only else None
    report["bm25"] = no_bm25 is None
    if no_bm25:
        report["bm25_note"] = no_bm25
        say(no_bm25)
    rows = 0
    built = "FLAT"  # the index the collection is created with
    try:
        for size in sorted(sizes):
            if built != "FLAT":
                # Inserting under a graph index makes the store build it on every new segment in
                # the background, still running when the next size's builds are timed: back to
                # FLAT first (not timed).
                _rebuild_dense_index(client, name, "FLAT", rows)
                built = "FLAT"
            start = time.perf_counter()
            while rows < size:
                n = min(INSERT_BATCH, size - rows)
                texts, vectors = corpus.texts(n), corpus.vectors(n)
                client.insert(
                    name,
                    [
                        {"pk": f"c{rows + j}", "text": texts[j], "vector": vectors[j].tolist()}
                        for j in range(n)
                    ],
                )
                rows += n
            client.flush(name)
            insert_s = time.perf_counter() - start
            say(f"{size:,} chunks inserted in {insert_s:.0f} s")
            point: dict[str, Any] = {"chunks": size, "insert_s": round(insert_s, 1), "indexes": {}}
            for index_type in index_types:
                try:
                    build_s = _rebuild_dense_index(client, name, index_type, size)
                except Exception as exc:  # e.g. the store does not have this index type
                    first = describe_exception(exc, limit=200, with_type=False)
                    point["indexes"][index_type] = {"not_built": first}
                    say(f"{size:,}: {index_type} not built ({first[:80]})")
                    continue
                built = index_type
                figures = _measure(
                    client, name, index_type, k, depth, queries, bm25=no_bm25 is None
                )
                point["indexes"][index_type] = {"build_s": round(build_s, 1), **figures}
                say(f"{size:,}: {index_type} built in {build_s:.1f} s, {figures}")
            point["peak_rss_mb"] = _rss_mb()
            point["load_average"] = [round(x, 2) for x in os.getloadavg()]
            report["sizes"].append(point)
    finally:
        if client.has_collection(name):
            client.drop_collection(name)
    return report


def format_scale(report: dict[str, Any]) -> str:
    """A table of a :func:`run_scale` report."""
    rss = "peak RSS MB" if report.get("lite", True) else "client RSS"
    lines = [
        f"scale bench on {report['uri']} (k={report['k']}, hybrid list depth "
        f"{report['hybrid_list_depth']}, {report['queries']} queries per point)",
        f"  {'chunks':>9}  {'index':<8} {'build s':>8} {'dense p50/p95 ms':>17} "
        f"{'hybrid p50/p95 ms':>18} {rss:>11}",
    ]
    if not report.get("bm25", True):
        lines.append(f"  no hybrid figures: {report.get('bm25_note', 'no BM25')}")
    for point in report["sizes"]:
        for index_type, fig in point["indexes"].items():
            if "not_built" in fig:
                lines.append(
                    f"  {point['chunks']:>9,}  {index_type:<8} not built: {fig['not_built']}"
                )
                continue
            d, h = fig["dense"], fig.get("hybrid")
            hybrid = f"{h['p50_ms']:>9.1f}/{h['p95_ms']:<8.1f}" if h else f"{'-':>9} {'':<8}"
            lines.append(
                f"  {point['chunks']:>9,}  {index_type:<8} {fig['build_s']:>8.1f} "
                f"{d['p50_ms']:>8.1f}/{d['p95_ms']:<8.1f} {hybrid} "
                f"{point['peak_rss_mb']:>11.0f}"
            )
    return "\n".join(lines)
