"""Queued records (the default, ``record_wait=false``): a lookup never waits for its row's write,
and the row keeps the durability of a waited one (issue 12, latency).

The faults are injected into a real ``SqlInvocationRecorder`` over a real SQLite file, each
named as such: ``InjectedStalledStore`` (the insert does not return until the test releases it)
and ``InjectedFailingStore`` (the insert raises the driver's ``OperationalError`` until healed).
A lookup that waited would, past ``record_timeout_s``, report ``error`` / ``pending`` instead of
``queued``: no test here measures time.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.recording import QueuedInvocationRecorder, SqlInvocationRecorder
from tests.fakes import call

QUERY = "my pod keeps crashing and restarting"


class InjectedStalledStore(SqlInvocationRecorder):
    """Injected fault: every insert stalls until ``release`` is set (a database that hangs)."""

    def __init__(self, url: str, **kwargs) -> None:
        super().__init__(url, **kwargs)
        self.release = threading.Event()
        self.stalled = threading.Event()

    def _insert(self, rows):
        self.stalled.set()
        assert self.release.wait(timeout=120), "the test never released the stalled insert"
        return super()._insert(rows)


class InjectedFailingStore(SqlInvocationRecorder):
    """Injected fault: inserts raise ``OperationalError`` (database unavailable) until healed."""

    def __init__(self, url: str, **kwargs) -> None:
        super().__init__(url, **kwargs)
        self.healed = False
        self.tripped = threading.Event()

    def _insert(self, rows):
        if not self.healed:
            raise OperationalError("INSERT", {}, Exception("injected: database is unavailable"))
        return super()._insert(rows)

    def _trip(self, reason: str) -> None:
        super()._trip(reason)
        self.tripped.set()


def rows_of(url: str) -> list[dict]:
    recorder = SqlInvocationRecorder(url)
    try:
        return recorder.rows(limit=100)
    finally:
        recorder.dispose()


@pytest.fixture
def records_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'records.sqlite3'}"


def queued_tool(kb_settings, real_embeddings, recorder):
    settings = kb_settings.model_copy(update={"record_wait": False, "record_timeout_s": 0.5})
    return create_lookup_knowledge_tool(settings, embeddings=real_embeddings, recorder=recorder)


def test_records_are_queued_by_default():
    assert LookupSettings.model_fields["record_wait"].default is False
    assert isinstance(SqlInvocationRecorder("sqlite://"), QueuedInvocationRecorder)


def test_a_lookup_does_not_wait_for_a_stalled_records_store(
    kb_settings, real_embeddings, records_url
):
    store = InjectedStalledStore(records_url, timeout_s=0.5)
    SqlInvocationRecorder(records_url).engine  # noqa: B018 - the table exists before the stall
    tool = queued_tool(kb_settings, real_embeddings, store)
    try:
        message = tool.invoke(call(QUERY))
        assert message.status == "success", message.content
        assert message.artifact["found"]
        assert message.artifact["retrievalTrace"]["recording"] == {"status": "queued"}
        assert store.stalled.wait(timeout=60)  # the writer has the row, and is stuck on it
        assert rows_of(records_url) == []
    finally:
        store.release.set()
    assert store.flush(timeout_s=30) == 0
    (row,) = rows_of(records_url)
    assert row["query"] == QUERY
    assert row["found"] is True
    assert row["latency_ms"] == message.artifact["retrievalTrace"]["timingsMs"]["total"]


class ThreadNotingStore(SqlInvocationRecorder):
    """A real recorder that notes which thread made each row (a spy: the row is still made)."""

    def __init__(self, url: str, **kwargs) -> None:
        super().__init__(url, **kwargs)
        self.made_on: list[str] = []

    def _row(self, call):
        self.made_on.append(threading.current_thread().name)
        return super()._row(call)


def test_a_queued_row_is_made_on_the_writer_thread_not_in_the_lookup(
    kb_settings, real_embeddings, records_url
):
    """The query policy, the secret masking and the index columns of a queued row are the
    writer's work: the lookup hands over its call and returns."""
    store = ThreadNotingStore(records_url)
    tool = queued_tool(kb_settings, real_embeddings, store)
    message = tool.invoke(call("my pod keeps crashing after postgresql://app:hunter2@db/x"))
    assert message.artifact["retrievalTrace"]["recording"] == {"status": "queued"}
    assert store.flush(timeout_s=30) == 0
    assert store.made_on == ["lookup-recorder"]
    (row,) = rows_of(records_url)  # the same complete row, its secret masked
    assert "hunter2" not in row["query"]
    assert "my pod keeps crashing" in row["query"]
    assert row["found"] is True
    assert row["retrieval_details"]["evidence_blocks"]


def test_queued_rows_wait_in_memory_while_the_store_fails_and_are_written_after(
    kb_settings, real_embeddings, records_url
):
    store = InjectedFailingStore(records_url, retry_after_s=600)
    tool = queued_tool(kb_settings, real_embeddings, store)
    first = tool.invoke(call(QUERY))
    assert first.artifact["retrievalTrace"]["recording"] == {"status": "queued"}
    assert store.tripped.wait(timeout=60)  # the writer's failed insert opened the circuit
    second = tool.invoke(call("PVC stuck in Pending"))
    recording = second.artifact["retrievalTrace"]["recording"]
    assert recording["status"] == "error"
    assert recording["row"] == "kept"
    assert "not tried again" in recording["error"]
    assert store.backlog == 2  # both rows wait in memory: nothing lost
    store.healed = True
    assert store.flush(timeout_s=30) == 0
    queries = sorted(r["query"] for r in rows_of(records_url))
    assert queries == sorted([QUERY, "PVC stuck in Pending"])


def test_record_wait_puts_the_written_rows_id_in_the_trace(
    kb_settings, real_embeddings, records_url
):
    settings = kb_settings.model_copy(
        update={"record_wait": True, "invocation_db_url": records_url}
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    message = tool.invoke(call(QUERY))
    recording = message.artifact["retrievalTrace"]["recording"]
    assert recording["status"] == "ok"
    (row,) = rows_of(records_url)
    assert row["id"] == recording["id"]


EXIT_RIGHT_AFTER = """
import sys
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
recorder = SqlInvocationRecorder(sys.argv[1])
result = LookupResult(query="queued then exit", found=False, evidence_status="no_evidence",
                      message="none")
recorder.enqueue(result=result, details={"query_transform": {"query": "queued then exit"}})
"""


def test_a_process_that_exits_right_after_queueing_still_writes_its_row(records_url):
    assert LookupResult(query="q", found=False, evidence_status="no_evidence", message="m")
    done = subprocess.run(
        [sys.executable, "-c", EXIT_RIGHT_AFTER, records_url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert [r["query"] for r in rows_of(records_url)] == ["queued then exit"]
