"""The human-readable form of a ``bench`` report, with a legend for every figure it prints.

Example:
    >>> print(format_bench(report))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

__all__ = ["format_bench"]


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
    if "embedder_best_chunks_per_s" in ing:
        alone = ", ".join(f"{k} {v}" for k, v in ing["embedder_chunks_per_s"].items())
        lines.append(
            f"  the embedder alone on the same chunks: {alone} chunks/s; ingest / its best "
            f"({ing['embedder_best']}) {ing['ingest_vs_embedder_ratio']}{_spread(ing)}"
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


def _spread(ing: dict[str, Any]) -> str:
    """`` (median of 2 ingests each against the embedder runs beside it, range [a, b])``."""
    span = ing.get("ingest_vs_embedder_ratio_range")
    if not span:
        return ""
    rounds = ing.get("ingest_rounds", 1)
    return (
        f" (median of {rounds} ingests, each against the embedder runs before and after it; "
        f"range [{span[0]}, {span[1]}])"
    )
