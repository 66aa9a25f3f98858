"""The comparison sidecar (off by default): the other L1 path on the same query vector.

It runs with a time bound beside the main path, and its results are normalized for comparison
(source, title, breadcrumb, category, rank, preview, labelled score). Whatever it does, the main
result is untouched: failures and time-outs are reported as sidecar status.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Sequence
from typing import Any

from langchain_lookup_knowledge.pipeline.models import Candidate, SidecarReport
from langchain_lookup_knowledge.retrieval.request import SearchRequest

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="lookup-sidecar")
PREVIEW_CHARS = 160


def comparable(candidate: Candidate) -> dict[str, Any]:
    """A candidate in the comparison shape (score semantics labelled by path)."""
    label = candidate.score_label
    return {
        "source": candidate.source,
        "evidenceKey": candidate.evidence_key,
        "title": candidate.title,
        "breadcrumb": candidate.breadcrumb,
        "category": candidate.category,
        "rank": candidate.rank,
        "contentPreview": candidate.content[:PREVIEW_CHARS],
        "scoreLabel": f"{label.path}:{label.kind}:{label.metric}",
        "scoreValue": label.raw,
        "similarity": label.similarity,
    }


def compare(main: Sequence[Candidate], side: Sequence[Candidate], k: int) -> dict[str, Any]:
    """overlap@k of evidence keys and the rank differences of shared keys."""
    main_keys = [c.evidence_key for c in main[:k]]
    side_keys = [c.evidence_key for c in side[:k]]
    shared = set(main_keys) & set(side_keys)
    denominator = max(1, min(k, max(len(main_keys), len(side_keys))))
    return {
        "overlap_at_k": round(len(shared) / denominator, 4),
        "rank_differences": [
            {"evidenceKey": key, "mainRank": main_keys.index(key) + 1,
             "sidecarRank": side_keys.index(key) + 1}
            for key in main_keys if key in shared
        ],
    }


def run_sidecar(
    runtime: Any, request: SearchRequest, *, main_path: str, main: Sequence[Candidate]
) -> SidecarReport:
    """Run the sidecar path within ``sidecar_timeout_s``; never raises."""
    settings = runtime.settings
    name = settings.sidecar_path
    if name == "other":
        name = "sdk" if main_path == "vectorstore" else "vectorstore"
    start = time.perf_counter()
    try:
        future = _POOL.submit(lambda: runtime.path(name).search(request))
        side = future.result(timeout=settings.sidecar_timeout_s)
    except concurrent.futures.TimeoutError:
        return SidecarReport(status="timeout", path=name,
                             error=f"no answer within {settings.sidecar_timeout_s:g}s",
                             latency_ms=round((time.perf_counter() - start) * 1000, 3))
    except Exception as exc:
        return SidecarReport(status="error", path=name,
                             error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                             if str(exc) else type(exc).__name__,
                             latency_ms=round((time.perf_counter() - start) * 1000, 3))
    k = settings.top_k
    report = compare(main, side, k)
    return SidecarReport(
        status="ok", path=name, k=k, overlap_at_k=report["overlap_at_k"],
        rank_differences=report["rank_differences"],
        results=[comparable(c) for c in side[:k]],
        latency_ms=round((time.perf_counter() - start) * 1000, 3),
    )
