"""Measure a knowledge base's profile: what its own questions and off-topic probes score.

At ingest, :func:`measure_profile` looks up the knowledge base's pseudo-questions
(:func:`~.questions.pseudo_questions`) and a sample of the shipped off-topic probes through the
same lookup pipeline as the agent's (every block kept), embedding all of them in one batch
first; :func:`~.model.profile_from_rows` turns the lookups into the :class:`~.features.KbProfile`
stored beside the KB vocabulary (:mod:`langchain_lookup_knowledge.store.profile_store`).

Example:
    >>> profile = measure_profile(settings)  # doctest: +SKIP
    >>> profile.counts["dense.probe"]  # doctest: +SKIP
    48
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from langchain_lookup_knowledge.judgement.features import KbProfile
from langchain_lookup_knowledge.judgement.model import profile_from_rows
from langchain_lookup_knowledge.judgement.questions import pseudo_questions, read_probes

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_lookup_knowledge.core.models import EvidenceBlock
    from langchain_lookup_knowledge.settings import LookupSettings

__all__ = ["PROBES", "PSEUDO_QUESTIONS", "block_row", "measure_profile", "profile_questions"]

PSEUDO_QUESTIONS = 32
"""Pseudo-questions per knowledge base (one per document, up to this many)."""
PROBES = 48
"""Off-topic probes per knowledge base: an even sample of the shipped ones (both languages)."""


def block_row(block: EvidenceBlock) -> dict[str, Any]:
    """What the profile and the fit read of one block: its document and scores."""
    label = block.score_label
    return {
        "src": PurePosixPath(block.source).stem,
        "sim": None if label is None else label.similarity,
        "raw": None if label is None else label.raw,
        "rank": None if label is None else label.rank_score,
        "kind": None if label is None else label.kind,
    }


def profile_questions(
    texts: list[tuple[str, str]], *, pseudo: int = PSEUDO_QUESTIONS, probes: int = PROBES
) -> list[dict[str, Any]]:
    """The profiling questions of a knowledge base of ``texts`` (``(source, chunk text)``):
    ``{"q", "kind", "rel"}`` with ``kind`` ``pseudo`` (``rel``: its document) or ``probe``.

    Example:
        >>> qs = profile_questions([("a.md", "The node disk is almost full on this host.")])
        >>> [q["kind"] for q in qs].count("pseudo"), [q["kind"] for q in qs].count("probe")
        (1, 48)
    """
    shipped = read_probes()
    step = max(1, len(shipped) // probes) if probes else 0
    chosen = list(shipped[::step][:probes]) if probes else []
    out = [
        {"q": q, "kind": "pseudo", "rel": [PurePosixPath(src).stem]}
        for src, q in pseudo_questions(texts, limit=pseudo)
    ]
    return out + [{"q": q, "kind": "probe", "rel": []} for q in chosen]


def measure_profile(
    settings: LookupSettings,
    *,
    embeddings: Embeddings | None = None,
    pseudo: int = PSEUDO_QUESTIONS,
    probes: int = PROBES,
) -> KbProfile:
    """Look up the profiling questions in the collection of ``settings`` and make its profile.

    Raises what a lookup raises when the store cannot be read.
    """
    from langchain_lookup_knowledge.core.models import LookupResult
    from langchain_lookup_knowledge.pipeline.decision import evidence_signals, similarity_readable
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.store.vocabulary_store import stored_texts

    quiet = settings.model_copy(
        update={
            "evidence_decision": "similarity",
            "relevance_decision": "similarity",
            "record_invocations": False,
            "sidecar_enabled": False,
            "query_cache_size": max(settings.query_cache_size, pseudo + probes + 8),
        }
    )
    runtime = LookupRuntime(quiet, embeddings=embeddings)
    graph = build_lookup_graph(runtime=runtime, trace_policy=False)
    vocabulary = runtime.vocabulary().vocabulary
    questions = profile_questions(
        stored_texts(runtime.client, runtime.layout), pseudo=pseudo, probes=probes
    )
    runtime.embeddings.prime([q["q"] for q in questions])  # one batch, not one call each
    rows = []
    for question in questions:
        result = LookupResult.model_validate(graph.invoke({"query": question["q"]})["result"])
        if result.error is not None:
            raise RuntimeError(result.error.message)
        readable = similarity_readable(quiet, question["q"])
        signals = evidence_signals(
            result.evidence_blocks, question["q"], readable=readable, vocabulary=vocabulary
        )
        rows.append(
            question
            | {
                "blocks": [block_row(b) for b in result.evidence_blocks],
                "signals": signals.as_dict() if signals is not None else None,
                "readable": readable,
            }
        )
    return profile_from_rows(rows)


def refresh_profile(
    client: Any, settings: LookupSettings, embeddings: Embeddings | None, *, force: bool
) -> tuple[float | None, str | None]:
    """Measure and store the profile when ``force`` (the chunks changed) or when none current
    is stored; ``(seconds, None)``, ``(None, None)`` when it was current, or ``(None, why)``
    when it could not be measured (the ingest itself stands: lookups use a typical profile).
    """
    import logging
    import time

    from langchain_lookup_knowledge.store.profile_store import profile_is_current, write_profile

    if not force and profile_is_current(client, settings):
        return None, None
    started = time.perf_counter()
    try:
        profile = measure_profile(settings, embeddings=embeddings)
        seconds = time.perf_counter() - started
        write_profile(client, settings, profile, seconds)
    except Exception as exc:  # a profile never fails an ingest that wrote its chunks
        logging.getLogger(__name__).warning("KB profile not measured: %s", exc)
        return None, f"{type(exc).__name__}: {exc}"
    return seconds, None
