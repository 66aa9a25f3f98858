"""The records writer: one thread that inserts rows, a bounded backlog, a circuit, exit counts.

A lookup hands its row to :class:`RecordWriter` and returns; the writer inserts it with driver
timeouts, and while the database is down keeps rows in memory (at most ``max_waiting``) and
retries on its own. Rows still unwritten when the process ends get one bounded try; what is
still not written is counted as lost and persisted (``tool_invocation_loss``, or a file).

Example:
    >>> RecordingNotDone("no answer", row="pending").row
    'pending'
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlAlchemyTimeoutError

from langchain_lookup_knowledge.records.insert import RowInserter
from langchain_lookup_knowledge.records.losses import (
    QUEUE_FULL,
)
from langchain_lookup_knowledge.redaction import describe_exception, redact

logger = logging.getLogger(__name__)


__all__ = ["MAX_BACKLOG", "TRANSIENT_ERRORS", "RecordWriter", "RecordingNotDone", "short_error"]

logger = logging.getLogger("langchain_lookup_knowledge.recording")

MAX_BACKLOG = 10_000
"""Rows a recorder holds unwritten (queued, being written, or waiting for the database) by
default; a row past it is dropped, counted and reported (:mod:`.records.losses`)."""


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


TRANSIENT_ERRORS = (OperationalError, InterfaceError, SqlAlchemyTimeoutError, OSError)


def short_error(exc: BaseException) -> str:
    return describe_exception(exc, limit=240)


class RecordWriter(RowInserter):
    """Rows inserted by one writer thread, within ``timeout_s``; a failed or timed-out write
    opens a circuit for ``retry_after_s`` while rows wait in memory (at most ``max_waiting``:
    past it the newest row is dropped, counted and reported). Subclasses make the rows
    (:meth:`_row`)."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: float = 5.0,
        collection: str | None = None,
        scope: dict[str, Any] | None = None,
        retention_days: float | None = None,
        timeout_s: float = 2.0,
        retry_after_s: float = 30.0,
        max_waiting: int = MAX_BACKLOG,
        loss_file: str | None = None,
    ) -> None:
        super().__init__(
            url,
            connect_timeout_s=connect_timeout_s,
            collection=collection,
            scope=scope,
            retention_days=retention_days,
            timeout_s=timeout_s,
            loss_file=loss_file,
        )
        self.retry_after_s = retry_after_s
        self._state = threading.RLock()
        # (rows, their future, made: rows as written, or calls to make them from)
        self._jobs: queue.SimpleQueue[tuple[list[Any], Future[list[int | None]], bool]] = (
            queue.SimpleQueue()
        )
        self._writer: threading.Thread | None = None
        self._backlog: deque[dict[str, Any]] = deque()
        self.max_waiting = max_waiting
        self._warned_at = 0.0
        self._inflight = 0
        self._open_until = 0.0
        self._last_error = ""

    def _row(self, call: Any) -> dict[str, Any]:
        """The row a queued call is written as (made on the writer thread)."""
        raise NotImplementedError

    @property
    def backlog(self) -> int:
        """Rows not written yet: waiting in memory for the database, or being written."""
        with self._state:
            return len(self._backlog) + self._inflight

    def _admit(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` if the database may be tried now; else it waits in memory (raised as kept)."""
        with self._state:
            wait = self._open_until - time.monotonic()
            if wait > 0:
                self._refuse_when_full()
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
    def _refuse_when_full(self) -> None:
        """Drop the new row (raised as ``dropped``) when ``max_waiting`` rows are unwritten."""
        waiting = len(self._backlog) + self._inflight
        if waiting < self.max_waiting:
            return
        total = self.losses.add(1, QUEUE_FULL)
        since = self.losses.since.isoformat(timespec="seconds") if self.losses.since else "now"
        msg = (
            f"records queue full ({waiting} rows not written yet, at most {self.max_waiting}); "
            f"this row dropped, {total} dropped since {since}"
        )
        now = time.monotonic()
        if now - self._warned_at > 60 or total == 1:  # a line a minute, not one per lookup
            self._warned_at = now
            logger.warning("%s (records database %s)", msg, redact(self.url))
        raise RecordingNotDone(msg, row="dropped")

    def _submit(
        self, rows: list[Any], *, made: bool = True, admit: bool = False
    ) -> Future[list[int | None]]:
        """Queue ``rows`` for the writer (``made=False``: calls, made into rows there);
        ``admit``: new rows, refused when ``max_waiting`` are unwritten already."""
        future: Future[list[int | None]] = Future()
        with self._state:
            if admit:
                self._refuse_when_full()
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
        self, calls: list[Any], future: Future[list[int | None]]
    ) -> list[dict[str, Any]]:
        """The rows of queued calls; none (the job failed, logged) if one cannot be made."""
        try:
            return [self._row(call) for call in calls]
        except Exception as exc:
            logger.warning("tool_invocation row not made: %s", short_error(exc))
            with self._state:
                self._inflight -= len(calls)
            future.set_exception(exc)
            return []

    def _write_job(self, rows: list[dict[str, Any]], future: Future[list[int | None]]) -> None:
        try:
            ids = self._insert(rows)
        except TRANSIENT_ERRORS as exc:
            self._trip(short_error(exc))
            with self._state:
                self._keep(rows)
                self._inflight -= len(rows)
            future.set_exception(exc)
        except Exception as exc:  # the rows themselves are bad: dropped, reported
            logger.warning("tool_invocation row not written: %s", short_error(exc))
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
                self._trip(short_error(exc))
                self._keep(batch, front=True)
                return
            logger.info("wrote %d tool_invocation rows that waited for the database", len(batch))

    def _trip(self, reason: str) -> None:
        with self._state:
            self._open_until = time.monotonic() + self.retry_after_s
            self._last_error = reason
        if self._closing:
            return
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
            # Admission keeps backlog + in flight within max_waiting; rows moved here were in
            # flight. Should that ever not hold, the newest go, counted as the others.
            while len(self._backlog) > self.max_waiting:
                self._backlog.pop()
                self.losses.add(1, QUEUE_FULL)
