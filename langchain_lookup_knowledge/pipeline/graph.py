"""The lookup pipeline as a LangGraph ``StateGraph``.

    transform_query -> retrieve_vectorstore --(auto: path failed)--> retrieve_sdk
      -> (filtered and no usable evidence | top similarity < reference_threshold)
      -> retry_unfiltered
      -> postprocess -> pack_context -> assemble_result -> record_invocation -> END

Nodes are plain sync functions: ``invoke`` runs them directly and ``ainvoke`` runs them in worker
threads, so the logic exists once and never blocks an event loop.

Example:
    >>> graph = build_lookup_graph(LookupSettings())  # doctest: +SKIP
    >>> graph.invoke({"query": "pod keeps restarting"})["result"].found  # doctest: +SKIP
    True
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langchain_lookup_knowledge.core.models import (
    Candidate,
    L0Hints,
    LookupResult,
    RetrievalAttempt,
    RetrievalLayer,
    RetrievalTrace,
)
from langchain_lookup_knowledge.errors import (
    EmbeddingError,
    LookupKnowledgeError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.pipeline.context_pack import pack_context
from langchain_lookup_knowledge.pipeline.details import build_retrieval_details
from langchain_lookup_knowledge.pipeline.evidence import build_evidence_blocks
from langchain_lookup_knowledge.pipeline.l0 import L0Match, single_domain
from langchain_lookup_knowledge.pipeline.relevance import completeness_hint, relevance_level
from langchain_lookup_knowledge.pipeline.rerank import RerankWeights, rerank
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.pipeline.state import LookupInput, LookupOutput, LookupState
from langchain_lookup_knowledge.query_text import clean_query_text
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.sidecar import start_sidecar
from langchain_lookup_knowledge.retrieval.traced import traced_search
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.filters import CategoryFilter, and_exprs, filter_to_expr

if TYPE_CHECKING:
    from langchain_lookup_knowledge.recording import InvocationRecorder

logger = logging.getLogger(__name__)

NO_EVIDENCE_MESSAGE = "No knowledge evidence was found for this question."
UNAVAILABLE_MESSAGE = "Knowledge retrieval unavailable: {error}"


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


class LookupNodes:
    """The node functions, bound to one :class:`LookupRuntime`."""

    def __init__(self, runtime: LookupRuntime) -> None:
        self.runtime = runtime
        self.settings = runtime.settings

    # --- query transformation -------------------------------------------------------------
    def transform_query(self, state: LookupState, config: RunnableConfig) -> dict[str, Any]:
        """L0 hints, the filter decision, and the query vector (computed once per lookup)."""
        start = time.perf_counter()
        text, notes = clean_query_text(state.get("query"), self.settings.max_query_chars)
        # Both are authoritative (a deployment's tenant scope and a caller's own filter): ANDed.
        caller_expr = and_exprs(
            filter_to_expr(self.settings.default_filter), filter_to_expr(state.get("filters"))
        )
        store_down = False
        try:
            match: L0Match = self.runtime.matcher().match(text)
        except StoreUnavailableError as exc:
            # Milvus is down: no L0 hints; the L1 attempts fail, report it and get recorded.
            notes.append(f"L0 catalog unavailable: {_short(exc)}")
            match, store_down = L0Match(), True
        hints: L0Hints = match.hints
        category = single_domain(hints) if self.settings.l0_category_filter else None
        update: dict[str, Any] = {
            "search_text": text,
            "l0_hints": hints,
            "l0_matched": match.matched,
            "category_filter": category,
            "caller_expr": caller_expr,
            "notes": notes,
            "retrieval_mode": self.settings.retrieval_mode,
            "started_at": start,
        }
        if self.settings.l1_enabled:
            embed_start = time.perf_counter()
            try:
                update["query_vector"] = self.runtime.embeddings.embed_query(text)
            except EmbeddingError as exc:
                # No vector, no L1: recorded as a failed step, reported to the model as unavailable.
                update["attempts"] = [
                    RetrievalAttempt(
                        name="embed_query",
                        path="embedding",
                        status="error",
                        error=_short(exc),
                        latency_ms=_ms(embed_start),
                    )
                ]
                update["timings_ms"] = {"transform_query": _ms(start)}
                return update
            update["timings_ms"] = {"embed_query": _ms(embed_start)}
            if store_down:
                update["pending_attempt"] = {"name": "unfiltered", "expr": caller_expr}
                update["timings_ms"] |= {"transform_query": _ms(start)}
                return update
            layout = self.runtime.layout
            mode = self.settings.retrieval_mode_for(text, bm25_analyzer=layout.analyzer)
            if mode != update["retrieval_mode"]:
                update["retrieval_mode"] = mode
                notes.append(
                    f"CJK question: retrieval_mode {mode} (cjk_retrieval_mode; "
                    "the embedder reads English only)"
                )
            if update["retrieval_mode"] != "dense" and not layout.has_bm25:
                notes.append(
                    f"retrieval_mode {update['retrieval_mode']} needs a BM25 field; "
                    f"collection {layout.name!r} has none, searched dense"
                )
                update["retrieval_mode"] = "dense"
            category_ref = layout.category_ref()
            if category and category_ref is None:
                notes.append(
                    f"L0 category filter skipped: collection {layout.name!r} has no "
                    "category or metadata field"
                )
            category_expr = (
                CategoryFilter(category).to_expr(category_ref)
                if category and category_ref
                else None
            )
            update["pending_attempt"] = {
                "name": "filtered" if category_expr else "unfiltered",
                "expr": and_exprs(caller_expr, category_expr),
            }
        else:
            notes.append("L1 disabled by configuration: L0 hints only, never evidence")
        update["timings_ms"] = update.get("timings_ms", {}) | {"transform_query": _ms(start)}
        return update

    # --- L1 retrieval ---------------------------------------------------------------------
    def _request(self, state: LookupState, expr: str | None) -> SearchRequest:
        return SearchRequest.configured(
            self.settings,
            query_text=state["search_text"],
            query_vector=state["query_vector"],
            expr=expr,
            k=self.settings.rerank_pool,
            retrieval_mode=state.get("retrieval_mode", self.settings.retrieval_mode),
            row_count=self.runtime.layout.row_count,
        )

    def _attempt(
        self,
        state: LookupState,
        config: RunnableConfig,
        path_name: str,
        name: str,
        expr: str | None,
    ) -> tuple[RetrievalAttempt, list[Candidate]]:
        start = time.perf_counter()
        try:
            path = self.runtime.path(path_name)
            request = self._request(state, expr)
            found = traced_search(path, request, config, run_name=f"l1_search_{path_name}")
        except Exception as exc:  # a failing path is data for the router, not a crash
            logger.warning("L1 path %s failed: %s", path_name, _short(exc))
            return RetrievalAttempt(
                name=name,
                filter=expr,
                path=path_name,
                status="error",
                error=_short(exc),
                latency_ms=_ms(start),
            ), []
        candidates = [c.model_copy(update={"attempt": name}) for c in found]
        top = max((c.score_label.similarity for c in candidates), default=None)
        usable = [
            c
            for c in candidates
            if c.score_label.similarity >= self.settings.min_evidence_similarity
        ]
        if not candidates or not usable:
            status = "empty"
        elif top is not None and top < self.settings.reference_threshold:
            status = "low_quality"
        else:
            status = "ok"
        attempt = RetrievalAttempt(
            name=name,
            filter=expr,
            path=path_name,
            candidates=len(candidates),
            top_similarity=None if top is None else round(top, 4),
            latency_ms=_ms(start),
            status=status,
        )
        return attempt, candidates

    def _retrieve(
        self, state: LookupState, config: RunnableConfig, path_name: str
    ) -> dict[str, Any]:
        pending = state["pending_attempt"] or {}
        sidecar = (  # started first: it runs beside the main search, within its own time bound
            start_sidecar(self.runtime, self._request(state, pending["expr"]), main_path=path_name)
            if self.settings.sidecar_enabled
            else None
        )
        attempt, candidates = self._attempt(
            state, config, path_name, pending["name"], pending["expr"]
        )
        update: dict[str, Any] = {"attempts": [attempt], "candidates": candidates}
        if attempt.status != "error":
            update["path_used"] = path_name
            if sidecar is not None:
                update["sidecar"] = sidecar.report(candidates)
        return update

    def retrieve_vectorstore(self, state: LookupState, config: RunnableConfig) -> dict[str, Any]:
        """L1 through langchain-milvus (the preferred path)."""
        return self._retrieve(state, config, "vectorstore")

    def retrieve_sdk(self, state: LookupState, config: RunnableConfig) -> dict[str, Any]:
        """L1 through raw pymilvus (``mode=sdk``, or auto mode's fallback)."""
        update = self._retrieve(state, config, "sdk")
        previous = state.get("attempts") or []
        if previous and previous[-1].status == "error" and previous[-1].path == "vectorstore":
            first = update["attempts"][0]
            update["attempts"] = [
                first.model_copy(
                    update={"path_fallback": f"vectorstore failed: {previous[-1].error}"}
                )
            ]
        return update

    def retry_unfiltered(self, state: LookupState, config: RunnableConfig) -> dict[str, Any]:
        """Same query vector, no L0 category filter; the caller's own filter is kept."""
        last = state["attempts"][-1]
        reason = (
            "filtered_vector_no_evidence"
            if last.status == "empty"
            else "filtered_vector_low_quality"
        )
        path_name = state.get("path_used") or "sdk"
        attempt, candidates = self._attempt(
            state, config, path_name, "unfiltered_retry", state.get("caller_expr")
        )
        attempts = [attempt]
        auto = self.settings.mode == "auto"
        if attempt.status == "error" and path_name == "vectorstore" and auto:
            cause = attempt.error
            attempt, candidates = self._attempt(
                state, config, "sdk", "unfiltered_retry", state.get("caller_expr")
            )
            attempts.append(
                attempt.model_copy(update={"path_fallback": f"vectorstore failed: {cause}"})
            )
        update: dict[str, Any] = {
            "attempts": attempts,
            "candidates": candidates,
            "fallback_reason": reason,
        }
        if attempt.status != "error":
            update["path_used"] = attempt.path
        return update

    # --- post-retrieval -------------------------------------------------------------------
    def postprocess(self, state: LookupState, config: RunnableConfig) -> dict[str, Any]:
        """Rule rerank with reasons, evidence blocks, dedup by evidenceKey, per-document caps."""
        start = time.perf_counter()
        candidates = state.get("candidates") or []
        match = L0Match(
            hints=state.get("l0_hints") or L0Hints(), matched=state.get("l0_matched") or {}
        )
        weights = RerankWeights.from_overrides(self.settings.rerank_weights)
        scored = rerank(candidates, state.get("search_text", ""), match, weights=weights)
        selection = build_evidence_blocks(
            scored,
            top_k=self.settings.top_k,
            per_document_cap=self.settings.per_document_cap,
            min_similarity=self.settings.min_evidence_similarity,
            l0_participated=not match.hints.empty,
        )
        return {"selection": selection, "timings_ms": {"postprocess": _ms(start)}}

    def pack_context(self, state: LookupState) -> dict[str, Any]:
        """Pack evidence into the agent's context within the budget."""
        selection = state.get("selection")
        blocks = selection.blocks if selection is not None else []
        return {"context_pack": pack_context(blocks, self.settings.context_budget_chars)}

    def assemble_result(self, state: LookupState) -> dict[str, Any]:
        """The evidence-first result contract and the retrieval details to persist."""
        attempts = state.get("attempts") or []
        selection = state.get("selection")
        blocks = selection.blocks if selection is not None else []
        hints = state.get("l0_hints") or L0Hints()
        error = None
        ok_attempts = [a for a in attempts if a.status != "error"]
        if self.settings.l1_enabled and attempts and not ok_attempts:
            error = "; ".join(f"{a.path}: {a.error}" for a in attempts if a.error)
        selected = None
        if ok_attempts:
            selected = max(
                ok_attempts, key=lambda a: (a.top_similarity or 0.0, a.name == "unfiltered_retry")
            ).name
        trace = RetrievalTrace(
            attempts=attempts,
            selected_attempt=selected,
            fallback_reason=state.get("fallback_reason"),  # type: ignore[arg-type]
            path_used=state.get("path_used"),
            retrieval_mode=state.get("retrieval_mode", self.settings.retrieval_mode),
            candidate_count=selection.candidate_count if selection is not None else 0,
            final_count=len(blocks),
            timings_ms=dict(state.get("timings_ms") or {}),
            notes=list(state.get("notes") or []),
            sidecar=state.get("sidecar"),
        )
        top = max((b.score_label.similarity for b in blocks if b.score_label), default=None)
        level = relevance_level(
            top, high=self.settings.high_relevance, medium=self.settings.medium_relevance
        )
        pack = state.get("context_pack")
        found = bool(blocks)
        if error:
            message = UNAVAILABLE_MESSAGE.format(error=error)
        elif found:
            message = f"Found {len(blocks)} evidence blocks."
        else:
            message = NO_EVIDENCE_MESSAGE
        layer: RetrievalLayer | None = None
        if found:
            layer = "L0+L1" if any(b.retrieval_layer == "L0+L1" for b in blocks) else "L1"
        result = LookupResult(
            query=state.get("search_text") or str(state.get("query", "")),
            found=found,
            evidence_status="evidence" if found else "no_evidence",
            message=message,
            evidence_blocks=blocks,
            context_pack=pack if pack is not None else pack_context([], 0),
            retrieval_trace=trace,
            rerank_trace=selection.rerank_trace if selection is not None else [],
            relevance_level=level if found else "low",
            completeness_hint=completeness_hint(
                blocks, relevance=level, l0_hints=hints, context_pack=pack
            ),
            l0_hints=hints,
            retrieval_layer=layer,
        )
        details = build_retrieval_details(result, state, selection)
        return {"result": result, "retrieval_details": details, "error": error}

    def record_invocation(self, state: LookupState) -> dict[str, Any]:
        """Persist the call (``tool_invocation.retrieval_details``); never fails the lookup."""
        recorder = self.runtime.recorder
        result = state["result"]
        started = state.get("started_at")
        latency = _ms(started) if started is not None else None  # the whole lookup, so far
        if recorder is None or not self.settings.record_invocations:
            status: dict[str, Any] = {"status": "disabled"}
        else:
            try:
                row_id = recorder.record(
                    result=result,
                    details=state["retrieval_details"],
                    error=state.get("error"),
                    latency_ms=latency,
                )
                status = {"status": "ok", "id": row_id}
            except Exception as exc:
                logger.warning("recording the tool invocation failed: %s", _short(exc))
                status = {"status": "error", "error": _short(exc)}
        timings = dict(result.retrieval_trace.timings_ms)
        if latency is not None:
            timings["total"] = latency
        trace = result.retrieval_trace.model_copy(
            update={"recording": status, "timings_ms": timings}
        )
        return {"result": result.model_copy(update={"retrieval_trace": trace})}

    # --- routers --------------------------------------------------------------------------
    def route_start(
        self, state: LookupState
    ) -> Literal["retrieve_vectorstore", "retrieve_sdk", "postprocess"]:
        """First L1 path by mode; L1 disabled goes straight to post-processing."""
        if not self.settings.l1_enabled or "query_vector" not in state:
            return "postprocess"
        return "retrieve_sdk" if self.settings.mode == "sdk" else "retrieve_vectorstore"

    def route_after_vectorstore(
        self, state: LookupState
    ) -> Literal["retrieve_sdk", "retry_unfiltered", "postprocess"]:
        """auto mode: a failed VectorStore path falls back to the SDK node."""
        last = state["attempts"][-1]
        if last.status == "error":
            return "retrieve_sdk" if self.settings.mode == "auto" else "postprocess"
        return self.route_quality(state)

    def route_quality(self, state: LookupState) -> Literal["retry_unfiltered", "postprocess"]:
        """Filtered attempt empty or below the reference threshold: retry without the filter."""
        last = state["attempts"][-1]
        if last.name == "filtered" and last.status in {"empty", "low_quality"}:
            return "retry_unfiltered"
        return "postprocess"


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}"


def build_lookup_graph(
    settings: LookupSettings | None = None,
    *,
    embeddings: Embeddings | None = None,
    recorder: InvocationRecorder | None = None,
    runtime: LookupRuntime | None = None,
    name: str = "lookup_knowledge",
) -> CompiledStateGraph:
    """Compile the lookup pipeline; input ``{"query": str}``, output has ``result``.

    Example:
        >>> graph = build_lookup_graph(LookupSettings(collection="runbooks"))  # doctest: +SKIP
        >>> out = graph.invoke({"query": "etcd is slow"})  # doctest: +SKIP
        >>> out["result"].evidence_blocks[0].source  # doctest: +SKIP
        'etcd/etcdHighFsyncDurations.md'
    """
    if runtime is None:
        settings = settings or LookupSettings()
        if recorder is None and settings.record_invocations:
            from langchain_lookup_knowledge.recording import recorder_for

            recorder = recorder_for(settings)
        runtime = LookupRuntime(settings, embeddings=embeddings, recorder=recorder)
    nodes = LookupNodes(runtime)
    builder = StateGraph(LookupState, input_schema=LookupInput, output_schema=LookupOutput)
    builder.add_node("transform_query", nodes.transform_query)
    builder.add_node("retrieve_vectorstore", nodes.retrieve_vectorstore)
    builder.add_node("retrieve_sdk", nodes.retrieve_sdk)
    builder.add_node("retry_unfiltered", nodes.retry_unfiltered)
    builder.add_node("postprocess", nodes.postprocess)
    builder.add_node("pack_context", nodes.pack_context)
    builder.add_node("assemble_result", nodes.assemble_result)
    builder.add_node("record_invocation", nodes.record_invocation)
    builder.add_edge(START, "transform_query")
    builder.add_conditional_edges("transform_query", nodes.route_start)
    builder.add_conditional_edges("retrieve_vectorstore", nodes.route_after_vectorstore)
    builder.add_conditional_edges("retrieve_sdk", nodes.route_quality)
    builder.add_edge("retry_unfiltered", "postprocess")
    builder.add_edge("postprocess", "pack_context")
    builder.add_edge("pack_context", "assemble_result")
    builder.add_edge("assemble_result", "record_invocation")
    builder.add_edge("record_invocation", END)
    graph = builder.compile(name=name)
    graph.lookup_runtime = runtime  # type: ignore[attr-defined]
    return graph


__all__ = ["LookupKnowledgeError", "LookupNodes", "build_lookup_graph"]
