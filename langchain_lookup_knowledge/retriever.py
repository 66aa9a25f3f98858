"""``LookupKnowledgeRetriever``: the lookup graph's evidence blocks as LangChain ``Document`` s.

For chains, ``EnsembleRetriever``, evaluators: anything that takes a ``BaseRetriever``. It is a
thin wrapper: each call runs the same lookup graph as the ``lookup_knowledge`` tool (L0 hints,
L1 search with its filtered retry, rerank, dedup; a ``tool_invocation`` record when the settings
ask for one) and returns its evidence blocks, best first.

Example:
    >>> from langchain_lookup_knowledge import LookupKnowledgeRetriever, LookupSettings
    >>> retriever = LookupKnowledgeRetriever(settings=LookupSettings(), k=3)  # doctest: +SKIP
    >>> docs = retriever.invoke("pod keeps restarting after deploy")  # doctest: +SKIP
    >>> docs[0].metadata["source"], docs[0].metadata["scoreLabel"]["similarity"]  # doctest: +SKIP
    ('kubernetes/pod-crashloopbackoff.md', 0.71)
    >>> docs = await retriever.ainvoke("disk full", k=1)  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from typing import Annotated, Any, TypedDict, Unpack

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun as AsyncRunManager
from langchain_core.callbacks import CallbackManagerForRetrieverRun as RunManager
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field, PrivateAttr, SkipValidation

from langchain_lookup_knowledge.core.filters import FilterValue
from langchain_lookup_knowledge.core.models import LookupResult, RetrievalError
from langchain_lookup_knowledge.embeddings import cached_embeddings
from langchain_lookup_knowledge.errors import RetrievalUnavailableError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.recording import InvocationRecorder, recorder_for
from langchain_lookup_knowledge.settings import LookupSettings

PIPELINE_RUN_NAME = "lookup_knowledge_pipeline"


class CallOptions(TypedDict, total=False):
    """What one ``invoke(query, k=..., filters=...)`` may override of the retriever's fields."""

    k: int | None
    filters: dict[str, FilterValue] | None


class LookupKnowledgeRetriever(BaseRetriever):
    """The ``k`` best evidence blocks of a lookup, as ``Document`` s with the contract's metadata.

    Each ``Document`` has the block's text as ``page_content``, its ``evidenceKey`` as ``id``,
    and the block's camelCase contract fields as ``metadata``: ``evidenceKey``, ``source``,
    ``title``, ``breadcrumb``, ``category``, ``retrievalLayer``, ``score``, ``scoreLabel``
    (path, metric, raw and normalized similarity) and ``hitReasons`` (each boost, explained).
    No evidence (an off-topic question) is an empty list; retrieval that is down raises
    :class:`~langchain_lookup_knowledge.errors.RetrievalUnavailableError` (a chain should
    not mistake an outage for "nothing found").

    Args:
        settings: The same settings as the tool's (``LOOKUP_KNOWLEDGE_*`` env vars by default).
        embeddings: The embedder (default: the one the settings name).
        recorder: Where calls are recorded (default: the settings' recorder, when they record).
        k: Documents per call (default ``settings.top_k``); ``invoke(query, k=3)`` overrides it.
        filters: An authoritative filter for every call, ANDed with ``default_filter``
            (``invoke(query, filters={...})`` overrides it), e.g. ``{'metadata["tenant"]': "a"}``.

    Example:
        >>> retriever = LookupKnowledgeRetriever(k=2)  # doctest: +SKIP
        >>> docs = retriever.invoke("pgbouncer pool exhausted")  # doctest: +SKIP
        >>> [d.metadata["evidenceKey"] for d in docs]  # doctest: +SKIP
        ['databases/pgbouncer-connection-exhaustion.md#0', 'databases/pgbouncer-...md#2']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    settings: LookupSettings = Field(default_factory=LookupSettings)
    embeddings: Annotated[Embeddings | None, SkipValidation] = Field(default=None, exclude=True)
    recorder: Annotated[InvocationRecorder | None, SkipValidation] = Field(
        default=None, exclude=True
    )
    k: int | None = Field(default=None, ge=1, description="Documents per call (top_k).")
    filters: dict[str, FilterValue] | None = None

    _compiled: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def _graph(self) -> Any:
        """The lookup graph, compiled on first use and shared by every call (each call passes
        its own ``k`` as the graph's ``top_k`` input)."""
        with self._lock:
            if self._compiled is None:
                recorder = self.recorder
                if recorder is None and self.settings.record_invocations:
                    recorder = recorder_for(self.settings)
                self._compiled = build_lookup_graph(
                    self.settings,
                    # None: the runtime builds the collection's model (embedding_provider=auto)
                    embeddings=None
                    if self.embeddings is None
                    else cached_embeddings(self.settings, self.embeddings),
                    recorder=recorder,
                )
            return self._compiled

    def _prepare(
        self, query: str, k: int | None = None, filters: dict[str, FilterValue] | None = None
    ) -> tuple[Any, dict[str, Any], int]:
        count = k or self.k or self.settings.top_k
        if count < 1:
            raise ValueError(f"k must be at least 1, got {count}")
        state: dict[str, Any] = {"query": query, "top_k": count}
        scope = filters if filters is not None else self.filters
        if scope:
            state["filters"] = scope
        return self._graph(), state, count

    @staticmethod
    def _config(run_manager: Any) -> RunnableConfig:
        # The graph run nests under this retriever run (one trace in LangSmith).
        return {"callbacks": run_manager.get_child(), "run_name": PIPELINE_RUN_NAME}

    def _documents(self, out: dict[str, Any], count: int) -> list[Document]:
        result = out["result"]
        if not isinstance(result, LookupResult):
            result = LookupResult.model_validate(result)  # the camelCase contract dict
        error = out.get("error")  # decided once by the graph (None: retrieval ran)
        if error is not None:
            decided = RetrievalError.model_validate(error)
            hint = "try again later" if decided.retryable else "retrying will not help"
            raise RetrievalUnavailableError(
                f"knowledge retrieval is unavailable ({decided.kind}: {hint}): {decided.message}"
            )
        documents = []
        for block in result.evidence_blocks[:count]:
            metadata = block.to_json_dict()
            content = metadata.pop("content")
            documents.append(
                Document(page_content=content, id=block.evidence_key, metadata=metadata)
            )
        return documents

    def _get_relevant_documents(
        self, query: str, *, run_manager: RunManager, **call: Unpack[CallOptions]
    ) -> list[Document]:
        graph, state, count = self._prepare(query, **call)
        return self._documents(graph.invoke(state, config=self._config(run_manager)), count)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncRunManager, **call: Unpack[CallOptions]
    ) -> list[Document]:
        graph, state, count = self._prepare(query, **call)
        out = await graph.ainvoke(state, config=self._config(run_manager))
        return self._documents(out, count)
