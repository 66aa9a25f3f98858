"""The public API is exactly what ``__all__`` says, and every name in it imports."""

import langchain_lookup_knowledge

EXPECTED = [
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


def test_all_names_import():
    for name in langchain_lookup_knowledge.__all__:
        assert getattr(langchain_lookup_knowledge, name) is not None, name


def test_public_names_are_exactly_the_expected_ones():
    """A name added or removed is a decision: update EXPECTED (and the README) with it."""
    assert sorted(langchain_lookup_knowledge.__all__) == sorted(EXPECTED)
    assert len(set(langchain_lookup_knowledge.__all__)) == len(langchain_lookup_knowledge.__all__)


def test_the_retriever_is_a_langchain_retriever():
    from langchain_core.retrievers import BaseRetriever

    assert issubclass(langchain_lookup_knowledge.LookupKnowledgeRetriever, BaseRetriever)
