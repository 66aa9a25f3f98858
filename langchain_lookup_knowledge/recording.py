"""Persist each lookup as a ``tool_invocation`` row (SQLite file by default, PostgreSQL by URL).

The table is created idempotently. A write failure is the caller's to report (the graph puts it in
the trace); it never fails a lookup.

Example:
    >>> recorder = SqlInvocationRecorder("sqlite:///invocations.sqlite3")  # doctest: +SKIP
    >>> recorder.record(result=result, details=details)  # doctest: +SKIP
    1
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    inspect,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.settings import LookupSettings

logger = logging.getLogger(__name__)

metadata = MetaData()
tool_invocation = Table(
    "tool_invocation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tool_name", String(128), nullable=False),
    Column("query", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("latency_ms", Float, nullable=True),
    Column("found", Boolean, nullable=False),
    Column("evidence_status", String(32), nullable=False),
    Column("retrieval_layer", String(16), nullable=True),
    Column("retrieval_details", JSON().with_variant(JSONB(), "postgresql"), nullable=False),
    Column("error", Text, nullable=True),
    # Indexed facts of retrieval_details, so the report aggregates in SQL (records/columns.py
    # derives them; rows written before they existed are filled in by records/upgrade.py).
    Column("record_version", Integer, nullable=True),
    Column("collection", String(255), nullable=True),
    Column("scope", Text, nullable=True),  # canonical JSON of the default_filter ("" if none)
    Column("query_hash", String(64), nullable=True),
    Column("relevance_level", String(16), nullable=True),
    Column("fallback_reason", String(64), nullable=True),
    Column("category_filter", String(255), nullable=True),
    Column("path_fallback", String(255), nullable=True),
    Column("error_kind", String(64), nullable=True),
    Index("ix_tool_invocation_created_at", "created_at"),
    Index("ix_tool_invocation_scope_created_at", "scope", "created_at"),
    Index("ix_tool_invocation_record_version", "record_version"),  # rows to backfill
)
tool_invocation_source = Table(
    "tool_invocation_source",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("invocation_id", Integer, nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("collection", String(255), nullable=True),
    Column("scope", Text, nullable=True),
    Column("source", String(1024), nullable=False),
    Column("evidence_blocks", Integer, nullable=False),  # 0: nearest candidate, not evidence
    Column("in_context", Boolean, nullable=False),
    Column("similarity", Float, nullable=True),
)
"""One row per document a lookup cited (or came nearest to, when it found no evidence)."""


def create_schema(engine: Engine) -> None:
    """Create ``tool_invocation`` if missing; safe to call again and from concurrent processes."""
    try:
        metadata.create_all(engine, checkfirst=True)
    except DBAPIError:
        # Another process created it between our check and our CREATE (PostgreSQL reports a
        # duplicate pg_type row): fine if the table is there now.
        if not inspect(engine).has_table(tool_invocation.name):
            raise
    from langchain_lookup_knowledge.records.upgrade import add_missing_columns

    add_missing_columns(engine)  # a table from before the indexed columns


def _sqlite_wal(dbapi_connection: Any, _record: Any) -> None:
    """Write-ahead log, synced at checkpoints: an insert no longer waits for an fsync.

    A committed row survives a crash of the process; only a power loss can take the last
    few. Readers never block the writer.
    """
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


class InvocationRecorder(Protocol):
    """Where lookups are recorded (one small protocol; swap in your own)."""

    def record(
        self,
        *,
        result: LookupResult,
        details: dict[str, Any],
        error: str | None = None,
        latency_ms: float | None = None,
    ) -> int | None:
        """Store one call; return its id."""
        ...


class SqlInvocationRecorder:
    """``tool_invocation`` rows through SQLAlchemy (SQLite, PostgreSQL, anything it speaks)."""

    def __init__(
        self,
        url: str,
        *,
        tool_name: str = "lookup_knowledge",
        connect_timeout_s: float = 5.0,
        collection: str | None = None,
        scope: dict[str, Any] | None = None,
        record_query_text: str = "full",
        retention_days: float | None = None,
    ) -> None:
        from langchain_lookup_knowledge.records.privacy import QueryTextPolicy
        from langchain_lookup_knowledge.records.retention import AutoPrune

        self.url = url
        self.tool_name = tool_name
        self.collection = collection
        self.scope = scope
        self.query_text = QueryTextPolicy(record_query_text)
        self._auto_prune = AutoPrune(retention_days, scope=scope)
        self._connect_timeout_s = connect_timeout_s
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @property
    def engine(self) -> Engine:
        """The engine, created (with the table) on first use."""
        with self._lock:
            if self._engine is None:
                url = make_url(self.url)
                kwargs: dict[str, Any] = {"pool_pre_ping": True}
                if url.get_backend_name() == "sqlite":
                    if url.database and url.database != ":memory:":
                        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
                    kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
                elif url.get_backend_name() == "postgresql":
                    kwargs["connect_args"] = {"connect_timeout": int(self._connect_timeout_s)}
                engine = create_engine(url, **kwargs)
                on_disk = url.database not in (None, "", ":memory:")
                if url.get_backend_name() == "sqlite" and on_disk:
                    event.listen(engine, "connect", _sqlite_wal)
                create_schema(engine)
                self._engine = engine
            return self._engine

    def dispose(self) -> None:
        """Close pooled connections (the engine is created again on next use)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    def record(
        self,
        *,
        result: LookupResult,
        details: dict[str, Any],
        error: str | None = None,
        latency_ms: float | None = None,
    ) -> int | None:
        """Insert one row; ``retrieval_details`` as JSON (content already cut)."""
        from langchain_lookup_knowledge.records.columns import indexed_values, source_rows

        if latency_ms is None:
            latency_ms = sum(a.latency_ms for a in result.retrieval_trace.attempts) or None
        query, details = self.query_text.apply(result.query, details)
        row = {
            "tool_name": self.tool_name,
            "query": query,
            "created_at": datetime.now(UTC),
            "latency_ms": latency_ms,
            "found": result.found,
            "evidence_status": result.evidence_status,
            "retrieval_layer": result.retrieval_layer,
            "retrieval_details": details,
            "error": error,
        }
        row |= indexed_values(
            details,
            error=error,
            collection=self.collection,
            scope=self.scope,
            query_hash=self.query_text.hash(result.query),
        )
        for attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    inserted = conn.execute(tool_invocation.insert().values(**row))
                    key = inserted.inserted_primary_key
                    row_id = int(key[0]) if key else None
                    sources = source_rows(row_id, row, details)
                    if sources:
                        conn.execute(tool_invocation_source.insert(), sources)
                self._auto_prune.maybe_prune(self.engine)
                return row_id
            except Exception as exc:
                # SQLite "database is locked" under concurrent writers: retry briefly.
                if "locked" in str(exc).lower() and attempt < 2:
                    time.sleep(0.05 * (attempt + 1))
                    continue
                raise
        return None

    def rows(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest rows, newest first (for tests and the CLI)."""
        with self.engine.connect() as conn:
            result = conn.execute(
                select(tool_invocation).order_by(tool_invocation.c.id.desc()).limit(limit)
            )
            return [dict(r._mapping) for r in result]


def recorder_for(settings: LookupSettings) -> SqlInvocationRecorder:
    """The recorder ``settings`` ask for (``invocation_db_url``, query text, retention)."""
    return SqlInvocationRecorder(
        settings.resolved_invocation_db_url,
        collection=settings.collection,
        scope=settings.default_filter,
        record_query_text=settings.record_query_text,
        retention_days=settings.records_retention_days,
    )
