"""One L1 attempt: run it on a path, classify what came back, and say why a retry follows.

An attempt never raises: a failing path is data for the graph's routers (``status="error"``,
with the error and whether it is a configuration problem or a transient fault).

Example:
    >>> status_of([], min_similarity=0.3, reference_threshold=0.5)
    'empty'
    >>> fallback_reason(RetrievalAttempt(name="filtered", status="low_quality"))
    'filtered_vector_low_quality'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.runnables import RunnableConfig

from langchain_lookup_knowledge.core.models import (
    AttemptStatus,
    Candidate,
    ErrorKind,
    FallbackReason,
    RetrievalAttempt,
)
from langchain_lookup_knowledge.errors import is_damaged_store, is_permanent
from langchain_lookup_knowledge.pipeline.plan import AttemptSpec, QueryPlan
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.retrieval.request import PathProvider
from langchain_lookup_knowledge.retrieval.traced import traced_search

__all__ = [
    "AttemptOutcome",
    "error_kind",
    "failed_step",
    "fallback_reason",
    "needs_retry",
    "run_attempt",
    "status_of",
]

logger = logging.getLogger(__name__)


def ms_since(start: float) -> float:
    """Milliseconds since ``start`` (a ``perf_counter()`` value), rounded to microseconds."""
    return round((time.perf_counter() - start) * 1000.0, 3)


def error_kind(exc: BaseException) -> ErrorKind:
    """``damaged`` for a damaged store, ``configuration`` when retrying cannot help (missing
    collection, schema), else ``transient``."""
    if is_damaged_store(exc):
        return "damaged"
    return "configuration" if is_permanent(exc) else "transient"


def failed_step(name: str, path: str, exc: BaseException, start: float) -> RetrievalAttempt:
    """A step before L1 that failed (embedding the query, opening the collection)."""
    return RetrievalAttempt(
        name=name,
        path=path,
        status="error",
        error=describe_exception(exc),
        error_kind=error_kind(exc),
        latency_ms=ms_since(start),
    )


@dataclass(frozen=True)
class AttemptOutcome:
    """An attempt as the trace shows it, and its candidates (tagged with the attempt's name)."""

    attempt: RetrievalAttempt
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def answered(self) -> bool:
        """The path answered (maybe with nothing usable)."""
        return self.attempt.status != "error"


def status_of(
    candidates: Sequence[Candidate], *, min_similarity: float, reference_threshold: float
) -> AttemptStatus:
    """``empty`` (nothing usable), ``low_quality`` (best under the reference) or ``ok``."""
    top = max((c.score_label.similarity for c in candidates), default=None)
    if top is None or not any(c.score_label.similarity >= min_similarity for c in candidates):
        return "empty"
    return "low_quality" if top < reference_threshold else "ok"


def run_attempt(
    paths: PathProvider,
    plan: QueryPlan,
    spec: AttemptSpec,
    vector: Sequence[float],
    path_name: str,
    config: RunnableConfig | None,
    *,
    path_fallback: str | None = None,
) -> AttemptOutcome:
    """Search ``spec``'s filter through the path ``path_name`` as a traced retriever run."""
    settings = paths.settings
    start = time.perf_counter()
    try:
        path = paths.path(path_name)
        request = plan.request(spec.expr, vector, spec.name)
        found = traced_search(path, request, config, f"l1_search_{path_name}")
        if not found:  # a dense search of a collection holding chunks always finds some
            _check_store(paths)
    except Exception as exc:  # a failing path is data for the router, not a crash
        if not is_damaged_store(exc):
            exc = _damage_behind(paths, exc)
        logger.warning("L1 path %s failed: %s", path_name, describe_exception(exc))
        return AttemptOutcome(
            RetrievalAttempt(
                name=spec.name,
                filter=spec.expr,
                path=path_name,
                status="error",
                error=describe_exception(exc),
                error_kind=error_kind(exc),
                latency_ms=ms_since(start),
                path_fallback=path_fallback,
            )
        )
    # the built-in paths name the attempt in the candidates they make; a path that does not
    # (or returns candidates it keeps) gets copies that do
    candidates = (
        found
        if all(c.attempt == spec.name for c in found)
        else [c.model_copy(update={"attempt": spec.name}) for c in found]
    )
    top = max((c.score_label.similarity for c in candidates), default=None)
    attempt = RetrievalAttempt(
        name=spec.name,
        filter=spec.expr,
        path=path_name,
        candidates=len(candidates),
        top_similarity=None if top is None else round(top, 4),
        latency_ms=ms_since(start),
        status=status_of(
            candidates,
            min_similarity=settings.min_evidence_similarity,
            reference_threshold=settings.reference_threshold,
        ),
        path_fallback=path_fallback,
    )
    return AttemptOutcome(attempt, candidates)


def _check_store(paths: PathProvider) -> None:
    """Raise :class:`~..errors.DamagedStoreError` if ``paths`` can tell its store is damaged
    (a :class:`~.runtime.LookupRuntime` can; a provider without ``check_store`` cannot)."""
    check = getattr(paths, "check_store", None)
    if check is not None:
        check()


def _damage_behind(paths: PathProvider, exc: Exception) -> Exception:
    """The store's damage when that is why ``exc`` happened, else ``exc`` itself."""
    try:
        _check_store(paths)
    except Exception as damage:
        return damage if is_damaged_store(damage) else exc
    return exc


def needs_retry(attempt: RetrievalAttempt) -> bool:
    """The L0-filtered attempt answered with nothing usable, or below the reference."""
    return attempt.name == "filtered" and attempt.status in {"empty", "low_quality"}


def fallback_reason(attempt: RetrievalAttempt) -> FallbackReason:
    """Why the unfiltered retry ran after ``attempt`` (an attempt :func:`needs_retry` holds for)."""
    if attempt.status == "empty":
        return "filtered_vector_no_evidence"
    return "filtered_vector_low_quality"


def vectorstore_failed(attempt: RetrievalAttempt) -> str:
    """The ``path_fallback`` note of an SDK attempt that follows a failed VectorStore one."""
    return f"vectorstore failed: {attempt.error}"
