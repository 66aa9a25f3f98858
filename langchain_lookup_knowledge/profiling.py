"""Measure a knowledge base's judgement profile at ingest, and the rows a refit reads.

:func:`measure_profile` searches the knowledge base's pseudo-questions and a sample of the
shipped off-topic probes (:mod:`langchain_lookup_knowledge.judgement.questions`) with one batched
dense search (questions the embedder reads) and one batched BM25 search (the others, on a
Chinese collection), the questions embedded in one batch, and makes the
:class:`~langchain_lookup_knowledge.judgement.features.KbProfile` that ``ingest`` stores beside
the KB vocabulary (:func:`refresh_profile`). :func:`lookup_rows` looks up judged questions with
every block kept, one row each, for ``lookup-knowledge judge fit``.

Example:
    >>> profile = measure_profile(settings)  # doctest: +SKIP
    >>> profile.counts["dense.probe"]  # doctest: +SKIP
    32
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from functools import partial
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_lookup_knowledge.judgement.features import KbProfile, profile_from_rows
from langchain_lookup_knowledge.judgement.questions import (
    PROBES,
    PSEUDO_QUESTIONS,
    first_question,
    profile_questions,
    source_order,
    source_rank,
)
from langchain_lookup_knowledge.redaction import describe_exception

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_lookup_knowledge.core.models import EvidenceBlock
    from langchain_lookup_knowledge.embeddings import CachedQueryEmbeddings
    from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "ProfileQueries",
    "block_row",
    "embed_probes",
    "lookup_rows",
    "measure_beside",
    "measure_profile",
    "refresh_profile",
]

_DEPTH = 20  # hits per profiling search: the first one, and the first of another document
_T = TypeVar("_T")


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


def measure_profile(
    settings: LookupSettings,
    *,
    embeddings: Embeddings | None = None,
    pseudo: int = PSEUDO_QUESTIONS,
    probes: int = PROBES,
    keys: Mapping[str, set[str]] | None = None,
    embedded: Mapping[str, list[float]] | None = None,
) -> KbProfile:
    """Search the profiling questions in the collection of ``settings`` and make its profile.

    The key scores are those a lookup's blocks give (:meth:`~.features.ScoreVector.key`),
    read straight from one batched dense search (questions the embedder reads) and one batched
    BM25 search (the others, on a Chinese collection), the questions embedded in one batch: a
    fraction of an ingest's time. A candidate below ``min_evidence_similarity`` is no block,
    as in a lookup.

    ``keys``: the stored chunk keys by source when the caller has just read them
    (:func:`~.store.catalog_store.stored_chunk_keys`); read here otherwise. ``embedded``:
    question vectors the caller has already made with this embedder (:func:`embed_probes`);
    the others are embedded here.
    """
    from langchain_lookup_knowledge.store.catalog_store import stored_chunk_keys
    from langchain_lookup_knowledge.store.chunk_texts import iter_texts_by_source

    client, layout, embedder = _opened(settings, embeddings)
    # The documents in question order, a batch read at a time and only until enough questions.
    if keys is None:
        keys = stored_chunk_keys(client, layout.name, layout.id_field)
    documents = iter_texts_by_source(client, layout, keys, source_order(keys))
    questions = profile_questions(documents=documents, pseudo=pseudo, probes=probes)
    known = embedded or {}
    texts = [q["q"] for q in questions]
    embedder.prime([t for t in texts if t not in known])  # one batch, not one call each
    vectors = [list(known[t]) if t in known else embedder.embed_query(t) for t in texts]
    rows: list[dict[str, Any]] = []
    searches = _searches(settings, layout, questions)
    for family in ("hybrid", "sparse"):
        picked = searches[family]
        if not picked:
            continue
        hits = _search(
            client,
            layout,
            settings,
            family,
            [questions[i] for i in picked],
            [vectors[i] for i in picked],
        )
        for i, found in zip(picked, hits, strict=True):
            rows.append(
                questions[i]
                | {
                    "signals": {"family": family, "terms": _terms(questions[i]["q"])},
                    "blocks": found,
                    "readable": family != "sparse",
                }
            )
    for i in searches.get("", []):
        rows.append(questions[i] | {"signals": None, "blocks": [], "readable": False})
    return profile_from_rows(rows)


def embed_probes(
    settings: LookupSettings, embeddings: Embeddings | None, probes: int = PROBES
) -> dict[str, list[float]]:
    """The query vectors of the profile's off-topic probes, as :func:`measure_profile` makes
    them. The probes do not depend on the knowledge base: an ingest embeds them while it embeds
    its chunks (:class:`ProfileQueries`), and the profile then embeds only its pseudo-questions.

    Example:
        >>> vectors = embed_probes(settings, embedder)  # doctest: +SKIP
        >>> len(vectors)  # doctest: +SKIP
        48
    """
    return _query_vectors(
        settings, embeddings, [q["q"] for q in profile_questions(pseudo=0, probes=probes)]
    )


def _query_vectors(
    settings: LookupSettings, embeddings: Embeddings | None, texts: list[str]
) -> dict[str, list[float]]:
    """``texts`` embedded as :func:`measure_profile` embeds its questions (one batch)."""
    from langchain_lookup_knowledge.embeddings import cached_embeddings

    embedder = cached_embeddings(settings, embeddings)
    embedder.prime(texts)
    return {text: embedder.embed_query(text) for text in texts}


def _in_thread(job: Callable[[], _T], name: str) -> Future[_T]:
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    try:
        return pool.submit(job)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


class ProfileQueries:
    """The profile's question vectors, embedded in a thread of their own while an ingest embeds
    its chunks, so that the profile measured after the write embeds (almost) nothing.

    The off-topic probes (they do not depend on the knowledge base) start at once. The
    pseudo-questions come from the documents written (:meth:`note`, with their chunks' stored
    texts): of those, only the first ``pseudo`` with a question in :func:`source_order` can be
    the profile's, and they are embedded after the probes (:meth:`embed_noted`, before the last
    group of chunks). On two cores the model's threads leave room beside the chunk batches. A
    question the profile then asks that is not here (a document the write refused, one written
    before this run) is embedded by the profile.

    Example:
        >>> queries = ProfileQueries(settings, embedder)  # doctest: +SKIP
        >>> text = "Node > Disk\\n\\nThe node disk is almost full on this host."
        >>> queries.note("node/disk.md", [text])  # doctest: +SKIP
        >>> queries.embed_noted()  # doctest: +SKIP
        >>> "The node disk is almost full on this host" in queries.result()  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        settings: LookupSettings,
        embeddings: Embeddings | None,
        *,
        pseudo: int = PSEUDO_QUESTIONS,
        probes: int = PROBES,
    ) -> None:
        self._settings = settings
        self._embeddings = embeddings
        self._pseudo = pseudo
        self._noted: dict[str, tuple[str, str]] = {}  # source -> (its rank, its question)
        self._jobs = [
            _in_thread(partial(embed_probes, settings, embeddings, probes), "profile-probes")
        ]

    def note(self, source: str, texts: Sequence[str]) -> None:
        """A document about to be written, with its chunks' stored texts in chunk order."""
        if self._pseudo <= 0:
            return
        question = first_question(texts)
        if question is None:
            return
        self._noted[source] = (source_rank(source), question)
        if len(self._noted) > 2 * self._pseudo:  # only the first ``pseudo`` can be asked
            kept = sorted(self._noted.items(), key=lambda item: item[1][0])[: self._pseudo]
            self._noted = dict(kept)

    def embed_noted(self) -> None:
        """Embed the noted questions that can be the profile's, after the probes."""
        firsts = sorted(self._noted.values())[: self._pseudo]
        self._noted = {}
        texts = list(dict.fromkeys(question for _, question in firsts))
        if not texts:
            return
        before = self._jobs[-1]

        def job() -> dict[str, list[float]]:
            wait((before,))  # one model call at a time beside the chunks
            return _query_vectors(self._settings, self._embeddings, texts)

        self._jobs.append(_in_thread(job, "profile-pseudo"))

    def result(self) -> dict[str, list[float]]:
        """The vectors made, by question (waits for them); a job that failed leaves its
        questions to the profile."""
        out: dict[str, list[float]] = {}
        for done in self._jobs:
            try:
                out |= done.result()
            except Exception as exc:
                logging.getLogger(__name__).info(
                    "profile questions embedded again: %s", describe_exception(exc)
                )
        return out

    def cancel(self) -> None:
        """Embed nothing not started yet (one running ends on its own)."""
        for done in self._jobs:
            done.cancel()


def _opened(
    settings: LookupSettings, embeddings: Embeddings | None
) -> tuple[Any, Any, CachedQueryEmbeddings]:
    """The client, the chunk collection as a lookup opens it (checked against the embedder)
    and the embedder behind its query cache. Not a lookup runtime: its warm-up search of the
    BM25 field would build that index in memory (on Milvus Lite, 160 MB for 20,000 chunks)
    for profiling questions that may never search it."""
    from langchain_lookup_knowledge.embeddings import cached_embeddings
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.describe import describe_for_embedder

    embedder = cached_embeddings(settings, embeddings)
    client = open_client(settings)
    layout, _ = describe_for_embedder(client, settings, embedder)
    return client, layout, embedder


def _terms(text: str) -> int:
    from langchain_lookup_knowledge.pipeline.rerank import query_terms

    return len(query_terms(text))


def _searches(
    settings: LookupSettings, layout: Any, questions: list[dict[str, Any]]
) -> dict[str, list[int]]:
    """Question indexes by the family their lookup takes: ``hybrid`` (the embedder reads them:
    a dense search gives their key score), ``sparse`` (BM25 alone), ``""`` (neither: a key
    score of 0, as a lookup without a BM25 field on a question the embedder cannot read)."""
    from langchain_lookup_knowledge.judgement.signals import similarity_readable
    from langchain_lookup_knowledge.pipeline.plan import retrieval_mode_for

    out: dict[str, list[int]] = {"hybrid": [], "sparse": [], "": []}
    for i, question in enumerate(questions):
        text = question["q"]
        mode = retrieval_mode_for(settings, text, bm25_analyzer=layout.analyzer)
        if mode == "sparse" and layout.has_bm25:
            out["sparse"].append(i)
        elif similarity_readable(settings, text):
            out["hybrid"].append(i)
        else:
            out[""].append(i)
    return out


def _search(
    client: Any,
    layout: Any,
    settings: LookupSettings,
    family: str,
    questions: list[dict[str, Any]],
    vectors: list[list[float]],
) -> list[list[dict[str, Any]]]:
    """Per question, its hits as rows' blocks (``src``, ``sim``, ``raw``), floor applied."""
    from langchain_lookup_knowledge.retrieval.request import SearchRequest
    from langchain_lookup_knowledge.retrieval.scores import cosine_to, dense_similarity
    from langchain_lookup_knowledge.retrieval.sdk import SPARSE_SEARCH_PARAMS
    from langchain_lookup_knowledge.store.catalog_store import source_of_chunk_key
    from langchain_lookup_knowledge.store.schema import dense_search_params

    if family == "sparse":
        data: list[Any] = [
            SearchRequest.configured(
                settings,
                query_text=q["q"],
                query_vector=[],
                expr=None,
                k=_DEPTH,
                retrieval_mode="sparse",
                row_count=layout.row_count,
                lexical=layout.lexical_form,
            ).bm25_text
            for q in questions
        ]
        field, params = layout.sparse_field, SPARSE_SEARCH_PARAMS
    else:
        data, field, params = vectors, layout.vector_field, dense_search_params(layout, settings)
    outputs = [layout.id_field] + ([layout.vector_field] if family == "sparse" else [])
    results = client.search(
        layout.name,
        data=data,
        anns_field=field,
        search_params=params,
        limit=_DEPTH,
        output_fields=outputs,
        timeout=settings.milvus_timeout_s,
    )
    out = []
    for vector, hits in zip(vectors, results, strict=True):
        if family == "sparse":
            sims = cosine_to(vector, [h["entity"][layout.vector_field] for h in hits])
        else:
            sims = [dense_similarity(layout.metric_type, float(h["distance"])) for h in hits]
        out.append(
            [
                {
                    "src": PurePosixPath(
                        source_of_chunk_key(str(h["entity"].get(layout.id_field, h.get("id"))))
                    ).stem,
                    "sim": sim,
                    "raw": float(h["distance"]),
                    "rank": None,
                }
                for h, sim in zip(hits, sims, strict=True)
                if sim >= settings.min_evidence_similarity
            ]
        )
    return out


def measure_beside(
    settings: LookupSettings,
    embeddings: Embeddings | None,
    *,
    keys: Mapping[str, set[str]] | None = None,
    queries: ProfileQueries | None = None,
) -> Future[tuple[KbProfile, float]]:
    """:func:`measure_profile` started on a thread of its own, with the seconds it took: an
    ingest counts the vocabulary meanwhile (the profile does not read it; each waits on the
    store, and on two cores they run side by side). ``keys`` and ``queries`` as for
    :func:`refresh_profile`, which stores the result.

    Example:
        >>> measuring = measure_beside(settings, embedder, keys=keys)  # doctest: +SKIP
        >>> refresh_profile(  # doctest: +SKIP
        ...     client, settings, embedder, force=True, measuring=measuring
        ... )
        (0.31, None)
    """
    return _in_thread(
        partial(_timed_profile, settings, embeddings, keys, queries), "profile-measure"
    )


def _timed_profile(
    settings: LookupSettings,
    embeddings: Embeddings | None,
    keys: Mapping[str, set[str]] | None,
    queries: ProfileQueries | None,
) -> tuple[KbProfile, float]:
    """:func:`measure_profile` with the seconds it took, the questions' vectors made beside the
    write included (``queries``: waited for here)."""
    import time

    started = time.perf_counter()
    embedded = queries.result() if queries is not None else None
    profile = measure_profile(settings, embeddings=embeddings, keys=keys, embedded=embedded)
    return profile, time.perf_counter() - started


def refresh_profile(
    client: Any,
    settings: LookupSettings,
    embeddings: Embeddings | None,
    *,
    force: bool,
    keys: Mapping[str, set[str]] | None = None,
    queries: ProfileQueries | None = None,
    measuring: Future[tuple[KbProfile, float]] | None = None,
) -> tuple[float | None, str | None]:
    """Measure and store the profile when ``force`` (the chunks changed) or when none current
    is stored; ``(seconds, None)``, ``(None, None)`` when it was current, or ``(None, why)``
    when it could not be measured (the ingest itself stands: lookups use a typical profile).
    ``keys``: the stored chunk keys by source, when the caller has read them. ``queries``: the
    questions' vectors being made beside the write (:class:`ProfileQueries`); a failure there
    only means they are embedded here. ``measuring``: the profile already being measured
    (:func:`measure_beside`, when ``force``): only stored here.
    """
    from langchain_lookup_knowledge.store.profile_store import profile_is_current, write_profile

    if not force and profile_is_current(client, settings):
        return None, None
    try:
        if measuring is not None:
            profile, seconds = measuring.result()
        else:
            profile, seconds = _timed_profile(settings, embeddings, keys, queries)
        write_profile(client, settings, profile, seconds)
    except Exception as exc:  # a profile never fails an ingest that wrote its chunks
        described = describe_exception(exc)
        logging.getLogger(__name__).warning("KB profile not measured: %s", described)
        return None, described
    return seconds, None


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
    from langchain_lookup_knowledge.judgement.signals import evidence_signals, similarity_readable
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

    quiet = settings.model_copy(update={"record_invocations": False})
    runtime = LookupRuntime(quiet)
    graph = build_lookup_graph(runtime=runtime, trace_policy=False)
    vocabulary = runtime.vocabulary().vocabulary
    todo = list(questions)
    if profile:
        measured = measure_profile(settings, pseudo=pseudo, probes=probes)
        yield {"kind": "profile", "kb": kb, "profile": measured.to_dict()}
    for number, item in enumerate(todo):
        output: dict[str, Any] = {}
        blocks: list[EvidenceBlock] = []
        # every block is kept, whatever the decision concluded: the blocks as packed
        for update in graph.stream({"query": item["q"]}, stream_mode="updates"):
            for values in update.values():
                output.update(values or {})
                if values and "selection" in values:
                    blocks = list(values["selection"].blocks)
        result = LookupResult.model_validate(output["result"])
        if result.error is not None:
            raise RetrievalUnavailableError(f"lookup failed: {result.error.message}")
        readable = similarity_readable(quiet, item["q"])
        signals = evidence_signals(blocks, item["q"], readable=readable, vocabulary=vocabulary)
        yield dict(item) | {
            "kb": kb,
            "id": number,
            "blocks": [block_row(b) for b in blocks],
            "signals": signals.as_dict() if signals is not None else None,
            "readable": readable,
        }
