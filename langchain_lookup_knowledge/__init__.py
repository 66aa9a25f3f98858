"""langchain-lookup-knowledge: an explicit ``lookup_knowledge`` tool over a markdown knowledge base.

L0 frontmatter hints steer L1 Milvus retrieval inside a LangGraph pipeline that returns
evidence blocks, a packed context and the full retrieval trace.
"""

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
from langchain_lookup_knowledge.pipeline.models import (
    Candidate,
    ContextPack,
    EvidenceBlock,
    HitReason,
    L0Hints,
    LookupResult,
    RetrievalAttempt,
    RetrievalTrace,
    ScoreLabel,
)
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.recording import InvocationRecorder, SqlInvocationRecorder
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.filters import CategoryFilter, filter_to_expr
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool

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
    "LookupResult",
    "LookupRuntime",
    "LookupSettings",
    "ModelFilesError",
    "OnnxSentenceEmbeddings",
    "RetrievalAttempt",
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
