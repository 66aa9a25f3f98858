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
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.filters import CategoryFilter, filter_to_expr

__all__ = [
    "CachedQueryEmbeddings",
    "CategoryFilter",
    "ConfigurationError",
    "EmbeddingError",
    "IngestReport",
    "InvalidQueryError",
    "LookupKnowledgeError",
    "LookupSettings",
    "ModelFilesError",
    "OnnxSentenceEmbeddings",
    "RetrievalUnavailableError",
    "SchemaMismatchError",
    "StoreUnavailableError",
    "UnsafeFilterError",
    "filter_to_expr",
    "ingest_folder",
]
