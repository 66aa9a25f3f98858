"""``BareStore.fill`` reuses a bare collection only when it was filled from the same documents.

Real Milvus Lite in a temporary folder and langchain-milvus's built-in BM25 (the ``bm25`` kind
embeds nothing, so no model is needed to test what a fill reuses). The two states an earlier
release could leave are made by writing rows with ``add_documents`` directly, named as such.
"""

from __future__ import annotations

from langchain_core.documents import Document

from langchain_lookup_knowledge.evaluation.baseline import (
    DOC_ID_FIELD,
    FILLED_FROM_PROPERTY,
    BareStore,
)
from langchain_lookup_knowledge.store.catalog_store import query_all
from langchain_lookup_knowledge.store.connection import open_client
from tests.conftest import local_settings


def corpus(*texts: str) -> tuple[list[Document], list[str]]:
    ids = [f"doc{i}" for i in range(len(texts))]
    return [Document(t, metadata={DOC_ID_FIELD: i}) for t, i in zip(texts, ids, strict=True)], ids


RUNBOOKS = corpus("disk full on a node", "connection pool exhausted", "certificate expired")
OTHERS = corpus("kafka consumer lag", "dns lookups fail", "redis memory eviction")


def stored_ids(store: BareStore) -> list[str]:
    rows = query_all(store.store.client, store.collection, 'pk != ""', ["pk"])
    return sorted(str(r["pk"]) for r in rows)


def test_a_fill_is_reused_only_for_the_same_documents(tmp_path):
    settings = local_settings(tmp_path)
    store = BareStore(settings, "bare_same_size", "bm25", None)
    assert store.fill(*RUNBOOKS) is True
    assert store.fill(*RUNBOOKS) is False  # the same documents: reused
    # another corpus of the same size (the same ids, too): a row count cannot tell them apart
    assert store.fill(*OTHERS) is True
    assert store.row_count() == 3
    assert store.search("kafka consumer lag", k=1) == ["doc0"]
    assert store.search_docs("certificate expired", k=3) == []  # none of the first corpus left


def test_a_fill_killed_halfway_is_filled_again_without_duplicates(tmp_path):
    settings = local_settings(tmp_path)
    store = BareStore(settings, "bare_killed", "bm25", None)
    docs, ids = RUNBOOKS
    store.store.add_documents(docs[:2], ids=ids[:2])  # INJECTED: a fill that died after 2 rows
    assert store.fill(docs, ids) is True
    assert store.row_count() == 3
    assert stored_ids(store) == sorted(ids)


def test_a_collection_filled_before_the_record_is_judged_by_its_ids(tmp_path):
    settings = local_settings(tmp_path)
    store = BareStore(settings, "bare_old", "bm25", None)
    docs, ids = RUNBOOKS
    store.store.add_documents(docs, ids=ids)  # INJECTED: an earlier release's complete fill
    client = open_client(settings)
    assert FILLED_FROM_PROPERTY not in (client.describe_collection(store.collection)["properties"])
    assert store.fill(docs, ids) is False  # its ids are the corpus's: reused, and recorded
    assert FILLED_FROM_PROPERTY in client.describe_collection(store.collection)["properties"]
    other_docs, _ = OTHERS
    assert store.fill(other_docs, ["x0", "x1", "x2"]) is True
    assert stored_ids(store) == ["x0", "x1", "x2"]
