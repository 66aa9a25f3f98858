"""The agent-facing ``lookup_knowledge`` tool: the whole pipeline graph behind one ``query``.

``response_format="content_and_artifact"``: the model reads the packed context with citations;
the artifact is the full result contract (camelCase dict) for the application and traces. Bad
input and unavailable retrieval become tool errors the model can read, never a crashed agent.

Example:
    >>> tool = create_lookup_knowledge_tool(LookupSettings(collection="runbooks"))  # doctest: +SKIP
    >>> msg = tool.invoke({"type": "tool_call", "id": "1", "name": "lookup_knowledge",
    ...                    "args": {"query": "pod keeps restarting"}})  # doctest: +SKIP
    >>> msg.artifact["found"]  # doctest: +SKIP
    True
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from langchain_lookup_knowledge.errors import InvalidQueryError, LookupKnowledgeError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.models import LookupResult
from langchain_lookup_knowledge.settings import LookupSettings

TOOL_NAME = "lookup_knowledge"
TOOL_DESCRIPTION = (
    "Search the team's knowledge base (runbooks, operations docs) for evidence about a question. "
    "Returns evidence blocks with their sources; cite the sources you use. If it reports no "
    "evidence, say the knowledge base does not cover it instead of guessing."
)
EMPTY_QUERY_ERROR = "lookup_knowledge needs a non-empty `query`: ask a question in words."
UNAVAILABLE_ERROR = "Knowledge retrieval unavailable right now ({detail}). Try again later or " \
    "answer without the knowledge base, saying so."


class LookupKnowledgeInput(BaseModel):
    """Arguments of ``lookup_knowledge``."""

    query: str = Field(
        description=(
            "The question or symptom to look up, in natural language, e.g. 'pod keeps "
            "restarting after deploy' or an alert name such as 'KubePodCrashLooping'."
        )
    )


def _content(result: LookupResult) -> str:
    if not result.found:
        return f"{result.message} ({result.completeness_hint})"
    header = (f"relevance: {result.relevance_level}; {result.completeness_hint}\n"
              f"sources: {', '.join(result.context_pack.included_sources)}\n\n")
    return header + result.context_pack.text


def _metadata(result: LookupResult, details: dict[str, Any]) -> dict[str, Any]:
    trace = result.retrieval_trace
    return {
        "lookup_found": result.found,
        "lookup_relevance": result.relevance_level,
        "lookup_layer": result.retrieval_layer,
        "lookup_path": trace.path_used,
        "lookup_fallback_reason": trace.fallback_reason,
        "lookup_sources": [b.source for b in result.evidence_blocks],
        "lookup_candidate_count": details.get("candidate_count"),
    }


def create_lookup_knowledge_tool(
    settings: LookupSettings | None = None, *, graph: Any | None = None, **graph_kwargs: Any
) -> BaseTool:
    """The ``lookup_knowledge`` tool over a compiled lookup graph (built from ``settings``).

    Example:
        >>> tool = create_lookup_knowledge_tool()  # doctest: +SKIP
        >>> tool.name
        'lookup_knowledge'
    """
    settings = settings or LookupSettings()
    lookup_graph = graph or build_lookup_graph(settings, **graph_kwargs)

    def _finish(out: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result: LookupResult = out["result"]
        if out.get("error"):
            raise ToolException(UNAVAILABLE_ERROR.format(detail=out["error"]))
        return _content(result), result.to_json_dict()

    def _check(query: str) -> None:
        if not isinstance(query, str) or not query.strip():
            raise ToolException(EMPTY_QUERY_ERROR)

    def lookup(query: str, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        _check(query)
        try:
            out = lookup_graph.invoke({"query": query}, config=_child(config))
        except InvalidQueryError as exc:
            raise ToolException(str(exc)) from None
        except LookupKnowledgeError as exc:
            raise ToolException(UNAVAILABLE_ERROR.format(detail=exc)) from None
        return _finish(out)

    async def alookup(query: str, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        _check(query)
        try:
            out = await lookup_graph.ainvoke({"query": query}, config=_child(config))
        except InvalidQueryError as exc:
            raise ToolException(str(exc)) from None
        except LookupKnowledgeError as exc:
            raise ToolException(UNAVAILABLE_ERROR.format(detail=exc)) from None
        return _finish(out)

    tool = StructuredTool.from_function(
        func=lookup,
        coroutine=alookup,
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION,
        args_schema=LookupKnowledgeInput,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )
    tool.metadata = {"lookup_collection": settings.collection, "lookup_mode": settings.mode}
    return tool


def _child(config: RunnableConfig | None) -> RunnableConfig:
    return {"callbacks": (config or {}).get("callbacks"), "run_name": "lookup_pipeline"}


__all__ = ["TOOL_NAME", "LookupKnowledgeInput", "create_lookup_knowledge_tool"]
