"""Run an L1 search as a LangChain retriever run, so LangSmith renders its documents.

The run (and its documents) is made only when a callback handler is there to receive it (a
tracer, ``astream_events``, a collector); with none, the search is called directly: nobody
could see the run, and making it costs more than a third of a millisecond a search.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config
from pydantic import ConfigDict, Field, SkipValidation

from langchain_lookup_knowledge.core.models import Candidate
from langchain_lookup_knowledge.retrieval.request import L1Path, SearchRequest


class L1SearchRetriever(BaseRetriever):
    """One L1 search (a path and a request) shaped as a retriever run.

    Example:
        >>> retriever = L1SearchRetriever(path=path, request=req)  # doctest: +SKIP
        >>> docs = retriever.invoke(req.query_text)  # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Annotated[L1Path, SkipValidation]
    request: Annotated[SearchRequest, SkipValidation]  # built by the planner: not re-validated
    found: list[Candidate] = Field(default_factory=list, exclude=True)
    """The candidates of the last search (kept here, not in the traced documents)."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.found = self.path.search(self.request)
        return [
            Document(
                page_content=c.content,
                id=c.evidence_key,
                metadata={
                    "evidence_key": c.evidence_key,
                    "source": c.source,
                    "title": c.title,
                    "category": c.category,
                    # its path is the run's ``l1_path``; its similarity is what thresholds read
                    "score_label": c.score_label.model_dump(exclude_none=True, exclude={"path"}),
                },
            )
            for c in self.found
        ]


def traced_search(
    path: L1Path, request: SearchRequest, config: RunnableConfig | None, run_name: str
) -> list[Candidate]:
    """Search through ``path`` as a child retriever run named ``run_name`` (when traced)."""
    if not get_callback_manager_for_config(config or {}).handlers:
        return path.search(request)  # no handler: no run to record
    retriever = L1SearchRetriever(path=path, request=request)
    retriever.invoke(
        request.query_text,
        config={
            **(config or {}),
            "run_name": run_name,
            "metadata": {
                "l1_path": path.name,
                "filter": request.expr or "",
                "retrieval_mode": request.retrieval_mode,
                "k": request.k,
            },
        },
    )
    return retriever.found
