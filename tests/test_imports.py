"""The public API is what ``__all__`` says, and every name in it imports."""

import langchain_lookup_knowledge

EXPECTED = {
    "LookupSettings",
    "build_lookup_graph",
    "create_lookup_knowledge_tool",
    "ingest_folder",
    "LookupResult",
    "EvidenceBlock",
    "SqlInvocationRecorder",
    "OnnxSentenceEmbeddings",
    "CategoryFilter",
    "filter_to_expr",
}


def test_all_names_import():
    for name in langchain_lookup_knowledge.__all__:
        assert getattr(langchain_lookup_knowledge, name) is not None, name


def test_contract_names_are_public():
    assert set(langchain_lookup_knowledge.__all__) >= EXPECTED
