"""langchain-lookup-knowledge: an explicit ``lookup_knowledge`` tool over a markdown knowledge base.

L0 frontmatter hints steer L1 Milvus retrieval inside a LangGraph pipeline that returns
evidence blocks, a packed context and the full retrieval trace.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public names are imported on first use (PEP 562): the CLI and ingestion do not pay for
# importing LangGraph and the agent tooling they do not need.
_EXPORTS: dict[str, str] = {
    "CachedQueryEmbeddings": "langchain_lookup_knowledge.embeddings",
    "Candidate": "langchain_lookup_knowledge.core.models",
    "CategoryFilter": "langchain_lookup_knowledge.core.filters",
    "ConfigurationError": "langchain_lookup_knowledge.errors",
    "ContextPack": "langchain_lookup_knowledge.core.models",
    "EmbeddingError": "langchain_lookup_knowledge.errors",
    "EvidenceBlock": "langchain_lookup_knowledge.core.models",
    "HitReason": "langchain_lookup_knowledge.core.models",
    "IngestReport": "langchain_lookup_knowledge.ingest",
    "InvalidQueryError": "langchain_lookup_knowledge.errors",
    "InvocationRecorder": "langchain_lookup_knowledge.recording",
    "L0Hints": "langchain_lookup_knowledge.core.models",
    "LookupKnowledgeError": "langchain_lookup_knowledge.errors",
    "LookupKnowledgeRetriever": "langchain_lookup_knowledge.retriever",
    "LookupResult": "langchain_lookup_knowledge.core.models",
    "LookupRuntime": "langchain_lookup_knowledge.pipeline.runtime",
    "LookupSettings": "langchain_lookup_knowledge.settings",
    "ModelFilesError": "langchain_lookup_knowledge.errors",
    "OnnxSentenceEmbeddings": "langchain_lookup_knowledge.embeddings",
    "RetrievalAttempt": "langchain_lookup_knowledge.core.models",
    "RetrievalError": "langchain_lookup_knowledge.core.models",
    "RetrievalTrace": "langchain_lookup_knowledge.core.models",
    "RetrievalUnavailableError": "langchain_lookup_knowledge.errors",
    "SchemaMismatchError": "langchain_lookup_knowledge.errors",
    "ScoreLabel": "langchain_lookup_knowledge.core.models",
    "SqlInvocationRecorder": "langchain_lookup_knowledge.recording",
    "StoreUnavailableError": "langchain_lookup_knowledge.errors",
    "UnsafeFilterError": "langchain_lookup_knowledge.errors",
    "build_lookup_graph": "langchain_lookup_knowledge.pipeline.graph",
    "create_lookup_knowledge_tool": "langchain_lookup_knowledge.tool",
    "filter_to_expr": "langchain_lookup_knowledge.core.filters",
    "ingest_folder": "langchain_lookup_knowledge.ingest",
}

if TYPE_CHECKING:  # pragma: no cover
    from langchain_lookup_knowledge.core.filters import CategoryFilter, filter_to_expr
    from langchain_lookup_knowledge.core.models import (
        Candidate,
        ContextPack,
        EvidenceBlock,
        HitReason,
        L0Hints,
        LookupResult,
        RetrievalAttempt,
        RetrievalError,
        RetrievalTrace,
        ScoreLabel,
    )
    from langchain_lookup_knowledge.embeddings import CachedQueryEmbeddings, OnnxSentenceEmbeddings
    from langchain_lookup_knowledge.errors import (
        ConfigurationError,
        EmbeddingError,
        InvalidQueryError,
        LookupKnowledgeError,
        ModelFilesError,
        RetrievalUnavailableError,
        SchemaMismatchError,
        StoreUnavailableError,
        UnsafeFilterError,
    )
    from langchain_lookup_knowledge.ingest import IngestReport, ingest_folder
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.recording import InvocationRecorder, SqlInvocationRecorder
    from langchain_lookup_knowledge.retriever import LookupKnowledgeRetriever
    from langchain_lookup_knowledge.settings import LookupSettings
    from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "CachedQueryEmbeddings",
    "Candidate",
    "CategoryFilter",
    "ConfigurationError",
    "ContextPack",
    "EmbeddingError",
    "EvidenceBlock",
    "HitReason",
    "IngestReport",
    "InvalidQueryError",
    "InvocationRecorder",
    "L0Hints",
    "LookupKnowledgeError",
    "LookupKnowledgeRetriever",
    "LookupResult",
    "LookupRuntime",
    "LookupSettings",
    "ModelFilesError",
    "OnnxSentenceEmbeddings",
    "RetrievalAttempt",
    "RetrievalError",
    "RetrievalTrace",
    "RetrievalUnavailableError",
    "SchemaMismatchError",
    "ScoreLabel",
    "SqlInvocationRecorder",
    "StoreUnavailableError",
    "UnsafeFilterError",
    "build_lookup_graph",
    "create_lookup_knowledge_tool",
    "filter_to_expr",
    "ingest_folder",
]
