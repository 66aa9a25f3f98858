"""The lookup graph's node functions, bound to one :class:`LookupRuntime`.

Each node gathers inputs, calls the module that owns the decision (:mod:`.transform` and
:mod:`.plan`, :mod:`.attempts`, :mod:`.rerank` / :mod:`.evidence`, :mod:`.assemble`,
:mod:`.record_step`) and returns a typed state update. Nodes are plain sync functions:
``invoke`` runs them directly and ``ainvoke`` in worker threads, so the logic exists once and
never blocks an event loop.

Every failure on the way is data: a catalog that cannot be read costs the L0 hints (noted), a
query that cannot be embedded or a collection that cannot be opened is a failed step, so the
lookup still reaches assembly and ``record_invocation``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

from langchain_lookup_knowledge.core.filters import effective_scope
from langchain_lookup_knowledge.core.models import RetrievalAttempt
from langchain_lookup_knowledge.pipeline.assemble import (
    LookupParts,
    assemble_result,
    attempt_of_record,
)
from langchain_lookup_knowledge.pipeline.attempts import (
    AttemptOutcome,
    fallback_reason,
    ms_since,
    needs_retry,
    run_attempt,
    vectorstore_failed,
)
from langchain_lookup_knowledge.pipeline.details import build_retrieval_details, nearest_sources
from langchain_lookup_knowledge.pipeline.document_chunks import document_chunks_for_agent
from langchain_lookup_knowledge.pipeline.evidence import build_evidence_blocks
from langchain_lookup_knowledge.pipeline.expand import Neighbour, expand_for_agent, store_fetch
from langchain_lookup_knowledge.pipeline.knee import agent_measure, pack_agent_context
from langchain_lookup_knowledge.pipeline.record_step import final_output, record_call
from langchain_lookup_knowledge.pipeline.rerank import RerankWeights, rerank
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.pipeline.state import (
    AssembleInput,
    LookupInput,
    PackInput,
    PathName,
    PostprocessInput,
    RecordInput,
    RetrieveInput,
    RouteInput,
    unpack_vector,
)
from langchain_lookup_knowledge.pipeline.table_rows import (
    DocumentChunk,
    DocumentReads,
    add_rows_for_agent,
    rows_room,
    store_documents_fetch,
)
from langchain_lookup_knowledge.pipeline.transform import transform_query
from langchain_lookup_knowledge.retrieval.sidecar import start_sidecar
from langchain_lookup_knowledge.settings import LookupSettings

if TYPE_CHECKING:
    from langchain_lookup_knowledge.recording import InvocationCall

Update = dict[str, Any]
"""A partial lookup state (LangGraph merges it with the reducers of the state)."""


def _vector(state: RetrieveInput) -> list[float]:
    packed = state.get("query_vector")
    if packed is None:
        msg = "lookup graph: retrieval was routed to without a query vector"
        raise RuntimeError(msg)
    return unpack_vector(packed)


def last_attempt(state: RouteInput | RetrieveInput) -> RetrievalAttempt:
    """The latest attempt; a router that finds none was wired wrong (a bug, raised)."""
    attempts = state.get("attempts") or []
    if not attempts:
        msg = "lookup graph: a retrieval node finished without recording an attempt"
        raise RuntimeError(msg)
    return attempts[-1]


class LookupNodes:
    """The node functions of the lookup graph."""

    def __init__(self, runtime: LookupRuntime) -> None:
        self.runtime = runtime

    @property
    def settings(self) -> LookupSettings:
        """The runtime's settings, as they are now (opening the collection resolves
        ``embedding_provider=auto`` to the model it records)."""
        return self.runtime.settings

    # --- query transformation -------------------------------------------------------------
    def transform_query(self, state: LookupInput) -> Update:
        """Clean the question, L0 hints in the call's scope, the query vector, the plan."""
        return transform_query(
            self.runtime, state.get("query"), state.get("filters"), state.get("top_k")
        )

    # --- L1 retrieval ---------------------------------------------------------------------
    def _first(
        self, state: RetrieveInput, config: RunnableConfig, path: PathName, fallback: str | None
    ) -> Update:
        plan, vector = state["plan"], _vector(state)
        spec = plan.first_attempt
        if spec is None:
            msg = "lookup graph: retrieval was routed to without a first attempt in the plan"
            raise RuntimeError(msg)
        sidecar = (  # started first: it runs beside the main search, within its own time bound
            start_sidecar(self.runtime, plan.request(spec.expr, vector), main_path=path)
            if self.settings.sidecar_enabled
            else None
        )
        outcome = run_attempt(
            self.runtime, plan, spec, vector, path, config, path_fallback=fallback
        )
        update = self._outcome(outcome, path)
        if outcome.answered and sidecar is not None:
            update["sidecar"] = sidecar.report(outcome.candidates)
        return update

    def _retry(
        self, state: RetrieveInput, config: RunnableConfig, path: PathName, fallback: str | None
    ) -> Update:
        plan = state["plan"]
        outcome = run_attempt(
            self.runtime, plan, plan.retry, _vector(state), path, config, path_fallback=fallback
        )
        return self._outcome(outcome, path)

    @staticmethod
    def _outcome(outcome: AttemptOutcome, path: PathName) -> Update:
        update: Update = {"attempts": [outcome.attempt], "candidates": outcome.candidates}
        if outcome.answered:
            update["path_used"] = path
        return update

    def retrieve_vectorstore(self, state: RetrieveInput, config: RunnableConfig) -> Update:
        """L1 through langchain-milvus (the preferred path)."""
        return self._first(state, config, "vectorstore", None)

    def retrieve_sdk(self, state: RetrieveInput, config: RunnableConfig) -> Update:
        """L1 through raw pymilvus (``mode=sdk``, or auto mode's fallback edge)."""
        attempts = state.get("attempts") or []
        fallback = (
            vectorstore_failed(attempts[-1])
            if attempts and attempts[-1].path == "vectorstore"
            else None
        )
        return self._first(state, config, "sdk", fallback)

    def retry_unfiltered(self, state: RetrieveInput, config: RunnableConfig) -> Update:
        """Same query vector, no L0 category filter; the caller's own filter is kept."""
        reason = fallback_reason(last_attempt(state))
        path: PathName = state.get("path_used") or "sdk"
        return self._retry(state, config, path, None) | {"fallback_reason": reason}

    def retry_unfiltered_sdk(self, state: RetrieveInput, config: RunnableConfig) -> Update:
        """auto mode: the retry failed on the VectorStore path; the same retry on the SDK."""
        return self._retry(state, config, "sdk", vectorstore_failed(last_attempt(state)))

    # --- post-retrieval -------------------------------------------------------------------
    def postprocess(self, state: PostprocessInput) -> Update:
        """Rule rerank with reasons, evidence blocks, dedup by evidenceKey, per-document caps."""
        start = time.perf_counter()
        plan = state["plan"]
        weights = RerankWeights.of(self.settings.rerank_weights)
        candidates = state.get("candidates") or []
        attempts = state.get("attempts") or []
        record = attempt_of_record(attempts)
        scored = rerank(
            candidates,
            plan.search_text,
            plan.l0,
            weights=weights,
            ranks_of=record,
            distrust_superseded=self.settings.l0_retry_guard
            and record == "unfiltered_retry"
            and any(needs_retry(a) for a in attempts),
        )
        selection = build_evidence_blocks(
            scored,
            top_k=plan.top_k,
            per_document_cap=self.settings.per_document_cap,
            min_similarity=self.settings.min_evidence_similarity,
            l0_participated=not plan.l0.hints.empty,
        )
        return {
            "selection": selection,
            "nearest_sources": nearest_sources(candidates),
            "timings_ms": {"postprocess": ms_since(start)},
        }

    def pack_context(self, state: PackInput) -> Update:
        """Pack evidence into the agent's context within the budget, measured once: the steps
        that grow blocks and the pack read one measure (:func:`.knee.agent_measure`), carried
        to the grown blocks. The question is the cleaned one, as every other step reads it."""
        selection = state.get("selection")
        plan = state.get("plan")
        query = plan.search_text if plan is not None else state.get("query", "")
        update: Update = {}
        timings: dict[str, float] = {}
        if selection is None or not selection.blocks:
            return {"context_pack": pack_agent_context([], self.settings, query)}
        measure = agent_measure(selection.blocks, self.settings)
        rows, expand = self.settings.table_rows > 0, self.settings.section_expand_chars > 0
        documents = DocumentReads(self._fetch_documents)  # each document read once per lookup
        fetch_document = documents.one
        view = self.runtime.catalog.peek() if rows else None  # loaded by L0 already
        no_tables = view.without_tables() if view is not None else frozenset()
        reserve = 0
        if rows and expand:  # small-to-big leaves the rows their room
            start = time.perf_counter()
            reserve = rows_room(selection, fetch_document, self.settings, query, no_tables, measure)
            timings["table_rows"] = ms_since(start)
        if expand:
            start = time.perf_counter()
            selection = expand_for_agent(selection, self._fetch, self.settings, reserve, measure)
            measure = measure.updated(selection.blocks)  # the grown block quoted, once
            timings["expand"] = ms_since(start)
        if reserve or (rows and not expand):  # rows are measured once, added once
            start = time.perf_counter()
            selection = add_rows_for_agent(
                selection, fetch_document, self.settings, query, no_tables, measure
            )
            measure = measure.updated(selection.blocks)
            timings["table_rows"] = timings.get("table_rows", 0.0) + ms_since(start)
        if self.settings.best_document_chunks > 0:  # last: it takes the room the others left
            start = time.perf_counter()
            selection = document_chunks_for_agent(
                selection, documents.many, self.settings, query, measure
            )
            measure = measure.updated(selection.blocks)
            timings["document_chunks"] = ms_since(start)
        if timings:
            update = {"selection": selection, "timings_ms": timings}
        pack = pack_agent_context(selection.blocks, self.settings, query, measure)
        return update | {"context_pack": pack}

    def _fetch(self, keys: Sequence[str]) -> Mapping[str, Neighbour]:
        """Stored chunks by evidence key (small-to-big's neighbours)."""
        runtime = self.runtime
        fetch = store_fetch(runtime.client, runtime.layout, self.settings.milvus_timeout_s)
        return fetch(keys)

    def _fetch_documents(self, sources: Sequence[str]) -> Mapping[str, Sequence[DocumentChunk]]:
        """Documents' stored chunks (the option rows of a document's tables, the best chunks of
        the shown documents), by primary key when the loaded catalog knows their chunks."""
        runtime = self.runtime
        view = runtime.catalog.peek()  # loaded by L0 already; never waited for here
        counts = view.chunk_counts() if view is not None else None
        fetch = store_documents_fetch(
            runtime.client, runtime.layout, self.settings.milvus_timeout_s, counts
        )
        return fetch(sources)

    def assemble_result(self, state: AssembleInput) -> Update:
        """The evidence-first result, its retrieval error, and the details to persist."""
        plan = state.get("plan")
        selection = state.get("selection")
        # read only when it can matter: blocks to judge (a lookup whose store is down never
        # waits on the vocabulary's read)
        judged = selection is not None and bool(selection.blocks)
        parts = LookupParts(
            query=str(state.get("query", "")),
            plan=plan,
            attempts=list(state.get("attempts") or []),
            selection=selection,
            context_pack=state.get("context_pack"),
            fallback_reason=state.get("fallback_reason"),
            path_used=state.get("path_used"),
            timings_ms=dict(state.get("timings_ms") or {}),
            sidecar=state.get("sidecar"),
            vocabulary=self.runtime.vocabulary_for(plan.caller_filter if plan else None)
            if judged
            else None,
        )
        result = assemble_result(parts, self.settings)
        details = build_retrieval_details(
            result, plan, parts.selection, state.get("nearest_sources") or []
        )
        return {
            "lookup_result": result,
            "retrieval_details": details,
            "retrieval_error": result.error,
        }

    def record_invocation(self, state: RecordInput) -> Update:
        """Persist the call (``tool_invocation.retrieval_details``); never fails the lookup.

        The output is made here, as JSON (the result contract, the error): see
        :mod:`.record_step`.
        """
        result = state["lookup_result"]
        started = state.get("started_at")
        latency = ms_since(started) if started is not None else None  # the whole lookup
        error = state.get("retrieval_error")
        timings = dict(result.retrieval_trace.timings_ms)
        recorder = self.runtime.recorder if self.settings.record_invocations else None
        call: InvocationCall | None = None
        if recorder is not None:
            call = {
                "result": result,
                "details": state["retrieval_details"],
                "error": error.message if error is not None else None,
                "latency_ms": latency,
                "scope": effective_scope(self.settings.default_filter, state.get("filters")),
            }
        record_start = time.perf_counter()
        status = record_call(recorder, call, wait=self.settings.record_wait)
        if call is not None:
            timings["record_invocation"] = ms_since(record_start)
        if latency is not None:
            timings["total"] = latency
        return {
            "result": final_output(result, status, timings),
            "error": error.to_json_dict() if error is not None else None,
        }
