"""Fakes for the agent-integration tests, named as such: a scripted chat model and L1 paths that
fail or wait. Everything else in those tests is real (Milvus Lite, the embedder, SQLite).

Also what the tool tests share: the ``lookup_knowledge`` tool-call dict (:func:`call`) and the
names of the lookup graph's nodes (:data:`PIPELINE_NODES`). The ``kb_settings`` and ``tool``
fixtures they use are in conftest.py.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.sdk import SdkPath
from langchain_lookup_knowledge.settings import LookupSettings

_SOURCE_LINE = re.compile(r"^source: (\S+)", re.MULTILINE)

PIPELINE_NODES = {
    "transform_query",
    "retrieve_vectorstore",
    "retrieve_sdk",
    "retry_unfiltered",
    "postprocess",
    "pack_context",
    "assemble_result",
    "record_invocation",
}


def call(query: object, call_id: str = "call_1") -> dict:
    """A ``lookup_knowledge`` tool call, as a model emits it and ``tool.invoke`` takes it."""
    return {
        "type": "tool_call",
        "id": call_id,
        "name": "lookup_knowledge",
        "args": {"query": query},
    }


class ScriptedToolCallingModel(BaseChatModel):
    """FAKE chat model (no LLM): calls ``lookup_knowledge`` with the user's question, then answers
    by citing the sources the tool message lists, or by reporting the tool's error."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            if last.status == "error":
                text = f"I could not use the knowledge base: {last.content}"
            else:
                sources = list(dict.fromkeys(_SOURCE_LINE.findall(str(last.content))))
                text = "According to " + ", ".join(sources) if sources else "No evidence found."
            message = AIMessage(content=text)
        else:
            question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
            turn = sum(isinstance(m, HumanMessage) for m in messages)
            message = AIMessage(content="", tool_calls=[call(question.content, f"call_{turn}")])
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolCallingModel:
        return self

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-calling-fake"


class FailingPath:
    """FAKE L1 path whose every search raises (a Milvus outage on that path)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def search(self, request: SearchRequest) -> list[Any]:
        msg = f"{self.name} search failed (injected outage)"
        raise ConnectionError(msg)


class GatedPath:
    """FAKE wrapper around a real path: the search signals ``entered``, then waits for ``gate``
    (set by a coroutine on the caller's event loop) before searching for real."""

    def __init__(
        self, inner: Any, entered: threading.Event, gate: threading.Event, wait_s: float = 20.0
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.entered = entered
        self.gate = gate
        self.wait_s = wait_s

    def search(self, request: SearchRequest) -> list[Any]:
        self.entered.set()
        if not self.gate.wait(self.wait_s):
            msg = "gate never opened: the event loop was blocked during the lookup"
            raise TimeoutError(msg)
        return self.inner.search(request)


def failing_graph(settings: LookupSettings, embeddings: Any, **kwargs: Any) -> Any:
    """A lookup graph over the real store whose L1 paths (vectorstore and sdk) all fail."""
    runtime = LookupRuntime(
        settings,
        embeddings=embeddings,
        path_factories={
            "vectorstore": lambda: FailingPath("vectorstore"),
            "sdk": lambda: FailingPath("sdk"),
        },
        **kwargs,
    )
    return build_lookup_graph(runtime=runtime)


def gated_graph(
    settings: LookupSettings, embeddings: Any, entered: threading.Event, gate: threading.Event
) -> Any:
    """A lookup graph (sdk mode) whose real SDK search waits for ``gate``."""
    settings = settings.model_copy(update={"mode": "sdk", "record_invocations": False})
    # The factory runs at the first search, after ``runtime`` below is bound.
    runtime = LookupRuntime(
        settings,
        embeddings=embeddings,
        path_factories={
            "sdk": lambda: GatedPath(
                SdkPath(runtime.client, runtime.layout, settings), entered, gate
            ),
        },
    )
    return build_lookup_graph(runtime=runtime)
