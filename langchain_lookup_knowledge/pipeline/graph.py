"""The lookup pipeline as a LangGraph ``StateGraph``: wiring and routers only.

    transform_query -> retrieve_vectorstore --(auto: path failed)--> retrieve_sdk
      -> (filtered and no usable evidence | top similarity < reference_threshold)
      -> retry_unfiltered --(auto: the VectorStore path failed)--> retry_unfiltered_sdk
      -> postprocess -> pack_context -> assemble_result -> record_invocation -> END

Both auto-mode fallbacks (VectorStore -> SDK, for the first attempt and for the retry) are
edges, so ``get_graph()`` and Studio show them. Routers return a ``Literal`` of node names and
raise on a state they were not wired for. The node functions are in :mod:`.nodes`, the
decisions in :mod:`.plan`, :mod:`.attempts` and :mod:`.assemble`.

Example:
    >>> graph = build_lookup_graph(LookupSettings())
    >>> sorted(graph.get_graph().nodes)[:4]
    ['__end__', '__start__', 'assemble_result', 'pack_context']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from langchain_core.embeddings import Embeddings
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.pipeline.attempts import needs_retry
from langchain_lookup_knowledge.pipeline.nodes import LookupNodes, last_attempt
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.pipeline.state import (
    AssembleInput,
    LookupInput,
    LookupOutput,
    LookupState,
    PackInput,
    PostprocessInput,
    RecordInput,
    RetrieveInput,
    RouteInput,
    StartRouteInput,
)
from langchain_lookup_knowledge.pipeline.tracing import NODE_TRACE_POLICY
from langchain_lookup_knowledge.settings import LookupSettings

if TYPE_CHECKING:
    from langchain_lookup_knowledge.recording import InvocationRecorder

__all__ = [
    "NODE_INPUTS",
    "LookupKnowledgeError",
    "LookupNodes",
    "LookupRouters",
    "build_lookup_graph",
    "wire_lookup_graph",
]


RETRIEVAL_NODES = (
    "retrieve_vectorstore",
    "retrieve_sdk",
    "retry_unfiltered",
    "retry_unfiltered_sdk",
)


def _unexpected(router: str, state: RouteInput) -> RuntimeError:
    attempts = [f"{a.name}@{a.path}:{a.status}" for a in state.get("attempts") or []]
    return RuntimeError(f"lookup graph: {router} reached with attempts {attempts}")


class LookupRouters:
    """The conditional edges, decided from the state and the configured path ``mode``."""

    def __init__(self, settings: LookupSettings) -> None:
        self.auto = settings.mode == "auto"
        self.sdk_first = settings.mode == "sdk"

    def route_start(
        self, state: StartRouteInput
    ) -> Literal["retrieve_vectorstore", "retrieve_sdk", "postprocess"]:
        """First L1 path by mode; no first attempt (L1 off, nothing to search) skips L1."""
        if state["plan"].first_attempt is None:
            return "postprocess"
        return "retrieve_sdk" if self.sdk_first else "retrieve_vectorstore"

    def route_after_vectorstore(
        self, state: RouteInput
    ) -> Literal["retrieve_sdk", "retry_unfiltered", "postprocess"]:
        """auto mode: a failed VectorStore path falls back to the SDK node."""
        last = last_attempt(state)
        if last.path != "vectorstore":
            raise _unexpected("route_after_vectorstore", state)
        if last.status == "error":
            return "retrieve_sdk" if self.auto else "postprocess"
        return self.route_quality(state)

    def route_quality(self, state: RouteInput) -> Literal["retry_unfiltered", "postprocess"]:
        """Filtered attempt empty or below the reference threshold: retry without the filter."""
        return "retry_unfiltered" if needs_retry(last_attempt(state)) else "postprocess"

    def route_after_retry(
        self, state: RouteInput
    ) -> Literal["retry_unfiltered_sdk", "postprocess"]:
        """auto mode: a retry that failed on the VectorStore path runs again on the SDK."""
        last = last_attempt(state)
        if last.name != "unfiltered_retry":
            raise _unexpected("route_after_retry", state)
        failed_on_vectorstore = last.status == "error" and last.path == "vectorstore"
        return "retry_unfiltered_sdk" if failed_on_vectorstore and self.auto else "postprocess"


# Each node reads only its input schema: its traced input is those keys, not the state,
# and a tracer records large values as summaries (pipeline.tracing), never the vector.
NODE_INPUTS: dict[str, type] = {
    "transform_query": LookupInput,
    **dict.fromkeys(RETRIEVAL_NODES, RetrieveInput),
    "postprocess": PostprocessInput,
    "pack_context": PackInput,
    "assemble_result": AssembleInput,
    "record_invocation": RecordInput,
}
"""Every node of the lookup graph, in pipeline order, with the input schema it reads."""


def wire_lookup_graph(
    nodes: object, routers: LookupRouters, *, trace_policy: bool = True
) -> StateGraph[LookupState, None, LookupInput, LookupOutput]:
    """The lookup graph's builder: every node of :data:`NODE_INPUTS` (``nodes``' method of
    that name), its edges and the ``routers``' conditional edges, not yet compiled.

    ``trace_policy=False`` leaves out :data:`~.tracing.NODE_TRACE_POLICY`: the same graph for a
    call no tracer watches (LangGraph runs a node's policy on every call, traced or not, and
    only tracers see what it makes).

    :func:`build_lookup_graph` wires :class:`LookupNodes`; ``lookup-knowledge bench`` wires
    no-op bodies into the same shape to measure what LangGraph itself costs a lookup.
    """
    builder = StateGraph(LookupState, input_schema=LookupInput, output_schema=LookupOutput)
    policy = NODE_TRACE_POLICY if trace_policy else None
    for node, schema in NODE_INPUTS.items():
        builder.add_node(node, getattr(nodes, node), input_schema=schema, trace_policy=policy)
    builder.add_edge(START, "transform_query")
    builder.add_conditional_edges("transform_query", routers.route_start)
    builder.add_conditional_edges("retrieve_vectorstore", routers.route_after_vectorstore)
    builder.add_conditional_edges("retrieve_sdk", routers.route_quality)
    builder.add_conditional_edges("retry_unfiltered", routers.route_after_retry)
    builder.add_edge("retry_unfiltered_sdk", "postprocess")
    builder.add_edge("postprocess", "pack_context")
    builder.add_edge("pack_context", "assemble_result")
    builder.add_edge("assemble_result", "record_invocation")
    builder.add_edge("record_invocation", END)
    return builder


def build_lookup_graph(
    settings: LookupSettings | None = None,
    *,
    embeddings: Embeddings | None = None,
    recorder: InvocationRecorder | None = None,
    runtime: LookupRuntime | None = None,
    name: str = "lookup_knowledge",
    checkpointer: Checkpointer = False,
    trace_policy: bool = True,
) -> CompiledStateGraph[LookupState, None, LookupInput, LookupOutput]:
    """Compile the lookup pipeline; input ``{"query": str}``, output has ``result``.

    Args:
        settings: Configuration (``LookupSettings()`` by default); ignored with ``runtime``.
        embeddings: The query embedder (the configured one by default).
        recorder: Where each call is recorded (``tool_invocation`` per the settings).
        runtime: Shared resources to run on (build one to reach its client or layout).
        name: The graph's name (its run name in traces).
        checkpointer: ``False`` (default): a lookup is one step of a parent graph, never
            checkpointed node by node (a checkpointed parent stores its JSON output once).
            ``None`` inherits the parent's (or the server's) checkpointer.
        trace_policy: ``False``: no trace policy on the nodes (a tracer then records the
            whole state each node reads and writes); for calls no tracer watches, where the
            policy is work nobody sees (the tool runs such a twin of its graph).

    Example:
        >>> graph = build_lookup_graph(LookupSettings(collection="runbooks"))  # doctest: +SKIP
        >>> out = graph.invoke({"query": "etcd is slow"})  # doctest: +SKIP
        >>> LookupResult.model_validate(out["result"]).evidence_blocks[0].source  # doctest: +SKIP
        'etcd/etcdHighFsyncDurations.md'
    """
    if runtime is None:
        runtime = LookupRuntime.configured(
            settings or LookupSettings(), embeddings=embeddings, recorder=recorder
        )
    builder = wire_lookup_graph(
        LookupNodes(runtime), LookupRouters(runtime.settings), trace_policy=trace_policy
    )
    return builder.compile(name=name, checkpointer=checkpointer)
