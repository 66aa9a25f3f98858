"""Opening a collection for lookups pays its cold first searches under their own bound.

Milvus Lite reports a reopened collection loaded at once but prepares BM25 on the first BM25
search (measured on a copy of a 3,485-chunk collection, loaded 2-core machine: 0.96-1.24 s, then
0.03-0.06 s). That cost used to fall inside the first lookup's ``milvus_timeout_s``; the lookup
runtime now runs one dense and one BM25 search of one hit when it opens the collection, bounded
by ``milvus_load_timeout_s``. Real Milvus Lite; the client is wrapped only to watch (or, where
named, to fail) its searches.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.pipeline import runtime as runtime_module
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.store.connection import open_client
from tests.fakes import call


class WatchedClient:
    """The real ``MilvusClient``, its searches listed; with ``fail_first`` the first that many
    searches raise (an INJECTED fault: a cold collection that does not answer in time)."""

    def __init__(self, inner: Any, fail_first: int = 0) -> None:
        self.inner = inner
        self.searches: list[dict[str, Any]] = []
        self.fail_first = fail_first

    def search(self, collection_name: str, **kwargs: Any) -> Any:
        self.searches.append(kwargs)
        if len(self.searches) <= self.fail_first:
            raise TimeoutError("no answer within the deadline (injected)")
        return self.inner.search(collection_name, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def watched(monkeypatch, kb_settings):
    settings = kb_settings.model_copy(
        update={"record_invocations": False, "milvus_load_timeout_s": 77.0}
    )

    def install(fail_first: int = 0) -> WatchedClient:
        client = WatchedClient(open_client(settings), fail_first)
        monkeypatch.setattr(runtime_module, "open_client", lambda _settings: client)
        return client

    return settings, install


def test_opening_runs_one_dense_and_one_bm25_search_under_the_load_timeout(
    watched, real_embeddings
):
    settings, install = watched
    client = install()
    layout = LookupRuntime(settings, embeddings=real_embeddings).layout
    assert layout.has_bm25
    assert [(s["anns_field"], s["limit"], s["timeout"]) for s in client.searches] == [
        (layout.vector_field, 1, 77.0),
        (layout.sparse_field, 1, 77.0),
    ]


def test_a_warm_up_that_fails_is_logged_and_the_lookup_still_answers(
    watched, real_embeddings, caplog
):
    settings, install = watched
    client = install(fail_first=2)  # both warm-up searches
    runtime = LookupRuntime(settings, embeddings=real_embeddings)
    with caplog.at_level(logging.WARNING, logger="langchain_lookup_knowledge.store"):
        assert runtime.layout.has_bm25
    warnings = [r.getMessage() for r in caplog.records if "milvus_load_timeout_s" in r.getMessage()]
    assert len(warnings) == 2
    assert all(repr(settings.collection) in w and "injected" in w for w in warnings)
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    message = tool.invoke(call("pgbouncer connection pool exhausted"))
    assert message.status == "success"
    assert message.artifact["found"]
    assert len(client.searches) > 2  # the lookup searched for itself
