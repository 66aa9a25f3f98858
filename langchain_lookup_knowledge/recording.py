"""Persist each lookup as a ``tool_invocation`` row (SQLite file by default, PostgreSQL by URL).

The tables (:mod:`~langchain_lookup_knowledge.records.tables`, re-exported here with
``create_schema``) are created idempotently. A write failure is the caller's to report (the graph
puts it in the trace); it never fails a lookup.

Example:
    >>> recorder = SqlInvocationRecorder("sqlite:///invocations.sqlite3")  # doctest: +SKIP
    >>> recorder.record(result=result, details=details)  # doctest: +SKIP
    1
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import queue
import threading
import time
import weakref
from collections import deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from typing import Any, NotRequired, Protocol, runtime_checkable

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlAlchemyTimeoutError
from typing_extensions import TypedDict, Unpack

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.records.columns import indexed_values, source_rows
from langchain_lookup_knowledge.records.database import create_schema as create_schema
from langchain_lookup_knowledge.records.database import open_engine
from langchain_lookup_knowledge.records.privacy import QueryTextPolicy
from langchain_lookup_knowledge.records.retention import AutoPrune
from langchain_lookup_knowledge.records.tables import metadata as metadata
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source
from langchain_lookup_knowledge.redaction import describe_exception, redact, redact_value
from langchain_lookup_knowledge.settings import LookupSettings

logger = logging.getLogger(__name__)

MAX_BACKLOG = 10_000
"""Rows kept in memory while the records database is unavailable (the oldest go first)."""


class InvocationCall(TypedDict):
    """One lookup call as a recorder takes it: the keyword arguments of ``record``/``enqueue``.

    ``details`` is the call's ``retrieval_details``; ``error`` the retrieval error's message and
    ``latency_ms`` the lookup's time, when known. A recorder of your own may spell them out
    (``def record(self, *, result, details, error=None, latency_ms=None)``).
    """

    result: LookupResult
    details: dict[str, Any]
    error: NotRequired[str | None]
    latency_ms: NotRequired[float | None]


class InvocationRecorder(Protocol):
    """Where lookups are recorded (one small protocol; swap in your own)."""

    def record(self, **call: Unpack[InvocationCall]) -> int | None:
        """Store one call; return its id."""
        ...


@runtime_checkable
class QueuedInvocationRecorder(InvocationRecorder, Protocol):
    """A recorder that can also take a row without the lookup waiting for its write.

    The lookup graph calls :meth:`enqueue` unless ``LookupSettings.record_wait`` is on; a recorder
    without it (the plain :class:`InvocationRecorder`) is always waited for.
    """

    def enqueue(self, **call: Unpack[InvocationCall]) -> None:
        """Hand one call to the writer and return at once (the write goes on in the background)."""
        ...


class RecordingNotDone(Exception):  # noqa: N818 - a status, not a failure of the lookup
    """A row was not written within the lookup's time; ``row`` says what became of it.

    ``pending``: the write goes on in the background; ``kept``: the records database is
    unavailable, the row waits in memory and is written when it is back; ``dropped``: the row
    itself cannot be written (the database is fine). The trace shows it as
    ``recording: {"status": "error", "error": ..., "row": ...}``.
    """

    def __init__(self, message: str, *, row: str) -> None:
        super().__init__(message)
        self.row = row


_TRANSIENT = (OperationalError, InterfaceError, SqlAlchemyTimeoutError, OSError)


def _short(exc: BaseException) -> str:
    return describe_exception(exc, limit=240)


class SqlInvocationRecorder:
    """``tool_invocation`` rows through SQLAlchemy (SQLite, PostgreSQL, anything it speaks).

    :meth:`enqueue` hands a row to the writer and returns at once (the lookup's default);
    :meth:`record` waits for it. A lookup never waits more than ``timeout_s`` for its row: one
    writer thread inserts, with driver timeouts of the same size (SQLite busy timeout,
    PostgreSQL connect, lock and statement timeouts). A failed or timed-out write opens a
    circuit for ``retry_after_s``: meanwhile rows wait in memory (at most :data:`MAX_BACKLOG`)
    and lookups do not touch the database; the writer retries on its own and writes the waiting
    rows as soon as the database answers.
    """

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
        timeout_s: float = 2.0,
        retry_after_s: float = 30.0,
    ) -> None:
        self.url = url
        self.tool_name = tool_name
        self.collection = collection
        self.scope = scope
        self.query_text = QueryTextPolicy(record_query_text)
        self._auto_prune = AutoPrune(retention_days, scope=scope)
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self._connect_timeout_s = min(connect_timeout_s, max(timeout_s, 2.0))
        self._engine: Engine | None = None
        self._lock = threading.Lock()
        self._state = threading.RLock()
        # (rows, their future, made: rows as written, or calls to make them from)
        self._jobs: queue.SimpleQueue[tuple[list[Any], Future[list[int | None]], bool]] = (
            queue.SimpleQueue()
        )
        self._writer: threading.Thread | None = None
        self._backlog: deque[dict[str, Any]] = deque()
        self._dropped = 0
        self._inflight = 0
        self._open_until = 0.0
        self._last_error = ""
        _LIVE.add(self)

    @property
    def engine(self) -> Engine:
        """The engine, created (with the table) on first use."""
        with self._lock:
            if self._engine is None:
                engine = open_engine(
                    self.url, timeout_s=self.timeout_s, connect_timeout_s=self._connect_timeout_s
                )
                self._engine = engine
            return self._engine

    def dispose(self) -> None:
        """Close pooled connections (the engine is created again on next use)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    @property
    def backlog(self) -> int:
        """Rows not written yet: waiting in memory for the database, or being written."""
        with self._state:
            return len(self._backlog) + self._inflight

    def record(self, **call: Unpack[InvocationCall]) -> int | None:
        """Insert one row within ``timeout_s``; ``retrieval_details`` as JSON (content cut).

        Raises :class:`RecordingNotDone` when the row was not written in time (the lookup goes on).
        """
        future = self._submit([self._admit(self._row(call))])
        try:
            ids = future.result(timeout=self.timeout_s)
        except FutureTimeout:
            self._trip(f"no answer within {self.timeout_s:g}s")
            msg = (
                f"records database did not answer within {self.timeout_s:g}s; "
                "the write goes on in the background"
            )
            raise RecordingNotDone(msg, row="pending") from None
        except _TRANSIENT as exc:
            msg = (
                f"records database failed ({_short(exc)}); row kept in memory "
                f"({self.backlog} waiting), retried in {self.retry_after_s:g}s"
            )
            raise RecordingNotDone(msg, row="kept") from None
        except Exception as exc:
            raise RecordingNotDone(f"row not written: {_short(exc)}", row="dropped") from None
        return ids[0]

    def enqueue(self, **call: Unpack[InvocationCall]) -> None:
        """Hand one row to the writer thread and return without waiting for the write.

        The row has the same durability as one :meth:`record` gave up waiting for: a failed
        write opens the circuit and keeps the row in memory (logged), a row the database
        refuses is logged and dropped, and rows still waiting get one bounded try at exit.

        The row is made (query policy, secrets masked, index columns) on the writer thread,
        not in the lookup; a call whose row cannot be made is logged and dropped, as a row the
        database refuses. ``call``'s values are read then: the lookup never changes them.

        Raises :class:`RecordingNotDone` (``row="kept"``) while the circuit is open.
        """
        with self._state:
            circuit_open = self._open_until > time.monotonic()
        if circuit_open:  # the row waits in memory (raised as kept)
            self._submit([self._admit(self._row(call))])
            return
        self._submit([call], made=False)

    def _row(self, call: InvocationCall) -> dict[str, Any]:
        """The ``tool_invocation`` row of one call: the query policy applied, secrets masked."""
        result, details = call["result"], call["details"]
        error, latency_ms = call.get("error"), call.get("latency_ms")
        if latency_ms is None:
            latency_ms = sum(a.latency_ms for a in result.retrieval_trace.attempts) or None
        query, details = self.query_text.apply(result.query, details)
        details = redact_value(details)
        error = redact(error) if error else error
        row = {
            "tool_name": self.tool_name,
            "query": redact(query),
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
        return row

    def _admit(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` if the database may be tried now; else it waits in memory (raised as kept)."""
        with self._state:
            wait = self._open_until - time.monotonic()
            if wait > 0:
                self._keep([row])
                msg = (
                    f"records database unavailable ({self._last_error}); not tried again for "
                    f"{wait:.0f}s, row kept in memory ({len(self._backlog)} waiting)"
                )
                raise RecordingNotDone(msg, row="kept")
        return row

    def flush(self, timeout_s: float | None = None) -> int:
        """Try to write the waiting rows now (ignoring the circuit); return how many still wait."""
        with self._state:
            rows = list(self._backlog)
            self._backlog.clear()
            if not rows and not self._inflight:
                return 0
        # Queued after the writes in flight: waiting for it waits for them too.
        with contextlib.suppress(Exception):
            self._submit(rows).result(timeout=timeout_s or self.timeout_s)
        return self.backlog

    # --- the writer thread --------------------------------------------------------------
    def _submit(self, rows: list[Any], *, made: bool = True) -> Future[list[int | None]]:
        """Queue ``rows`` for the writer (``made=False``: calls, made into rows there)."""
        future: Future[list[int | None]] = Future()
        with self._state:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(
                    target=self._write_forever, name="lookup-recorder", daemon=True
                )
                self._writer.start()
            self._inflight += len(rows)
        self._jobs.put((rows, future, made))
        return future

    def _write_forever(self) -> None:
        while True:
            try:
                rows, future, made = self._jobs.get(timeout=self.retry_after_s)
            except queue.Empty:
                rows, future, made = [], None, True
            if future is not None:
                made_rows = rows if made else self._made_rows(rows, future)
                if made_rows:
                    self._write_job(made_rows, future)
                elif not future.done():  # a barrier (flush): everything queued before it is done
                    future.set_result([])
            self._drain_backlog()

    def _made_rows(
        self, calls: list[InvocationCall], future: Future[list[int | None]]
    ) -> list[dict[str, Any]]:
        """The rows of queued calls; none (the job failed, logged) if one cannot be made."""
        try:
            return [self._row(call) for call in calls]
        except Exception as exc:
            logger.warning("tool_invocation row not made: %s", _short(exc))
            with self._state:
                self._inflight -= len(calls)
            future.set_exception(exc)
            return []

    def _write_job(self, rows: list[dict[str, Any]], future: Future[list[int | None]]) -> None:
        try:
            ids = self._insert(rows)
        except _TRANSIENT as exc:
            self._trip(_short(exc))
            with self._state:
                self._keep(rows)
                self._inflight -= len(rows)
            future.set_exception(exc)
        except Exception as exc:  # the rows themselves are bad: dropped, reported
            logger.warning("tool_invocation row not written: %s", _short(exc))
            with self._state:
                self._inflight -= len(rows)
            future.set_exception(exc)
        else:
            with self._state:
                self._open_until = 0.0
                self._inflight -= len(rows)
            future.set_result(ids)

    def _drain_backlog(self) -> None:
        while True:
            with self._state:
                if not self._backlog or self._open_until > time.monotonic():
                    return
                batch = [self._backlog.popleft() for _ in range(min(500, len(self._backlog)))]
            try:
                self._insert(batch)
            except Exception as exc:
                self._trip(_short(exc))
                self._keep(batch, front=True)
                return
            logger.info("wrote %d tool_invocation rows that waited for the database", len(batch))

    def _insert(self, rows: list[dict[str, Any]]) -> list[int | None]:
        try:
            return self._insert_once(rows)
        except DBAPIError as exc:
            if not _is_missing_table(exc):
                raise
            # The table was dropped under us (a reset, a retention job): create it again.
            create_schema(self.engine)
            return self._insert_once(rows)

    def _insert_once(self, rows: list[dict[str, Any]]) -> list[int | None]:
        engine = self.engine
        ids: list[int | None] = []
        with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                ms = max(1, int(self.timeout_s * 1000))
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
            for row in rows:
                key = conn.execute(tool_invocation.insert().values(**row)).inserted_primary_key
                row_id = int(key[0]) if key else None
                sources = source_rows(row_id, row, row["retrieval_details"])
                if sources:
                    conn.execute(tool_invocation_source.insert(), sources)
                ids.append(row_id)
        self._auto_prune.maybe_prune(engine)
        return ids

    def _trip(self, reason: str) -> None:
        with self._state:
            self._open_until = time.monotonic() + self.retry_after_s
            self._last_error = reason
        logger.warning(
            "records database %s unavailable (%s): lookups skip it for %gs",
            redact(self.url),
            reason,
            self.retry_after_s,
        )

    def _keep(self, rows: list[dict[str, Any]], *, front: bool = False) -> None:
        with self._state:
            if front:
                self._backlog.extendleft(reversed(rows))
            else:
                self._backlog.extend(rows)
            while len(self._backlog) > MAX_BACKLOG:
                self._backlog.popleft()
                self._dropped += 1

    def rows(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest rows, newest first (for tests and the CLI)."""
        with self.engine.connect() as conn:
            result = conn.execute(
                select(tool_invocation).order_by(tool_invocation.c.id.desc()).limit(limit)
            )
            return [dict(r._mapping) for r in result]


_RECORDERS: dict[str, SqlInvocationRecorder] = {}
_RECORDERS_LOCK = threading.Lock()


def recorder_for(settings: LookupSettings) -> SqlInvocationRecorder:
    """The recorder ``settings`` ask for (``invocation_db_url``, query text, retention), one
    per configuration in a process.

    Sharing it means one engine (one pool) per database, and a database found down by one
    lookup is not tried again by every other lookup of the process.
    """
    url = settings.resolved_invocation_db_url
    options: dict[str, Any] = {
        "collection": settings.collection,
        "scope": settings.default_filter,
        "record_query_text": settings.record_query_text,
        "retention_days": settings.records_retention_days,
        "timeout_s": settings.record_timeout_s,
        "retry_after_s": settings.record_retry_after_s,
    }
    key = json.dumps([url, options], sort_keys=True, default=str)  # the recorder's arguments
    with _RECORDERS_LOCK:
        recorder = _RECORDERS.get(key)
        if recorder is None:
            recorder = SqlInvocationRecorder(url, **options)
            _RECORDERS[key] = recorder
        return recorder


def _is_missing_table(exc: DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return "no such table" in text or ("relation" in text and "does not exist" in text)


_LIVE: weakref.WeakSet[SqlInvocationRecorder] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """Rows still waiting get one bounded chance (all databases at once) when the process ends."""
    waiting = [r for r in list(_LIVE) if r.backlog]
    threads = [threading.Thread(target=r.flush, daemon=True) for r in waiting]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + max((r.timeout_s for r in waiting), default=0.0) + 0.5
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for recorder in waiting:
        if recorder.backlog:
            logger.warning(
                "%d tool_invocation rows lost: records database %s unavailable",
                recorder.backlog,
                redact(recorder.url),
            )
