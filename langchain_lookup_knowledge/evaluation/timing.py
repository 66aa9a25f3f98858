"""Timing helpers of the benchmarks: one timed call, percentiles of a series, ratios, a bar.

Example:
    >>> latency_stats([1.0, 2.0, 3.0])["p50_ms"]
    2.0
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_lookup_knowledge.evaluation.metrics import percentile

if TYPE_CHECKING:
    pass

__all__ = [
    "ProgressBar",
    "embed_ms_of",
    "latency_report",
    "latency_stats",
    "load_average",
    "ratio_of",
    "timed_ms",
]


def timed_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000.0, value


def latency_stats(values: Sequence[float]) -> dict[str, float | int]:
    return {
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
        "n": len(values),
    }


def ratio_of(a: float, b: float) -> float | None:
    return round(a / b, 3) if b > 0 else None


class ProgressBar:
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


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (timings are only comparable on a quiet machine)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return None


def embed_ms_of(raw: Any, questions: Sequence[str]) -> float:
    """p50 of one query embedding (what the cache saves on a repeated question)."""
    return round(percentile([timed_ms(partial(raw.embed_query, q))[0] for q in questions], 50), 2)


def latency_report(series: dict[str, list[float]], *, retry_questions: int) -> dict[str, Any]:
    """The headline latency figures of ``bench`` from its timed series (milliseconds per call):
    each series' p50/p95, the ratios to the bare searches, and the pipeline's own overhead.

    Example:
        >>> names = ["lookup", "lookup_cached", "l1_search", "bare", "graph_floor"]
        >>> series = {n: [10.0, 12.0] for n in names} | {"retry": [], "bare_retry": []}
        >>> latency_report(series, retry_questions=0)["lookup_vs_bare_p50_ratio"]
        1.0
    """
    out: dict[str, Any] = {}
    stats = {name: latency_stats(values) for name, values in series.items()}
    out["latency"] = stats
    out["lookup_p50_ms"] = stats["lookup"]["p50_ms"]
    out["lookup_p95_ms"] = stats["lookup"]["p95_ms"]
    out["bare_p50_ms"] = stats["bare"]["p50_ms"]
    out["bare_p95_ms"] = stats["bare"]["p95_ms"]
    out["lookup_cached_p50_ms"] = stats["lookup_cached"]["p50_ms"]
    out["lookup_vs_bare_p50_ratio"] = ratio_of(stats["lookup"]["p50_ms"], stats["bare"]["p50_ms"])
    out["lookup_cached_vs_bare_p50_ratio"] = ratio_of(
        stats["lookup_cached"]["p50_ms"], stats["bare"]["p50_ms"]
    )
    out["l1_search_p50_ms"] = stats["l1_search"]["p50_ms"]
    out["l1_search_vs_bare_p50_ratio"] = ratio_of(
        stats["l1_search"]["p50_ms"], stats["bare"]["p50_ms"]
    )
    # The pipeline's own overhead: what a lookup costs beyond the L1 search it must do.
    out["pipeline_overhead_p50_ms"] = round(
        stats["lookup"]["p50_ms"] - stats["l1_search"]["p50_ms"], 2
    )
    out["pipeline_overhead_paired_p50_ms"] = round(
        percentile([a - b for a, b in zip(series["lookup"], series["l1_search"], strict=True)], 50),
        2,
    )  # the same question in the same round, call by call: less noise than a difference of p50s
    # What LangGraph alone costs this shape, and what the node bodies and the tool layer add.
    out["graph_floor_p50_ms"] = stats["graph_floor"]["p50_ms"]
    out["pipeline_overhead_beyond_floor_p50_ms"] = round(
        out["pipeline_overhead_p50_ms"] - out["graph_floor_p50_ms"], 2
    )
    if "bare_hybrid" in stats:
        out["bare_hybrid_p50_ms"] = stats["bare_hybrid"]["p50_ms"]
        out["lookup_vs_bare_hybrid_p50_ratio"] = ratio_of(
            stats["lookup"]["p50_ms"], stats["bare_hybrid"]["p50_ms"]
        )
        out["l1_search_vs_bare_hybrid_p50_ratio"] = ratio_of(
            stats["l1_search"]["p50_ms"], stats["bare_hybrid"]["p50_ms"]
        )
    out["retry_p50_ms"] = stats["retry"]["p50_ms"] if retry_questions else None
    out["retry_vs_bare_p50_ratio"] = (
        ratio_of(stats["retry"]["p50_ms"], stats["bare_retry"]["p50_ms"])
        if retry_questions
        else None
    )
    out["retry_questions"] = retry_questions
    return out
