"""Reopening a Milvus Lite database this process already serves.

The embedded Milvus Lite server runs inside this process and holds the database lock itself, so
an open that fails there is never "locked by another process". Observed in full-suite runs: the
in-process gRPC server answers an idle channel's keepalive pings with GOAWAY (too_many_pings),
and the next client's first call fails once. The faults below are INJECTED (a MilvusClient
constructor that fails), everything else is a real Milvus Lite database.
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store import connection
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client


def failing_constructor(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[int]:
    """FAKE fault: the first ``failures`` MilvusClient constructions raise, as after a GOAWAY."""
    real = connection.MilvusClient
    calls: list[int] = []

    def construct(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= failures:
            raise RuntimeError("<_InactiveRpcError: StatusCode.UNAVAILABLE GOAWAY received>")
        return real(*args, **kwargs)

    monkeypatch.setattr(connection, "MilvusClient", construct)
    return calls


def test_a_failed_reopen_of_our_own_lite_server_is_retried_once(
    settings: LookupSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_client(settings).list_collections()  # this process now serves the database
    close_all_clients()
    calls = failing_constructor(monkeypatch, failures=1)
    client = open_client(settings)
    assert client.list_collections() == []
    assert len(calls) == 2


def test_our_own_lite_server_not_answering_is_not_called_another_process(
    settings: LookupSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_client(settings).list_collections()
    close_all_clients()
    failing_constructor(monkeypatch, failures=10)
    with pytest.raises(StoreUnavailableError) as info:
        open_client(settings)
    message = str(info.value)
    assert "another process" not in message
    assert "did not answer" in message
    assert "GOAWAY" in message


def test_a_lite_channel_sends_no_keepalive_pings_and_a_server_channel_keeps_pymilvus_own(
    settings,
):
    """Milvus Lite's local server answers repeated keepalive pings with GOAWAY (too_many_pings),
    which breaks a client opened on the same file once a long call or an idle minute lets the
    pings pile up; a server keeps pymilvus's keepalive (it crosses networks)."""
    from langchain_core.embeddings import DeterministicFakeEmbedding  # FAKE: no ranking read
    from langchain_milvus import Milvus

    from langchain_lookup_knowledge.store.connection import connection_args

    lite = connection_args(settings)["grpc_options"]
    assert lite["grpc.keepalive_permit_without_calls"] == 0
    assert lite["grpc.keepalive_time_ms"] == 2**31 - 1  # never, in gRPC's int milliseconds
    assert "grpc_options" not in connection_args(
        LookupSettings(milvus_uri="http://127.0.0.1:19530")
    )
    client = open_client(settings)
    assert client._handler._grpc_options == lite  # the channel is made with them
    store = Milvus(  # a langchain-milvus store on the same file, as eval's bare wirings open it
        embedding_function=DeterministicFakeEmbedding(size=8),
        connection_args=connection_args(settings),
        collection_name="pings",
        auto_id=True,
    )
    store.add_texts(["disk full", "pod crash"])
    assert store._milvus_client._handler._grpc_options == lite
    assert len(store.similarity_search("disk", k=1)) == 1
