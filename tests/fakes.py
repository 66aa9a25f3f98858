"""Test fakes, all of them, named as such: used only where a test must force a ranking, a
similarity or a failure. Everything else in the tests is real (Milvus Lite and servers, the
embedder, SQLite, PostgreSQL).

* ``DirectionEmbeddings``: FAKE embedder whose similarities a test sets (below).
* ``EightDimensions``: FAKE embedder of the wrong dimension (a misconfiguration).
* ``ScriptedToolCallingModel``: FAKE chat model that calls ``lookup_knowledge`` and cites.
* ``RaisingRecorder``: FAKE invocation recorder whose every write fails.
* L1 paths that fail or wait: ``FailingPath`` (every search raises), ``unavailable_path`` (the
  path cannot even be opened), ``FlakyPath`` (answers once, then raises), ``GatedPath`` (waits
  for a gate), ``BlockingPathFactory`` (hangs while opening); ``failing_graph`` / ``gated_graph``
  build lookup graphs over the real store with them.
* What the tool tests share: the tool-call dict (:func:`call`) and the graph's node names
  (:data:`PIPELINE_NODES`).

``DirectionEmbeddings`` gives deterministic "direction" vectors:

* A text holding a directive such as ``[[alpha=0.40 beta=0.20]]`` gets exactly those weights
  on the named axes, and the rest of the unit length on a private "document residual" axis.
  A query that is just the word ``alpha`` therefore has cosine similarity 0.40 with it.
* A text without a directive gets weight 1 on each axis word it contains (whole words,
  case-insensitive), normalized; with no axis word at all it points along a "nothing" axis
  that no document directive uses, so its similarity to every directive document is 0.

Knowledge files written for pipeline tests put one directive in each chunk's body, so the
similarity of every chunk to a query is chosen by the test, whatever the query's wording.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_lookup_knowledge.embeddings.window import EstimatedWindow
from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.sdk import SdkPath
from langchain_lookup_knowledge.settings import LookupSettings

DIRECTIVE = re.compile(r"\[\[([^\]]+)\]\]")
_PAIR = re.compile(r"([a-z][a-z0-9_]*)\s*=\s*([0-9]*\.?[0-9]+)")
_WORD = re.compile(r"[a-z][a-z0-9_]*")

DEFAULT_AXES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


class DirectionEmbeddings(Embeddings):
    """FAKE deterministic embeddings whose similarities a test sets (see the module docstring).

    Example:
        >>> fake = DirectionEmbeddings()
        >>> doc = fake.embed_query("body [[alpha=0.4]]")
        >>> round(sum(a * b for a, b in zip(fake.embed_query("alpha"), doc)), 6)
        0.4
    """

    def __init__(self, axes: Sequence[str] = DEFAULT_AXES) -> None:
        self.axes = tuple(axes)
        self._index = {name: i for i, name in enumerate(self.axes)}
        self.dimension = len(self.axes) + 2
        self._doc_residual = len(self.axes)
        self._nothing = len(self.axes) + 1
        self.calls = 0

    def vector(self, text: str) -> list[float]:
        """The fake vector of ``text`` (unit length)."""
        self.calls += 1
        out = [0.0] * self.dimension
        match = DIRECTIVE.search(text)
        if match:
            total = 0.0
            for name, raw in _PAIR.findall(match.group(1).lower()):
                if name not in self._index:
                    msg = f"unknown direction {name!r} in {match.group(0)!r}"
                    raise ValueError(msg)
                weight = float(raw)
                out[self._index[name]] = weight
                total += weight * weight
            if total > 1.0 + 1e-9:
                msg = f"directive weights exceed unit length: {match.group(0)!r}"
                raise ValueError(msg)
            out[self._doc_residual] = math.sqrt(max(0.0, 1.0 - total))
            return out
        words = set(_WORD.findall(text.lower()))
        hits = [self._index[w] for w in words if w in self._index]
        if not hits:
            out[self._nothing] = 1.0
            return out
        scale = 1.0 / math.sqrt(len(hits))
        for i in hits:
            out[i] = scale
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Fake vectors of documents."""
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Fake vector of a query."""
        return self.vector(text)


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


_NO_QUERY = object()


def call(query: object = _NO_QUERY, call_id: str = "call_1") -> dict:
    """A ``lookup_knowledge`` tool call, as a model emits it and ``tool.invoke`` takes it (no
    ``query``: a call without the argument). The one such dict of the suite."""
    return {
        "type": "tool_call",
        "id": call_id,
        "name": "lookup_knowledge",
        "args": {} if query is _NO_QUERY else {"query": query},
    }


class EightDimensions(Embeddings):
    """FAKE embedder of another dimension than the ingested collection (8, not 384)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0] + [0.0] * 7


class RaisingRecorder:
    """FAKE invocation recorder whose every write fails (a records database outage)."""

    def record(self, **kwargs: Any) -> int:
        msg = "records database is down (injected)"
        raise RuntimeError(msg)


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
    """FAKE L1 path whose every search raises ``error(message)`` (an outage on that path).

    Use the class itself as a path factory (``{"vectorstore": FailingPath}``) or a lambda for
    another name (``lambda: FailingPath("sdk")``).
    """

    def __init__(
        self,
        name: str = "vectorstore",
        message: str | None = None,
        error: type[Exception] = ConnectionError,
    ) -> None:
        self.name = name
        self.message = message or f"{name} search failed (injected outage)"
        self.error = error

    def search(self, request: SearchRequest) -> list[Any]:
        raise self.error(self.message)


def unavailable_path() -> FailingPath:
    """FAKE path factory: the path cannot even be opened (langchain-milvus cannot connect)."""
    raise StoreUnavailableError("injected: langchain-milvus cannot open the collection")


class FlakyPath:
    """FAKE wrapper: the real path answers its first search, then raises (fails on the retry)."""

    def __init__(self, real: Any) -> None:
        self.name = real.name
        self.real = real
        self.calls = 0

    def search(self, request: SearchRequest) -> list[Any]:
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("injected: vectorstore dropped the connection")
        return self.real.search(request)


class BlockingPathFactory:
    """FAKE path factory that hangs while opening a path until released, then fails."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()

    def __call__(self) -> Any:
        try:
            self.release.wait(120)
            raise RuntimeError("injected: path never opened")
        finally:
            self.finished.set()


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


class WideWindowDirectionEmbeddings(DirectionEmbeddings):
    """FAKE :class:`DirectionEmbeddings` with a window wide enough that ``chunk_size`` alone sizes
    the chunks (a test whose documents must stay in the chunks it counts)."""

    def token_window(self) -> EstimatedWindow:
        return EstimatedWindow(4096, label="fake")
