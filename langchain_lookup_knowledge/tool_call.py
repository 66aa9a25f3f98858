"""One tool call: the graph invoked in its run, the result turned into the agent's message.

Example:
    >>> LookupCall(runtime, graph)("disk full", config)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import (
    BaseCallbackManager,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException
from langchain_core.tracers.base import BaseTracer

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.core.models import ErrorKind, LookupResult, RetrievalError
from langchain_lookup_knowledge.errors import InvalidQueryError, LookupKnowledgeError
from langchain_lookup_knowledge.pipeline.attempts import error_kind
from langchain_lookup_knowledge.pipeline.message import render_message
from langchain_lookup_knowledge.redaction import describe_exception, redact
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.tool_errors import (
    EMPTY_QUERY_ERROR,
    UNAVAILABLE_ERROR,
    tool_error_message,
)

__all__ = [
    "PIPELINE_RUN_NAME",
    "LookupCall",
    "annotate_tool_run",
    "run_metadata",
    "traced_lookup",
]

PIPELINE_RUN_NAME = "lookup_pipeline"
"""The run name of the pipeline graph under the tool's run (what a trace shows)."""

logger = logging.getLogger(__name__)


def run_metadata(result: LookupResult, details: dict[str, Any]) -> dict[str, Any]:
    """Compact per-call retrieval details for the tool run's metadata (``lookup_*`` keys)."""
    trace = result.retrieval_trace
    recording = trace.recording or {}
    return {
        "lookup_found": result.found,
        "lookup_evidence_status": result.evidence_status,
        "lookup_relevance": result.relevance_level,
        "lookup_layer": result.retrieval_layer,
        "lookup_path": trace.path_used,
        "lookup_selected_attempt": trace.selected_attempt,
        "lookup_fallback_reason": trace.fallback_reason,
        "lookup_attempts": [
            f"{a.name}@{a.path}:{a.status}"
            + (f"({a.top_similarity})" if a.top_similarity is not None else "")
            for a in trace.attempts
        ],
        "lookup_sources": list(dict.fromkeys(b.source for b in result.evidence_blocks)),
        "lookup_candidate_count": details.get("candidate_count", trace.candidate_count),
        "lookup_final_count": len(result.evidence_blocks),
        "lookup_latency_ms": trace.timings_ms.get("total"),
        "lookup_recording": recording.get("status"),
        "lookup_invocation_id": recording.get("id"),
    }


def annotate_tool_run(
    callbacks: BaseCallbackManager | None, metadata: Callable[[], dict[str, Any]]
) -> None:
    """Add ``metadata()`` to the still-open tool run in every tracer that holds it.

    ``metadata`` is called only when a tracer holds the run (untraced, it costs nothing).

    A run's metadata is fixed when it starts, but tracers (LangSmith's ``LangChainTracer``, the
    ``RunCollectorCallbackHandler``) keep the open run in ``run_map`` and send ``extra`` again
    when it ends, so details known only after the lookup still land on the tool run itself.
    """
    if callbacks is None or callbacks.parent_run_id is None:
        return
    run_id = str(callbacks.parent_run_id)
    seen: set[int] = set()
    made: dict[str, Any] | None = None
    for handler in [*callbacks.handlers, *callbacks.inheritable_handlers]:
        run_map = getattr(handler, "run_map", None)
        if id(handler) in seen or not isinstance(run_map, dict):
            continue
        seen.add(id(handler))
        run = run_map.get(run_id)
        if run is not None:
            made = metadata() if made is None else made
            run.extra.setdefault("metadata", {}).update(made)


def traced_lookup(callbacks: BaseCallbackManager | None) -> bool:
    """A tracer (LangSmith's, a run collector, ``astream_log``'s) receives this call's runs."""
    return callbacks is not None and any(isinstance(h, BaseTracer) for h in callbacks.handlers)


class LookupCall:
    """The tool body, written once: check, run the graph (sync or async), shape the output.

    ``untraced`` is the same graph without its trace policy (over the same runtime), run when
    no tracer receives the call: LangGraph applies a node's trace policy on every call and
    only tracers read what it makes (other handlers, such as ``astream_events``, get the real
    values either way), so the two give every handler the same runs and the same result.
    """

    def __init__(self, graph: Any, settings: LookupSettings, untraced: Any | None = None) -> None:
        self.graph = graph
        self.untraced = untraced if untraced is not None else graph
        self.settings = settings

    def graph_for(self, callbacks: BaseCallbackManager | None) -> Any:
        return self.graph if traced_lookup(callbacks) else self.untraced

    @staticmethod
    def check(query: Any) -> None:
        if not isinstance(query, str) or not query.strip():
            raise ToolException(EMPTY_QUERY_ERROR)

    @staticmethod
    def config(callbacks: BaseCallbackManager | None) -> RunnableConfig:
        # ``callbacks`` is the tool run's child manager: the graph run nests under the tool run.
        return {"callbacks": callbacks, "run_name": PIPELINE_RUN_NAME}

    def finish(
        self, out: dict[str, Any], callbacks: BaseCallbackManager | None
    ) -> tuple[str, dict[str, Any]]:
        artifact: dict[str, Any] = out["result"]  # the camelCase contract, as JSON
        details = out.get("retrieval_details") or {}
        annotate_tool_run(
            callbacks, lambda: run_metadata(LookupResult.model_validate(artifact), details)
        )
        if out.get("error") is not None:
            error = RetrievalError.model_validate(out["error"])
            raise ToolException(redact(tool_error_message(error)))
        return render_message(artifact), artifact

    @staticmethod
    def failed(exc: Exception, callbacks: BaseCallbackManager | None) -> ToolException:
        text = safe_name(redact(str(exc)))  # what the model, trace and log see: one line, no secret
        annotate_tool_run(callbacks, lambda: {"lookup_found": False, "lookup_error": text[:300]})
        if isinstance(exc, InvalidQueryError):
            return ToolException(text)
        if isinstance(exc, LookupKnowledgeError):
            kind: ErrorKind = error_kind(exc)
            return ToolException(tool_error_message(RetrievalError(kind=kind, message=text)))
        # Anything else (a driver error, a bug) still reaches the model as a readable error.
        trace = redact("".join(traceback.format_exception(exc)))  # a bug: keep its traceback
        logger.error("lookup_knowledge failed:\n%s", trace)
        return ToolException(UNAVAILABLE_ERROR.format(detail=describe_exception(exc)))
