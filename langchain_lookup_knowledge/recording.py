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

import json
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime
from typing import Any, NotRequired, Protocol, runtime_checkable

from typing_extensions import TypedDict, Unpack

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.records.columns import indexed_values
from langchain_lookup_knowledge.records.database import create_schema
from langchain_lookup_knowledge.records.losses import (
    LOSS_FILE_NAME,
)
from langchain_lookup_knowledge.records.privacy import QueryTextPolicy
from langchain_lookup_knowledge.records.tables import (
    metadata,
    tool_invocation,
    tool_invocation_loss,
    tool_invocation_source,
)
from langchain_lookup_knowledge.records.writer import (
    MAX_BACKLOG,
    TRANSIENT_ERRORS,
    RecordingNotDone,
    RecordWriter,
    short_error,
)
from langchain_lookup_knowledge.redaction import redact, redact_value
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "MAX_BACKLOG",
    "InvocationCall",
    "InvocationRecorder",
    "QueuedInvocationRecorder",
    "RecordingNotDone",
    "SqlInvocationRecorder",
    "create_schema",
    "metadata",
    "recorder_for",
    "tool_invocation",
    "tool_invocation_loss",
    "tool_invocation_source",
]


class InvocationCall(TypedDict):
    """One lookup call as a recorder takes it: the keyword arguments of ``record``/``enqueue``.

    ``details`` is the call's ``retrieval_details``; ``error`` the retrieval error's message and
    ``latency_ms`` the lookup's time, when known; ``scope`` the filter the lookup ran under
    (``default_filter`` and the call's own ``filters``; absent: the recorder's ``scope``). A
    recorder of your own may spell them out
    (``def record(self, *, result, details, error=None, latency_ms=None, scope=None)``).
    """

    result: LookupResult
    details: dict[str, Any]
    error: NotRequired[str | None]
    latency_ms: NotRequired[float | None]
    scope: NotRequired[dict[str, Any] | None]


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


class SqlInvocationRecorder(RecordWriter):
    """``tool_invocation`` rows through SQLAlchemy (SQLite, PostgreSQL, anything it speaks).

    :meth:`enqueue` hands a row to the writer and returns at once (the lookup's default);
    :meth:`record` waits for it. A lookup never waits more than ``timeout_s`` for its row: one
    writer thread inserts, with driver timeouts of the same size (SQLite busy timeout,
    PostgreSQL connect, lock and statement timeouts). A failed or timed-out write opens a
    circuit for ``retry_after_s``: meanwhile rows wait in memory and lookups do not touch the
    database; the writer retries on its own and writes the waiting rows as soon as the database
    answers.

    At most ``max_waiting`` rows are held unwritten (queued, being written or waiting); a new
    row past it is dropped: the newest, so the lookup whose row is lost is the one told (its
    trace: ``recording.row = "dropped"``), the rows kept stay one contiguous stretch, and the
    writer's queue is never reached into. Every drop is counted (the trace's
    ``recording.dropped``), logged, and persisted as a ``tool_invocation_loss`` row with the next
    write; rows still unwritten at exit are counted the same way, or, when the database cannot
    take the count, appended to ``loss_file``.
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
        max_waiting: int = MAX_BACKLOG,
        loss_file: str | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.query_text = QueryTextPolicy(record_query_text)
        super().__init__(
            url,
            connect_timeout_s=connect_timeout_s,
            collection=collection,
            scope=scope,
            retention_days=retention_days,
            timeout_s=timeout_s,
            retry_after_s=retry_after_s,
            max_waiting=max_waiting,
            loss_file=loss_file,
        )

    def record(self, **call: Unpack[InvocationCall]) -> int | None:
        """Insert one row within ``timeout_s``; ``retrieval_details`` as JSON (content cut).

        Raises :class:`RecordingNotDone` when the row was not written in time (the lookup goes on).
        """
        future = self._submit([self._admit(self._row(call))], admit=True)
        try:
            ids = future.result(timeout=self.timeout_s)
        except FutureTimeout:
            self._trip(f"no answer within {self.timeout_s:g}s")
            msg = (
                f"records database did not answer within {self.timeout_s:g}s; "
                "the write goes on in the background"
            )
            raise RecordingNotDone(msg, row="pending") from None
        except TRANSIENT_ERRORS as exc:
            msg = (
                f"records database failed ({short_error(exc)}); row kept in memory "
                f"({self.backlog} waiting), retried in {self.retry_after_s:g}s"
            )
            raise RecordingNotDone(msg, row="kept") from None
        except Exception as exc:
            raise RecordingNotDone(f"row not written: {short_error(exc)}", row="dropped") from None
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
            self._submit([self._admit(self._row(call))], admit=True)
            return
        self._submit([call], made=False, admit=True)

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
            scope=call.get("scope", self.scope),
            query_hash=self.query_text.hash(result.query),
        )
        return row


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
        "loss_file": str(settings.data_dir / LOSS_FILE_NAME),
    }
    key = json.dumps([url, options], sort_keys=True, default=str)  # the recorder's arguments
    with _RECORDERS_LOCK:
        recorder = _RECORDERS.get(key)
        if recorder is None:
            recorder = SqlInvocationRecorder(url, **options)
            _RECORDERS[key] = recorder
        return recorder
