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

from langchain_lookup_knowledge.core.models import Candidate, SidecarReport
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.retrieval.request import PathProvider, SearchRequest
from langchain_lookup_knowledge.settings import LookupSettings

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
            {
                "evidenceKey": key,
                "mainRank": main_keys.index(key) + 1,
                "sidecarRank": side_keys.index(key) + 1,
            }
            for key in main_keys
            if key in shared
        ],
    }


def sidecar_path_name(settings: LookupSettings, main_path: str) -> str:
    """The path the sidecar runs: the configured one, or the one that is not the main path."""
    name = str(settings.sidecar_path)
    if name == "other":
        return "sdk" if main_path == "vectorstore" else "vectorstore"
    return name


class SidecarRun:
    """A sidecar search started beside the main one; :meth:`report` waits for what is left of
    ``sidecar_timeout_s`` (counted from the start) and never raises."""

    def __init__(self, runtime: PathProvider, request: SearchRequest, *, main_path: str) -> None:
        settings = runtime.settings
        self.path = sidecar_path_name(settings, main_path)
        self.timeout = float(settings.sidecar_timeout_s)
        self.k = int(settings.top_k)
        self.start = time.perf_counter()
        self.future: concurrent.futures.Future[list[Candidate]] | None = None
        self.submit_error: str | None = None
        try:
            self.future = _POOL.submit(lambda: list(runtime.path(self.path).search(request)))
        except Exception as exc:  # e.g. the pool is shut down at interpreter exit
            self.submit_error = describe_exception(exc)

    def _ms(self) -> float:
        return round((time.perf_counter() - self.start) * 1000, 3)

    def report(self, main: Sequence[Candidate]) -> SidecarReport:
        """The comparison of the sidecar's results with ``main`` (or its error / time-out)."""
        if self.future is None:
            return SidecarReport(
                status="error", path=self.path, error=self.submit_error, latency_ms=self._ms()
            )
        left = max(0.0, self.timeout - (time.perf_counter() - self.start))
        try:
            side = self.future.result(timeout=left)
        except concurrent.futures.TimeoutError:
            self.future.cancel()
            return SidecarReport(
                status="timeout",
                path=self.path,
                error=f"no answer within {self.timeout:g}s",
                latency_ms=self._ms(),
            )
        except Exception as exc:
            return SidecarReport(
                status="error", path=self.path, error=describe_exception(exc), latency_ms=self._ms()
            )
        report = compare(main, side, self.k)
        return SidecarReport(
            status="ok",
            path=self.path,
            k=self.k,
            overlap_at_k=report["overlap_at_k"],
            rank_differences=report["rank_differences"],
            results=[comparable(c) for c in side[: self.k]],
            latency_ms=self._ms(),
        )


def start_sidecar(runtime: PathProvider, request: SearchRequest, *, main_path: str) -> SidecarRun:
    """Start the sidecar search for ``request`` now, in a worker thread (never raises)."""
    return SidecarRun(runtime, request, main_path=main_path)
