"""``tool_invocation`` rows: one per lookup, on SQLite and a real PostgreSQL server, with the
spec's ``retrieval_details`` keys; a recording failure never fails a lookup; recording can be
switched off."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from sqlalchemy import inspect

from langchain_lookup_knowledge import SqlInvocationRecorder, create_lookup_knowledge_tool
from langchain_lookup_knowledge.pipeline.details import SUMMARY_CONTENT_CHARS
from langchain_lookup_knowledge.recording import create_schema, tool_invocation
from tests.fakes import RaisingRecorder, call, failing_graph

DETAIL_KEYS = {
    "query_transform",
    "retrieval_trace",
    "context_pack_summary",
    "rerank_trace",
    "evidence_blocks",
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> Iterator[str]:
    """An empty records database: a fresh SQLite file, or the PostgreSQL test server with the
    table dropped."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'records.sqlite3'}"
        return
    url = request.getfixturevalue("postgres_url")
    recorder = SqlInvocationRecorder(url)
    tool_invocation.drop(recorder.engine, checkfirst=True)
    recorder.dispose()
    yield url


@pytest.fixture
def tool_for(sample_kb_store, real_embeddings):
    def make(url: str, **updates):
        settings = sample_kb_store.model_copy(update={"invocation_db_url": url, **updates})
        return create_lookup_knowledge_tool(settings, embeddings=real_embeddings)

    return make


def read_rows(url: str) -> list[dict]:
    recorder = SqlInvocationRecorder(url)
    try:
        return sorted(recorder.rows(limit=1000), key=lambda r: r["id"])
    finally:
        recorder.dispose()


def test_two_lookups_give_two_rows_with_retrieval_details(db_url, tool_for):
    tool = tool_for(db_url)
    first = tool.invoke(call("my pod keeps crashing and restarting"))
    second = tool.invoke(call("PVC stuck in Pending"))
    rows = read_rows(db_url)
    assert [r["query"] for r in rows] == [
        "my pod keeps crashing and restarting",
        "PVC stuck in Pending",
    ]
    for row, msg in zip(rows, [first, second], strict=True):
        artifact = msg.artifact
        trace = artifact["retrievalTrace"]
        assert row["id"] == trace["recording"]["id"]
        assert row["tool_name"] == "lookup_knowledge"
        assert row["created_at"] is not None
        assert row["found"] is True
        assert row["evidence_status"] == "evidence"
        assert row["retrieval_layer"] == artifact["retrievalLayer"]
        assert row["error"] is None
        # Latency of the whole lookup: at least query transformation plus every L1 attempt.
        parts = trace["timingsMs"]["transform_query"] + sum(
            a["latencyMs"] for a in trace["attempts"]
        )
        assert row["latency_ms"] >= parts
        assert row["latency_ms"] == trace["timingsMs"]["total"]
        details = row["retrieval_details"]
        assert set(details) >= DETAIL_KEYS
        assert details["query_transform"]["query"] == row["query"]
        assert details["retrieval_trace"]["attempts"] == trace["attempts"]
        assert (
            details["context_pack_summary"]["included_sources"]
            == (artifact["contextPack"]["includedSources"])
        )
        assert details["rerank_trace"] == artifact["rerankTrace"]
        assert details["rerank_trace"]
        # Evidence summaries, full content cut to a preview.
        for summary, block in zip(
            details["evidence_blocks"], artifact["evidenceBlocks"], strict=True
        ):
            assert "content" not in summary
            assert summary["source"] == block["source"]
            assert summary["hit_reasons"]
            assert summary["content_preview"] == block["content"][:SUMMARY_CONTENT_CHARS]
        assert any(len(b["content"]) > SUMMARY_CONTENT_CHARS for b in artifact["evidenceBlocks"])


async def test_twenty_concurrent_lookups_give_twenty_rows(db_url, tool_for):
    tool = tool_for(db_url)
    questions = [
        "pod keeps restarting",
        "etcd is slow",
        "redis evicting keys",
        "TLS certificate expired",
        "disk full on a node",
    ]
    msgs = await asyncio.gather(
        *(tool.ainvoke(call(f"{questions[i % 5]} ({i})", f"c{i}")) for i in range(20))
    )
    assert all(m.status == "success" for m in msgs)
    recording = [m.artifact["retrievalTrace"]["recording"] for m in msgs]
    assert all(r["status"] == "ok" for r in recording)
    rows = read_rows(db_url)
    assert len(rows) == 20
    assert {r["id"] for r in rows} == {r["id"] for r in recording}
    assert {r["query"] for r in rows} == {f"{questions[i % 5]} ({i})" for i in range(20)}


def test_schema_creation_is_idempotent(db_url):
    first, second = SqlInvocationRecorder(db_url), SqlInvocationRecorder(db_url)
    try:
        create_schema(first.engine)  # the engine created it already; again is a no-op
        create_schema(second.engine)
        assert inspect(second.engine).has_table("tool_invocation")
        columns = {c["name"] for c in inspect(second.engine).get_columns("tool_invocation")}
        assert columns == {
            "id",
            "tool_name",
            "query",
            "created_at",
            "latency_ms",
            "found",
            "evidence_status",
            "retrieval_layer",
            "retrieval_details",
            "error",
            # indexed facts for the report (records/columns.py)
            "record_version",
            "collection",
            "scope",
            "query_hash",
            "relevance_level",
            "relevance_score",
            "fallback_reason",
            "category_filter",
            "path_fallback",
            "error_kind",
        }
        assert inspect(second.engine).has_table("tool_invocation_source")
    finally:
        first.dispose()
        second.dispose()


def test_failed_retrieval_is_recorded_with_its_error(db_url, sample_kb_store, real_embeddings):
    settings = sample_kb_store.model_copy(update={"invocation_db_url": db_url})
    recorder = SqlInvocationRecorder(db_url)
    tool = create_lookup_knowledge_tool(
        settings, graph=failing_graph(settings, real_embeddings, recorder=recorder)
    )
    msg = tool.invoke(call("node is NotReady"))
    recorder.dispose()
    assert msg.status == "error"
    (row,) = read_rows(db_url)
    assert row["found"] is False
    assert row["evidence_status"] == "no_evidence"
    assert "injected outage" in row["error"]
    attempts = row["retrieval_details"]["retrieval_trace"]["attempts"]
    assert [(a["path"], a["status"]) for a in attempts] == [
        ("vectorstore", "error"),
        ("sdk", "error"),
    ]


def test_fallback_reason_is_persisted(tmp_path, tool_for):
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    msg = tool_for(url, reference_threshold=0.99).invoke(call("redis memory eviction"))
    (row,) = read_rows(url)
    details = row["retrieval_details"]
    assert details["fallback_reason"] == "filtered_vector_low_quality"
    assert details["retrieval_trace"]["fallbackReason"] == "filtered_vector_low_quality"
    assert (
        details["retrieval_trace"]["selectedAttempt"]
        == (msg.artifact["retrievalTrace"]["selectedAttempt"])
    )
    assert [a["name"] for a in details["retrieval_trace"]["attempts"]] == [
        "filtered",
        "unfiltered_retry",
    ]


def test_unwritable_database_never_fails_the_lookup(tmp_path, tool_for, caplog):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the database folder should be")
    tool = tool_for(f"sqlite:///{blocker / 'records.sqlite3'}")
    with caplog.at_level(logging.WARNING, logger="langchain_lookup_knowledge"):
        msg = tool.invoke(call("CoreDNS cannot resolve service names"))
    assert msg.status == "success"
    assert msg.artifact["found"] is True
    recording = msg.artifact["retrievalTrace"]["recording"]
    assert recording["status"] == "error"
    assert "not-a-directory" in recording["error"]
    assert any("recording the tool invocation failed" in r.getMessage() for r in caplog.records)


def test_raising_recorder_never_fails_the_lookup(sample_kb_store, real_embeddings):
    tool = create_lookup_knowledge_tool(
        sample_kb_store, embeddings=real_embeddings, recorder=RaisingRecorder()
    )
    msg = tool.invoke(call("alertmanager is not sending notifications"))
    assert msg.status == "success"
    assert msg.artifact["found"] is True
    assert msg.artifact["retrievalTrace"]["recording"] == {
        "status": "error",
        "error": "RuntimeError: records database is down (injected)",
    }


def test_recording_can_be_switched_off(tmp_path, tool_for):
    db = tmp_path / "records.sqlite3"
    msg = tool_for(f"sqlite:///{db}", record_invocations=False).invoke(call("etcd is slow"))
    assert msg.artifact["found"] is True
    assert msg.artifact["retrievalTrace"]["recording"] == {"status": "disabled"}
    assert not db.exists()


def test_sqlite_records_through_a_write_ahead_log(tmp_path, tool_for):
    """The insert commits to the WAL (no fsync per lookup); other readers see the row."""
    import sqlite3

    db = tmp_path / "records.sqlite3"
    msg = tool_for(f"sqlite:///{db}").invoke(call("etcd is slow"))
    assert msg.artifact["retrievalTrace"]["recording"]["status"] == "ok"
    with sqlite3.connect(db) as reader:
        assert reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert reader.execute("SELECT count(*) FROM tool_invocation").fetchone()[0] == 1
