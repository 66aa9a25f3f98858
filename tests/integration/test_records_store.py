"""What a record keeps and for how long: indexed columns and source rows beside
``retrieval_details``, ``record_query_text`` hash/none, retention, and old tables upgraded —
on SQLite and a real PostgreSQL server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, select, text

from langchain_lookup_knowledge import SqlInvocationRecorder, create_lookup_knowledge_tool
from langchain_lookup_knowledge.recording import (
    metadata,
    recorder_for,
    tool_invocation,
    tool_invocation_source,
)
from langchain_lookup_knowledge.records.privacy import query_hash
from langchain_lookup_knowledge.records.retention import prune_records
from langchain_lookup_knowledge.records.upgrade import backfill

CRASH = "pod keeps crashing and restarting"
CAKE = "recipe for chocolate cake"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> Iterator[str]:
    """An empty records database: a fresh SQLite file, or the PostgreSQL test server with the
    record tables dropped."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'records.sqlite3'}"
        return
    url = request.getfixturevalue("postgres_url")
    engine = create_engine(url)
    metadata.drop_all(engine)
    engine.dispose()
    yield url


@pytest.fixture
def lookups(sample_kb_store, real_embeddings):
    """Run real lookups on the sample knowledge base, recorded into ``url``."""

    def run(url: str, *questions: str, **updates) -> None:
        # A loaded test machine must not time rows out (record_timeout_s): read them all.
        updates = {"invocation_db_url": url, "record_timeout_s": 30.0, **updates}
        settings = sample_kb_store.model_copy(update=updates)
        tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
        for question in questions:
            tool.invoke({"query": question})
        assert recorder_for(settings).flush(30.0) == 0

    return run


def _rows(url: str) -> tuple[list[dict], list[dict]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(select(tool_invocation).order_by("id"))]
            sources = [dict(r._mapping) for r in conn.execute(select(tool_invocation_source))]
        return rows, sources
    finally:
        engine.dispose()


def test_rows_carry_indexed_columns_and_cited_sources(db_url, lookups, sample_kb_store):
    lookups(db_url, CRASH, CAKE)
    rows, sources = _rows(db_url)
    crash, cake = rows
    assert crash["collection"] == sample_kb_store.collection
    assert crash["scope"] == ""
    assert crash["query_hash"] == query_hash(CRASH)
    assert crash["relevance_level"] == "high"
    assert 0.5 < crash["relevance_score"] <= 1.0
    assert (cake["relevance_score"] or 0.0) < crash["relevance_score"]
    assert cake["evidence_status"] == "no_evidence"
    assert cake["record_version"] == 1
    cited = {s["source"] for s in sources if s["invocation_id"] == crash["id"]}
    assert "kubernetes/pod-crashloopbackoff.md" in cited
    assert all(s["evidence_blocks"] > 0 for s in sources if s["invocation_id"] == crash["id"])
    # the question nothing answers still says which documents it came nearest to
    nearest = [s for s in sources if s["invocation_id"] == cake["id"]]
    assert nearest
    assert all(s["evidence_blocks"] == 0 and not s["in_context"] for s in nearest)


@pytest.mark.parametrize("mode", ["hash", "none"])
def test_hash_and_none_keep_no_question_text(db_url, lookups, mode):
    question = "pod zqxwvu keeps crashing and restarting"  # zqxwvu: in no document
    lookups(db_url, question, question.upper(), record_query_text=mode)
    rows, _ = _rows(db_url)
    assert [r["query"] for r in rows] == ["", ""]
    details = [r["retrieval_details"] for r in rows]
    assert "zqxwvu" not in json.dumps(details).lower(), "the question is in retrieval_details"
    reasons = [
        reason
        for d in details
        for block in d["evidence_blocks"]
        for reason in block["hit_reasons"]
        if reason.startswith("query_term_coverage")
    ]
    boosts = [b["detail"] for d in details for e in d["rerank_trace"] for b in e["boosts"]]
    assert reasons, "the sample knowledge base matches some of the question's terms"
    assert all(":" not in r.partition(":")[2] for r in reasons), reasons  # counts, no terms
    assert all("crashing" not in b.lower() for b in boosts), boosts
    expected = query_hash(question) if mode == "hash" else None
    assert [r["query_hash"] for r in rows] == [expected, expected]  # repeats count as one
    assert details[0]["query_text"] == mode
    assert details[0]["evidence_blocks"]


@pytest.mark.parametrize("mode", ["hash", "none"])
def test_hash_and_none_keep_no_secret_of_the_question_in_the_decision_note(db_url, lookups, mode):
    """A secret pasted into a question is no KB word; the record keeps the decision's note and
    no word of the question."""
    secret = "zqkey-Hunter2pass"
    question = f"postgres replica lag {secret}"
    lookups(db_url, question, record_query_text=mode)
    (row,), _ = _rows(db_url)
    details = row["retrieval_details"]
    notes = details["retrieval_trace"]["notes"]
    decision = [n for n in notes if n.startswith("judgement:")]
    assert decision, notes  # the note is kept ...
    text = json.dumps(details).lower()
    for part in ("zqkey", "hunter2pass", r"\breplica\b"):  # ... nor a word of the question
        assert not re.search(part, text), (part, decision)
    assert "replication-lag" in text  # the knowledge base's own text stays


def _insert(url: str, ages_days: list[float]) -> None:
    recorder = SqlInvocationRecorder(url)
    now = datetime.now(UTC)
    with recorder.engine.begin() as conn:
        for i, age in enumerate(ages_days):
            created = now - timedelta(days=age)
            row_id = conn.execute(
                tool_invocation.insert().values(
                    tool_name="lookup_knowledge",
                    query=f"q{i}",
                    created_at=created,
                    found=True,
                    evidence_status="evidence",
                    retrieval_details={},
                    record_version=1,
                )
            ).inserted_primary_key[0]
            conn.execute(
                tool_invocation_source.insert().values(
                    invocation_id=row_id,
                    created_at=created,
                    source=f"d{i}.md",
                    evidence_blocks=1,
                    in_context=True,
                )
            )
    recorder.dispose()


def test_prune_deletes_only_older_records_and_their_sources(db_url):
    _insert(db_url, [200, 91, 89, 1])
    engine = create_engine(db_url)
    assert prune_records(engine, older_than=timedelta(days=90), batch=1) == 2
    engine.dispose()
    rows, sources = _rows(db_url)
    assert [r["query"] for r in rows] == ["q2", "q3"]
    assert sorted(s["source"] for s in sources) == ["d2.md", "d3.md"]


def test_retention_setting_prunes_when_the_recorder_writes(db_url, lookups):
    _insert(db_url, [40, 10])
    lookups(db_url, CRASH, records_retention_days=30)
    rows, _ = _rows(db_url)
    assert [r["query"] for r in rows] == ["q1", CRASH]


OLD_TABLE = """CREATE TABLE tool_invocation (
    id INTEGER PRIMARY KEY, tool_name VARCHAR(128) NOT NULL, query TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL, latency_ms FLOAT, found BOOLEAN NOT NULL,
    evidence_status VARCHAR(32) NOT NULL, retrieval_layer VARCHAR(16),
    retrieval_details JSON NOT NULL, error TEXT)"""


def test_a_table_from_before_the_columns_is_upgraded_and_backfilled(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    details = {
        "relevance_level": "low",
        "fallback_reason": "filtered_vector_low_quality",
        "query_transform": {"category_filter": "databases"},
        "retrieval_trace": {"attempts": [{"name": "filtered"}, {"name": "unfiltered_retry"}]},
        "evidence_blocks": [{"source": "databases/a.md", "similarity": 0.4}],
        "context_pack_summary": {"included_sources": ["databases/a.md"]},
    }
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(OLD_TABLE))
        conn.execute(
            text(
                "INSERT INTO tool_invocation VALUES (1, 'lookup_knowledge', 'Slow  DB', "
                "'2026-11-30 10:00:00', 12.0, 1, 'evidence', 'L1', :d, "
                "'sdk: TimeoutError: 10s')"
            ),
            {"d": json.dumps(details)},
        )
    engine.dispose()
    recorder = SqlInvocationRecorder(url)
    assert backfill(recorder.engine) == 1
    assert backfill(recorder.engine) == 0  # idempotent
    recorder.dispose()
    (row,), sources = _rows(url)
    assert row["query_hash"] == query_hash("slow db")
    assert row["error_kind"] == "TimeoutError"
    assert row["category_filter"] == "databases"
    assert row["fallback_reason"] == "filtered_vector_low_quality"
    assert row["scope"] is None
    assert row["collection"] is None
    assert [(s["source"], s["in_context"]) for s in sources] == [("databases/a.md", True)]


def test_a_table_without_the_relevance_score_gets_it_and_a_lookup_writes_it(tmp_path, lookups):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(OLD_TABLE))
    engine.dispose()
    lookups(url, CRASH)
    (row,), _ = _rows(url)
    assert 0.5 < row["relevance_score"] <= 1.0
    assert row["relevance_level"] == "high"
