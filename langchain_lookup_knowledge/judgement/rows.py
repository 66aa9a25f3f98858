"""Rows for fitting the judgement: each question looked up, its blocks' scores and signals.

:func:`lookup_rows` looks up judged questions (``{"q", "kind", "rel"}``; ``kind`` ``in`` with
the documents that answer it by file stem in ``rel``, or ``near`` / ``unrelated`` / ``cross``
out of scope) and the knowledge base's profiling questions with every block kept
(``evidence_decision=similarity``), one row each, for :mod:`~.fitting`.

Example:
    >>> rows = list(lookup_rows(settings, [{"q": "disk full", "kind": "in", "rel": ["a"]}],
    ...                         kb="ops"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_lookup_knowledge.judgement.profile import (
    PROBES,
    PSEUDO_QUESTIONS,
    block_row,
    measure_profile,
)
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = ["lookup_rows"]


def lookup_rows(
    settings: LookupSettings,
    questions: Sequence[dict[str, Any]],
    *,
    kb: str,
    profile: bool = True,
    pseudo: int = PSEUDO_QUESTIONS,
    probes: int = PROBES,
) -> Iterator[dict[str, Any]]:
    """One row per question of ``questions`` and (``profile``) first the collection's profile,
    measured as ``ingest`` measures it (``{"kind": "profile", "profile": {...}}``)."""
    from langchain_lookup_knowledge.core.models import LookupResult
    from langchain_lookup_knowledge.errors import RetrievalUnavailableError
    from langchain_lookup_knowledge.pipeline.decision import evidence_signals, similarity_readable
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

    quiet = settings.model_copy(
        update={
            "evidence_decision": "similarity",
            "relevance_decision": "similarity",
            "record_invocations": False,
        }
    )
    runtime = LookupRuntime(quiet)
    graph = build_lookup_graph(runtime=runtime, trace_policy=False)
    vocabulary = runtime.vocabulary().vocabulary
    todo = list(questions)
    if profile:
        measured = measure_profile(settings, pseudo=pseudo, probes=probes)
        yield {"kind": "profile", "kb": kb, "profile": measured.to_dict()}
    for number, item in enumerate(todo):
        result = LookupResult.model_validate(graph.invoke({"query": item["q"]})["result"])
        if result.error is not None:
            raise RetrievalUnavailableError(f"lookup failed: {result.error.message}")
        readable = similarity_readable(quiet, item["q"])
        signals = evidence_signals(
            result.evidence_blocks, item["q"], readable=readable, vocabulary=vocabulary
        )
        yield dict(item) | {
            "kb": kb,
            "id": number,
            "blocks": [block_row(b) for b in result.evidence_blocks],
            "signals": signals.as_dict() if signals is not None else None,
            "readable": readable,
        }
