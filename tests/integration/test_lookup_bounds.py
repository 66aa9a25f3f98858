"""Lookups in bounded time, whatever the recorder or the embedder does, and any text a caller
sends (issue 13, "Lookups: bounded time").

Real faults only: a second process holding a SQLite write lock, a real PostgreSQL (tests/servers.py)
with a second connection holding ``LOCK TABLE tool_invocation``, a silent port (a listening socket
that never answers), a local HTTP server that answers 429 with ``Retry-After: 60`` or drips one
byte a second. Time bounds are generous (several times the configured budget) and still far below
what each fault cost before the fix (measured figures in the README's reliability table).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator

import pytest

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.errors import EmbeddingError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.recording import SqlInvocationRecorder, create_schema, recorder_for
from tests.fakes import call
from tests.faults import (
    QuietHandler,
    serve_on_loopback,
    silent_tcp_port,
    sqlite_write_locked_by_another_process,
)

CRASHLOOP_QUERY = "my pod keeps crashing and restarting"


# --------------------------------------------------------------------------------------------
# Text a caller sends
# --------------------------------------------------------------------------------------------


def test_lone_surrogate_in_a_query_is_replaced_answered_and_recorded(tool, kb_settings):
    before = len(SqlInvocationRecorder(kb_settings.resolved_invocation_db_url).rows(1000))
    message = tool.invoke(call("my pod \ud800 keeps crashing and restarting\udc80"))
    assert message.status == "success", message.content
    assert message.artifact["found"]
    notes = message.artifact["retrievalTrace"]["notes"]
    assert any("lone surrogates" in note for note in notes), notes
    rows = SqlInvocationRecorder(kb_settings.resolved_invocation_db_url).rows(1000)
    assert len(rows) == before + 1
    assert "\ud800" not in rows[0]["query"]
    assert rows[0]["query"].startswith("my pod")


def test_a_query_of_lone_surrogates_only_gets_a_clear_message(tool):
    message = tool.invoke(call("\udc80\ud800 \ud800"))
    assert message.status == "error"
    assert "lone surrogates" in message.content
    assert "TypeError" not in message.content


def test_a_surrogate_pair_is_joined_into_its_character(tool):
    message = tool.invoke(call("pod crashing \ud83d\ude00"))
    assert message.status == "success"
    assert message.artifact["query"] == "pod crashing \U0001f600"


# --------------------------------------------------------------------------------------------
# The recorder: locked, silent, or a locked table
# --------------------------------------------------------------------------------------------


def timed_lookups(tool, count: int) -> list[tuple[float, dict]]:
    """``count`` lookups; each one's wall time and its trace's ``recording``."""
    out = []
    for _ in range(count):
        start = time.monotonic()
        message = tool.invoke(call(CRASHLOOP_QUERY))
        elapsed = time.monotonic() - start
        assert message.status == "success", message.content
        assert message.artifact["found"]
        trace = message.artifact["retrievalTrace"]
        out.append((elapsed, trace["recording"] | {"ms": trace["timingsMs"]["record_invocation"]}))
    return out


def assert_bounded_then_cheap(runs: list[tuple[float, dict]], needle: str) -> None:
    """The first lookup waits about record_timeout_s (2 s), the next ones not at all."""
    first, *rest = runs
    assert first[0] < 10.0, runs  # before: 97 s (SQLite lock), 10 s (silent port), > 120 s
    assert first[1]["status"] == "error"
    assert first[1]["row"] in {"pending", "kept"}
    assert needle in first[1]["error"]
    for _elapsed, recording in rest:
        assert recording["status"] == "error"
        assert recording["row"] == "kept"
        assert "not tried again" in recording["error"]
        assert recording["ms"] < 500, runs  # the circuit is open: the database is not touched


def test_sqlite_records_locked_by_another_writer_bound_each_lookup(
    kb_settings, real_embeddings, tmp_path
):
    db = tmp_path / "records.sqlite3"
    url = f"sqlite:///{db}"
    create_schema(SqlInvocationRecorder(url).engine)  # the file exists, in WAL mode
    settings = kb_settings.model_copy(update={"invocation_db_url": url})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    with sqlite_write_locked_by_another_process(db):
        runs = timed_lookups(tool, 3)
    assert_bounded_then_cheap(runs, "")
    # Nothing is lost: the rows waited in memory and are written once the lock is gone.
    recorder = recorder_for(settings)
    assert recorder.flush() == 0
    assert len(SqlInvocationRecorder(url).rows()) == 3


def test_sqlite_records_locked_under_the_default_queue_never_stall_a_lookup_and_warn(
    kb_settings, real_embeddings, tmp_path, caplog
):
    """The default (record_wait=false): the lookups return at once with their row queued; the
    writer thread meets the lock, logs a warning and keeps the rows; they are written once the
    lock is gone."""
    db = tmp_path / "records.sqlite3"
    url = f"sqlite:///{db}"
    create_schema(SqlInvocationRecorder(url).engine)
    settings = kb_settings.model_copy(
        update={"invocation_db_url": url, "record_wait": False, "record_timeout_s": 1.0}
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    recorder = recorder_for(settings)
    statuses = []
    locked = sqlite_write_locked_by_another_process(db)
    with caplog.at_level("WARNING", logger="langchain_lookup_knowledge"), locked:
        for _ in range(3):
            message = tool.invoke(call(CRASHLOOP_QUERY))
            assert message.status == "success", message.content
            assert message.artifact["found"]
            statuses.append(message.artifact["retrievalTrace"]["recording"]["status"])
            timings = message.artifact["retrievalTrace"]["timingsMs"]
            assert timings["record_invocation"] < 500  # the lookup never waits on the lock
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "records database" in r.getMessage() and "unavailable" in r.getMessage()
            for r in caplog.records
        ):
            time.sleep(0.1)
    assert statuses[0] == "queued"
    assert set(statuses) <= {"queued", "error"}  # later ones see the open circuit
    warned = [r.getMessage() for r in caplog.records if "records database" in r.getMessage()]
    assert warned, "the locked records database was not logged"
    assert "unavailable" in warned[0]
    assert recorder.flush() == 0  # the lock is gone: every kept row is written
    assert len(SqlInvocationRecorder(url).rows()) == 3


def test_postgres_records_on_a_silent_port_cost_one_bounded_wait(kb_settings, real_embeddings):
    pytest.importorskip("psycopg", reason="the PostgreSQL driver (the postgres extra)")
    with silent_tcp_port() as port:
        url = f"postgresql+psycopg://lookup:pw@127.0.0.1:{port}/records"
        settings = kb_settings.model_copy(update={"invocation_db_url": url})
        tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
        runs = timed_lookups(tool, 3)
    assert_bounded_then_cheap(runs, "")
    assert sum(elapsed for elapsed, _ in runs) < 20.0, runs  # before: 10 s each
    assert all("pw@" not in recording["error"] for _, recording in runs)


@pytest.mark.postgres
def test_postgres_locked_tool_invocation_table_bounds_the_lookup(
    kb_settings, real_embeddings, postgres_url
):
    create_schema(SqlInvocationRecorder(postgres_url).engine)
    settings = kb_settings.model_copy(
        update={"invocation_db_url": postgres_url, "record_timeout_s": 1.5}
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    before = len(SqlInvocationRecorder(postgres_url).rows(10_000))
    psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL driver (the postgres extra)")
    locker = psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    try:
        locker.execute("LOCK TABLE tool_invocation IN ACCESS EXCLUSIVE MODE")
        runs = timed_lookups(tool, 3)
    finally:
        locker.rollback()
        locker.close()
    assert_bounded_then_cheap(runs, "")
    recorder = recorder_for(settings)
    assert recorder.flush() == 0
    assert len(SqlInvocationRecorder(postgres_url).rows(10_000)) == before + 3


# --------------------------------------------------------------------------------------------
# The embedding service: one deadline for the whole call, retries included
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def stalling_embedding_server(behaviour: str) -> Iterator[tuple[str, list[float]]]:
    """A local OpenAI-compatible ``/v1/embeddings`` that holds its caller.

    ``retry_after_60``: 429 with ``Retry-After: 60``; ``drip``: 200 whose body arrives one byte
    a second. Yields the base URL and the arrival time of each request.
    """
    arrivals: list[float] = []
    stop = threading.Event()

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server names it
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            arrivals.append(time.monotonic())
            if behaviour == "retry_after_60":
                body = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
                self.send_response(429)
                self.send_header("Retry-After", "60")
            else:
                vector = [0.1] * 8
                payload = {"data": [{"embedding": vector, "index": 0}], "model": "m"}
                body = json.dumps(payload).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if behaviour == "retry_after_60":
                self.wfile.write(body)
                return
            for byte in body:  # drip: one byte a second, until the client hangs up
                if stop.wait(1.0):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return

    with serve_on_loopback(Handler, on_stop=stop.set) as url:
        yield url, arrivals


def openai_settings(settings, base_url: str, **updates):
    return settings.model_copy(
        update={
            "embedding_provider": "openai",
            "openai_base_url": base_url,
            "openai_api_key": None,
            "embedding_timeout_s": 2.0,
            "embedding_max_retries": 2,
            **updates,
        }
    )


def test_retry_after_past_the_deadline_ends_the_call_at_once(settings):
    with stalling_embedding_server("retry_after_60") as (base_url, arrivals):
        embeddings = build_embeddings(openai_settings(settings, base_url))
        start = time.monotonic()
        with pytest.raises(EmbeddingError) as caught:
            embeddings.embed_query("disk full")
        elapsed = time.monotonic() - start
    assert elapsed < 10.0  # before: 60.6 s (the client slept the whole Retry-After)
    assert len(arrivals) == 1  # no retry can fit: none is made
    assert "HTTP 429" in str(caught.value)
    assert "retry after 60s" in str(caught.value)
    assert "2s embedding deadline" in str(caught.value)


def test_a_dripping_embedding_server_cannot_hold_a_lookup(settings):
    with stalling_embedding_server("drip") as (base_url, arrivals):
        settings = openai_settings(settings, base_url)
        tool = create_lookup_knowledge_tool(settings)
        start = time.monotonic()
        message = tool.invoke(call("disk full"))
        elapsed = time.monotonic() - start
    assert elapsed < 10.0  # before: > 150 s
    assert message.status == "error"
    assert "embedding service" in message.content
    assert "timed out" in message.content
    assert 1 <= len(arrivals) <= 3  # one call + embedding_max_retries, all within 2 s
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
    assert len(rows) == 1
    assert "embedding service" in rows[0]["error"]


def test_a_dripping_embedding_server_cannot_hold_an_ingest(settings, tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "disk.md").write_text("---\ntitle: Disk full\n---\n# Disk full\n\nFree space.\n")
    with stalling_embedding_server("drip") as (base_url, _arrivals):
        settings = openai_settings(settings, base_url)
        start = time.monotonic()
        with pytest.raises(EmbeddingError) as caught:
            ingest_folder(kb, settings)
        elapsed = time.monotonic() - start
    assert elapsed < 15.0  # before: > 150 s
    assert "timed out" in str(caught.value)


def test_the_async_embedding_call_has_the_same_deadline(settings):
    with stalling_embedding_server("drip") as (base_url, _arrivals):
        embeddings = build_embeddings(openai_settings(settings, base_url))

        async def embed() -> None:
            await embeddings.aembed_query("disk full")

        start = time.monotonic()
        with pytest.raises(EmbeddingError) as caught:
            asyncio.run(embed())
        elapsed = time.monotonic() - start
    assert elapsed < 10.0  # before: as long as the server drips (99 s here)
    assert "timed out" in str(caught.value)
