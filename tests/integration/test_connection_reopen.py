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
