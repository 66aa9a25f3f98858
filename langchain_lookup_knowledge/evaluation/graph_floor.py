"""LangGraph's own cost for the lookup's shape: the same nodes and edges with no-op bodies.

The floor graph has the lookup's nodes, edges, routers, state and input schemas (no trace
policy, as the tool runs its graph when no tracer watches); each node body only returns a
constant update of the keys the real node writes, on a typical lookup's route (one answered
attempt, no retry: 6 nodes).

Example:
    >>> build_graph_floor(settings, plan).invoke({"query": "disk full"})  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

from langchain_lookup_knowledge.settings import LookupSettings

if TYPE_CHECKING:
    from langchain_lookup_knowledge.pipeline.plan import QueryPlan

__all__ = ["GraphFloorNodes", "build_graph_floor"]


class GraphFloorNodes:
    """No-op bodies for the lookup graph's nodes (see :func:`build_graph_floor`).

    Each returns a constant update of the keys its real node writes, so LangGraph does the same
    channel writes and reducers (``attempts``, ``candidates``, ``timings_ms``); the plan has a
    first attempt and that attempt answers, so the real routers take a typical lookup's route.
    The retry nodes are wired, never reached.
    """

    def __init__(self, plan: QueryPlan) -> None:
        from langchain_lookup_knowledge.core.models import RetrievalAttempt

        first = plan.first_attempt.name if plan.first_attempt is not None else "unfiltered"
        self._plan = plan
        self._attempts = {
            path: [RetrievalAttempt(name=first, path=path, status="ok")]
            for path in ("vectorstore", "sdk")
        }

    def transform_query(self, state: Any) -> dict[str, Any]:
        return {
            "plan": self._plan,
            "query_vector": None,
            "attempts": [],
            "timings_ms": {"transform_query": 0.0},
            "started_at": 0.0,
        }

    def _retrieved(self, path: str) -> dict[str, Any]:
        return {"attempts": self._attempts[path], "candidates": [], "path_used": path}

    def retrieve_vectorstore(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return self._retrieved("vectorstore")

    def retrieve_sdk(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return self._retrieved("sdk")

    retry_unfiltered = retrieve_vectorstore
    retry_unfiltered_sdk = retrieve_sdk

    def postprocess(self, state: Any) -> dict[str, Any]:
        return {"selection": None, "nearest_sources": [], "timings_ms": {"postprocess": 0.0}}

    def pack_context(self, state: Any) -> dict[str, Any]:
        return {"context_pack": None}

    def assemble_result(self, state: Any) -> dict[str, Any]:
        return {"lookup_result": None, "retrieval_details": {}, "retrieval_error": None}

    def record_invocation(self, state: Any) -> dict[str, Any]:
        return {"result": {}, "error": None}


def build_graph_floor(settings: LookupSettings, plan: QueryPlan) -> Any:
    """The lookup graph's shape with no-op node bodies: what LangGraph alone costs a lookup.

    The same wiring as :func:`~langchain_lookup_knowledge.pipeline.graph.build_lookup_graph`
    (:func:`~langchain_lookup_knowledge.pipeline.graph.wire_lookup_graph`: node names, input
    schemas, edges, the real routers for ``settings.mode``; no trace policy, as the tool's
    untraced graph), the bodies :class:`GraphFloorNodes` over ``plan`` (a plan with a first
    attempt: a typical route).
    """
    from langchain_lookup_knowledge.pipeline.graph import LookupRouters, wire_lookup_graph

    builder = wire_lookup_graph(GraphFloorNodes(plan), LookupRouters(settings), trace_policy=False)
    return builder.compile(name="lookup_knowledge", checkpointer=False)
