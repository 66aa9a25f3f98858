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
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    BaseCallbackManager,
    CallbackManagerForToolRun,
)
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.tool_call import (
    PIPELINE_RUN_NAME,
    LookupCall,
    run_metadata,
)
from langchain_lookup_knowledge.tool_errors import (
    DAMAGED_ERROR,
    EMPTY_QUERY_ERROR,
    INVALID_ARGS_ERROR,
    MISCONFIGURED_ERROR,
    UNAVAILABLE_ERROR,
    tool_error_message,
)

logger = logging.getLogger(__name__)

TOOL_NAME = "lookup_knowledge"
_INPUT_SHAPES_KEPT = 16
TOOL_DESCRIPTION = (
    "Search the team's knowledge base (runbooks, operations docs) for evidence about a question. "
    "Returns evidence blocks with their sources; cite the sources you use. If it reports no "
    "evidence, say the knowledge base does not cover it instead of guessing."
)


class LookupKnowledgeInput(BaseModel):
    """Arguments of ``lookup_knowledge``."""

    query: str = Field(
        description=(
            "The question or symptom to look up, in natural language, e.g. 'pod keeps "
            "restarting after deploy' or an alert name such as 'KubePodCrashLooping'."
        )
    )


def _validation_message(error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors()
    )
    return INVALID_ARGS_ERROR.format(detail=problems)


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
        call = LookupCall(graph, settings)
    else:
        runtime = graph_kwargs.pop("runtime", None) or LookupRuntime.configured(
            settings,
            embeddings=graph_kwargs.pop("embeddings", None),
            recorder=graph_kwargs.pop("recorder", None),
        )
        call = LookupCall(
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
    "PIPELINE_RUN_NAME",
    "TOOL_NAME",
    "UNAVAILABLE_ERROR",
    "LookupKnowledgeInput",
    "LookupKnowledgeTool",
    "create_lookup_knowledge_tool",
    "run_metadata",
    "tool_error_message",
]
