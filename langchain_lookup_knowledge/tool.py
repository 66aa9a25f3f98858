"""The agent-facing ``lookup_knowledge`` tool: the whole pipeline graph behind one ``query``.

``response_format="content_and_artifact"``: the model reads the packed context with citations;
the artifact is the full result contract (camelCase dict; ``LookupResult.model_validate(
msg.artifact)`` gives the typed model) for the application and traces. Bad input and failed
retrieval become tool errors the model can read (a ``ToolMessage`` with ``status="error"`` and
``artifact=None``), never a crashed agent: a transient fault says to try again later, a
configuration problem (missing collection, schema mismatch) that retrying will not help.

Tracing: the pipeline graph runs as a child run (``lookup_pipeline``) of the tool run, one run per
node, the L1 search as a ``retriever`` run; the tool run's own metadata gets compact per-call
retrieval details (``lookup_*`` keys) before it ends, so LangSmith shows them on the tool run.

Example:
    >>> tool = create_lookup_knowledge_tool(LookupSettings(collection="runbooks"))  # doctest: +SKIP
    >>> msg = tool.invoke({"type": "tool_call", "id": "1", "name": "lookup_knowledge",
    ...                    "args": {"query": "pod keeps restarting"}})  # doctest: +SKIP
    >>> msg.artifact["found"]  # doctest: +SKIP
    True
"""

from __future__ import annotations

import inspect
import logging
import traceback
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    BaseCallbackManager,
    CallbackManagerForToolRun,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.tracers.base import BaseTracer
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from langchain_lookup_knowledge.core.models import ErrorKind, LookupResult, RetrievalError
from langchain_lookup_knowledge.errors import InvalidQueryError, LookupKnowledgeError
from langchain_lookup_knowledge.pipeline.attempts import error_kind
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.redaction import describe_exception, redact
from langchain_lookup_knowledge.settings import LookupSettings

logger = logging.getLogger(__name__)

TOOL_NAME = "lookup_knowledge"
_INPUT_SHAPES_KEPT = 16
PIPELINE_RUN_NAME = "lookup_pipeline"
TOOL_DESCRIPTION = (
    "Search the team's knowledge base (runbooks, operations docs) for evidence about a question. "
    "Returns evidence blocks with their sources; cite the sources you use. If it reports no "
    "evidence, say the knowledge base does not cover it instead of guessing."
)
EMPTY_QUERY_ERROR = "lookup_knowledge needs a non-empty `query`: ask a question in words."
INVALID_ARGS_ERROR = "lookup_knowledge takes one argument, `query` (a non-empty string): {detail}"
UNAVAILABLE_ERROR = (
    "Knowledge retrieval unavailable right now ({detail}). Try again later or answer without "
    "the knowledge base, saying so."
)
DAMAGED_ERROR = (
    "The knowledge base is damaged ({detail}); retrying will not help until an operator "
    "rebuilds it. Answer without the knowledge base and tell the user it needs attention."
)
MISCONFIGURED_ERROR = (
    "Knowledge retrieval is misconfigured ({detail}); retrying will not help until an operator "
    "fixes it. Answer without the knowledge base and tell the user it needs attention."
)


def tool_error_message(error: RetrievalError) -> str:
    """What the model reads when retrieval could not run: retry only for a transient fault."""
    templates = {"configuration": MISCONFIGURED_ERROR, "damaged": DAMAGED_ERROR}
    return templates.get(error.kind, UNAVAILABLE_ERROR).format(detail=error.message)


class LookupKnowledgeInput(BaseModel):
    """Arguments of ``lookup_knowledge``."""

    query: str = Field(
        description=(
            "The question or symptom to look up, in natural language, e.g. 'pod keeps "
            "restarting after deploy' or an alert name such as 'KubePodCrashLooping'."
        )
    )


def _content(artifact: dict[str, Any]) -> str:
    """What the model reads, from the result contract's JSON (not validated again: the graph
    made it from a ``LookupResult``)."""
    hint = artifact["completenessHint"]
    if not artifact["found"]:
        return f"{artifact['message']} ({hint})"
    pack = artifact["contextPack"]
    header = (
        f"relevance: {artifact['relevanceLevel']}; {hint}\n"
        f"sources: {', '.join(pack['includedSources'])}\n\n"
    )
    return header + pack["text"]


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


def _annotate_tool_run(
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


def _validation_message(error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors()
    )
    return INVALID_ARGS_ERROR.format(detail=problems)


def _traced(callbacks: BaseCallbackManager | None) -> bool:
    """A tracer (LangSmith's, a run collector, ``astream_log``'s) receives this call's runs."""
    return callbacks is not None and any(isinstance(h, BaseTracer) for h in callbacks.handlers)


class _LookupCall:
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
        return self.graph if _traced(callbacks) else self.untraced

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
        _annotate_tool_run(
            callbacks, lambda: run_metadata(LookupResult.model_validate(artifact), details)
        )
        if out.get("error") is not None:
            error = RetrievalError.model_validate(out["error"])
            raise ToolException(redact(tool_error_message(error)))
        return _content(artifact), artifact

    @staticmethod
    def failed(exc: Exception, callbacks: BaseCallbackManager | None) -> ToolException:
        text = redact(str(exc))  # what the model, the trace and the log see: no secret
        _annotate_tool_run(callbacks, lambda: {"lookup_found": False, "lookup_error": text[:300]})
        if isinstance(exc, InvalidQueryError):
            return ToolException(text)
        if isinstance(exc, LookupKnowledgeError):
            kind: ErrorKind = error_kind(exc)
            return ToolException(tool_error_message(RetrievalError(kind=kind, message=text)))
        # Anything else (a driver error, a bug) still reaches the model as a readable error.
        trace = redact("".join(traceback.format_exception(exc)))  # a bug: keep its traceback
        logger.error("lookup_knowledge failed:\n%s", trace)
        return ToolException(UNAVAILABLE_ERROR.format(detail=describe_exception(exc)))


class LookupKnowledgeTool(StructuredTool):
    """The ``lookup_knowledge`` tool: a ``StructuredTool`` whose run methods call the body
    directly, with the tool run's child callbacks (what ``StructuredTool`` does for a body that
    takes ``callbacks`` and no ``RunnableConfig``).

    LangChain inspects ``_run``'s signature and type hints on every call (and then the body's
    again); ``StructuredTool``'s hints are strings, evaluated each time. These run methods have
    no runtime type hints (they take no ``RunnableConfig``), so a call skips that work
    (about 0.5 ms of a lookup on the loaded 2-core machine).
    """

    _kept_input_keys: dict[tuple[Any, tuple[str, ...]], frozenset[str]] = PrivateAttr(
        default_factory=dict
    )

    def _filter_injected_args(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """LangChain's filter of what the tool run records as its inputs, its answer kept per
        input shape: it reads the args schema's annotations again on every call (a tenth of
        a millisecond), and what it keeps depends only on the schema and the keys."""
        shape = (self.args_schema, tuple(tool_input))
        kept = self._kept_input_keys.get(shape)
        if kept is None:
            kept = frozenset(super()._filter_injected_args(dict.fromkeys(shape[1])))
            if len(self._kept_input_keys) < _INPUT_SHAPES_KEPT:  # a model's odd calls: bounded
                self._kept_input_keys[shape] = kept
        return {k: v for k, v in tool_input.items() if k in kept}

    def _run(
        self, *args: Any, run_manager: CallbackManagerForToolRun | None = None, **kwargs: Any
    ) -> Any:
        if self.func is None:  # pragma: no cover - create_lookup_knowledge_tool sets both
            raise NotImplementedError("lookup_knowledge has no sync body")
        callbacks = run_manager.get_child() if run_manager is not None else None
        return self.func(*args, callbacks=callbacks, **kwargs)

    async def _arun(
        self,
        *args: Any,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        if self.coroutine is None:  # pragma: no cover - create_lookup_knowledge_tool sets both
            raise NotImplementedError("lookup_knowledge has no async body")
        callbacks = run_manager.get_child() if run_manager is not None else None
        return await self.coroutine(*args, callbacks=callbacks, **kwargs)


# No runtime hints: LangChain then finds no RunnableConfig parameter without evaluating any.
# And their signatures made once: LangChain inspects ``_run``'s on every call (for a
# ``run_manager`` parameter), which ``inspect`` then reads from ``__signature__``.
for _method in (LookupKnowledgeTool._run, LookupKnowledgeTool._arun):
    _method.__annotations__ = {}
    _method.__signature__ = inspect.signature(_method)  # type: ignore[union-attr]


def create_lookup_knowledge_tool(
    settings: LookupSettings | None = None, *, graph: Any | None = None, **graph_kwargs: Any
) -> BaseTool:
    """The ``lookup_knowledge`` tool over a compiled lookup graph (built from ``settings``).

    Building the tool touches neither Milvus nor the records database; both open on first use.

    Args:
        settings: Configuration; default ``LookupSettings()`` (``LOOKUP_KNOWLEDGE_*`` env vars).
        graph: A compiled lookup graph to run instead of building one (e.g. one over a custom
            :class:`~langchain_lookup_knowledge.pipeline.runtime.LookupRuntime`).
        **graph_kwargs: Passed to :func:`build_lookup_graph` (``embeddings=``, ``recorder=``).

    Example:
        >>> tool = create_lookup_knowledge_tool()
        >>> tool.name, list(tool.args)
        ('lookup_knowledge', ['query'])
    """
    settings = settings or LookupSettings()
    if graph is not None:
        call = _LookupCall(graph, settings)
    else:
        runtime = graph_kwargs.pop("runtime", None) or LookupRuntime.configured(
            settings,
            embeddings=graph_kwargs.pop("embeddings", None),
            recorder=graph_kwargs.pop("recorder", None),
        )
        call = _LookupCall(
            build_lookup_graph(runtime=runtime, **graph_kwargs),
            settings,
            untraced=build_lookup_graph(runtime=runtime, trace_policy=False, **graph_kwargs),
        )

    def lookup(
        query: str, callbacks: BaseCallbackManager | None = None
    ) -> tuple[str, dict[str, Any]]:
        call.check(query)
        try:
            graph = call.graph_for(callbacks)
            out = graph.invoke({"query": query}, config=call.config(callbacks))
        except Exception as exc:
            raise call.failed(exc, callbacks) from None
        return call.finish(out, callbacks)

    async def alookup(
        query: str, callbacks: BaseCallbackManager | None = None
    ) -> tuple[str, dict[str, Any]]:
        call.check(query)
        try:
            # Nodes are sync functions; LangGraph runs them in worker threads under ainvoke.
            graph = call.graph_for(callbacks)
            out = await graph.ainvoke({"query": query}, config=call.config(callbacks))
        except Exception as exc:
            raise call.failed(exc, callbacks) from None
        return call.finish(out, callbacks)

    tool = LookupKnowledgeTool.from_function(
        func=lookup,
        coroutine=alookup,
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION,
        args_schema=LookupKnowledgeInput,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=_validation_message,
    )
    tool.metadata = {"lookup_collection": settings.collection, "lookup_mode": settings.mode}
    return tool


__all__ = [
    "DAMAGED_ERROR",
    "EMPTY_QUERY_ERROR",
    "MISCONFIGURED_ERROR",
    "TOOL_NAME",
    "UNAVAILABLE_ERROR",
    "LookupKnowledgeInput",
    "LookupKnowledgeTool",
    "create_lookup_knowledge_tool",
    "run_metadata",
    "tool_error_message",
]
