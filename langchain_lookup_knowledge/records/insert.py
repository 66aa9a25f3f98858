"""Rows into the records database: inserts within a time bound, losses counted with them, and the
exit count of rows never written.

Example:
    >>> RowInserter("sqlite:///:memory:").backlog
    0
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from langchain_lookup_knowledge.records.columns import scope_key, source_rows
from langchain_lookup_knowledge.records.database import create_schema, open_engine
from langchain_lookup_knowledge.records.losses import (
    AT_EXIT,
    LossCounter,
    append_loss_file,
)
from langchain_lookup_knowledge.records.retention import AutoPrune
from langchain_lookup_knowledge.records.tables import (
    tool_invocation,
    tool_invocation_loss,
    tool_invocation_source,
)
from langchain_lookup_knowledge.redaction import redact

logger = logging.getLogger(__name__)


__all__ = ["RowInserter", "is_missing_table_error"]

logger = logging.getLogger("langchain_lookup_knowledge.recording")


class RowInserter:
    """The database side of recording: one engine (created on first use), inserts of
    ``tool_invocation`` rows with their sources and any pending loss counts in one transaction,
    a table dropped under it created again. Every instance is counted at process exit
    (:func:`_settle_losses`)."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: float = 5.0,
        collection: str | None = None,
        scope: dict[str, Any] | None = None,
        retention_days: float | None = None,
        timeout_s: float = 2.0,
        loss_file: str | None = None,
    ) -> None:
        self.url = url
        self.collection = collection
        self.scope = scope
        self._auto_prune = AutoPrune(retention_days, scope=scope)
        self.timeout_s = timeout_s
        self._connect_timeout_s = min(connect_timeout_s, max(timeout_s, 2.0))
        self._engine: Engine | None = None
        self._lock = threading.Lock()
        self.loss_file = loss_file
        self.losses = LossCounter()
        self._write_lock = threading.Lock()  # held by a write: the exit count waits for it
        self._closing = False  # set at exit: no write starts after the unwritten rows are counted
        _LIVE.add(self)

    @property
    def backlog(self) -> int:
        """Rows not written yet (none here; a writer that holds rows says how many)."""
        return 0

    def flush(self, timeout_s: float | None = None) -> int:
        """Write what waits now; return how many rows still wait (none here)."""
        return 0

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

    def _insert(self, rows: list[dict[str, Any]]) -> list[int | None]:
        try:
            return self._insert_once(rows)
        except DBAPIError as exc:
            if not is_missing_table_error(exc):
                raise
            # The table was dropped under us (a reset, a retention job): create it again.
            create_schema(self.engine)
            return self._insert_once(rows)

    def _insert_once(self, rows: list[dict[str, Any]]) -> list[int | None]:
        with self._write_lock:
            if self._closing:  # counted as lost already: written now, they would count twice
                raise OSError("the process is exiting; the rows are counted as lost")
            losses = self.losses.take()  # persisted with these rows, or put back
            try:
                ids = self._insert_rows(rows, losses)
            except BaseException:
                self.losses.restore(losses)
                raise
            return ids

    def _loss_rows(self, losses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        where = {"collection": self.collection, "scope": scope_key(self.scope)}
        return [loss | where for loss in losses]

    def _insert_rows(
        self, rows: list[dict[str, Any]], losses: list[dict[str, Any]]
    ) -> list[int | None]:
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
            if losses:
                conn.execute(tool_invocation_loss.insert(), self._loss_rows(losses))
        self._auto_prune.maybe_prune(engine)
        return ids

    def rows(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest rows, newest first (for tests and the CLI)."""
        with self.engine.connect() as conn:
            result = conn.execute(
                select(tool_invocation).order_by(tool_invocation.c.id.desc()).limit(limit)
            )
            return [dict(r._mapping) for r in result]


def is_missing_table_error(exc: DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return "no such table" in text or ("relation" in text and "does not exist" in text)


_LIVE: weakref.WeakSet[RowInserter] = weakref.WeakSet()


def _persist_losses(recorder: RowInserter, losses: list[dict[str, Any]]) -> bool:
    """Write loss counts alone, within the recorder's time bound; whether they were written."""
    done = threading.Event()

    def write() -> None:
        with contextlib.suppress(Exception):
            with recorder.engine.begin() as conn:
                conn.execute(tool_invocation_loss.insert(), recorder._loss_rows(losses))
            done.set()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    thread.join(recorder.timeout_s + 0.5)
    return done.is_set()


def _settle_losses(recorder: RowInserter) -> None:
    """At exit: count the rows not written, persist every pending count, and say so."""
    recorder._closing = True
    counted_alone = recorder._write_lock.acquire(timeout=recorder.timeout_s)
    lost = recorder.backlog  # a write in flight has ended (unless it hangs past timeout_s)
    if counted_alone:
        recorder._write_lock.release()
    if lost:
        recorder.losses.add(lost, AT_EXIT)
    losses = recorder.losses.take()
    if not losses:
        return
    url = redact(recorder.url)
    if _persist_losses(recorder, losses):
        where = f"counted in {tool_invocation_loss.name} of {url}"
    elif recorder.loss_file:
        append_loss_file(
            Path(recorder.loss_file),
            recorder._loss_rows(losses),
            database=url,
        )
        where = f"records database {url} unreachable: the count is kept in {recorder.loss_file}"
    else:
        where = f"records database {url} unreachable: the count is kept nowhere else"
    if lost:
        logger.warning("%d tool_invocation rows lost at exit (not written); %s", lost, where)
    dropped = sum(loss["rows_lost"] for loss in losses) - lost
    if dropped:
        logger.warning("%d tool_invocation rows dropped (records queue full); %s", dropped, where)


@atexit.register
def _flush_at_exit() -> None:
    """Rows still waiting get one bounded chance (all databases at once) when the process ends;
    what is still not written then is counted and reported (:func:`_settle_losses`)."""
    recorders = list(_LIVE)
    waiting = [r for r in recorders if r.backlog]
    threads = [threading.Thread(target=r.flush, daemon=True) for r in waiting]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + max((r.timeout_s for r in waiting), default=0.0) + 0.5
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for recorder in recorders:
        _settle_losses(recorder)
