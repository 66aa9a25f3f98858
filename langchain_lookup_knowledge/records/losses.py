"""Records a recorder could not keep: counted, persisted where the records are, and read back.

A recorder holds at most ``max_waiting`` rows that are not written yet; a row that would go past
it is dropped (the newest: the lookup it belongs to is told, in its trace). Those rows, and the
rows still unwritten when the process ends, are counted here and persisted as
``tool_invocation_loss`` rows in the records database; when that database cannot be reached at
exit the count is appended to a JSON-lines file beside the other local data
(``<data_dir>/records_lost.jsonl``). ``report`` and ``records status`` read both.

Example:
    >>> counter = LossCounter()
    >>> counter.add(3, QUEUE_FULL)
    3
    >>> [(row["rows_lost"], row["reason"]) for row in counter.take()]
    [(3, 'queue full')]
    >>> counter.total, counter.take()
    (3, [])
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from langchain_lookup_knowledge.records.columns import scope_key
from langchain_lookup_knowledge.records.scope import scope_condition
from langchain_lookup_knowledge.records.tables import tool_invocation_loss
from langchain_lookup_knowledge.redaction import redact

__all__ = [
    "AT_EXIT",
    "LOSS_FILE_NAME",
    "QUEUE_FULL",
    "LossCounter",
    "append_loss_file",
    "describe_losses",
    "read_losses",
]

LOSS_FILE_NAME = "records_lost.jsonl"
"""Under ``data_dir``: loss counts the records database could not take at exit."""
QUEUE_FULL = "queue full"
"""A row dropped because ``max_waiting`` rows were already waiting to be written."""
AT_EXIT = "not written at exit"
"""A row still waiting when the process ended (the records database did not take it)."""


class LossCounter:
    """Thread-safe count of the rows one recorder lost: pending (not persisted yet) and in all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, list[Any]] = {}  # reason -> [rows, first, last]
        self.total = 0
        self.since: datetime | None = None

    def add(self, rows: int, reason: str) -> int:
        """Count ``rows`` lost for ``reason`` now; return the total lost by this recorder."""
        now = datetime.now(UTC)
        with self._lock:
            entry = self._pending.setdefault(reason, [0, now, now])
            entry[0] += rows
            entry[2] = now
            self.total += rows
            self.since = self.since or now
            return self.total

    def take(self) -> list[dict[str, Any]]:
        """The pending counts as ``tool_invocation_loss`` values (forgotten here: persist them,
        or :meth:`restore` them)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        now = datetime.now(UTC)
        return [
            {
                "recorded_at": now,
                "first_lost_at": first,
                "last_lost_at": last,
                "rows_lost": rows,
                "reason": reason,
            }
            for reason, (rows, first, last) in pending.items()
        ]

    def restore(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Put back counts :meth:`take` gave that could not be persisted."""
        with self._lock:
            for row in rows:
                entry = self._pending.setdefault(
                    row["reason"], [0, row["first_lost_at"], row["last_lost_at"]]
                )
                entry[0] += row["rows_lost"]
                entry[1] = min(entry[1], row["first_lost_at"])
                entry[2] = max(entry[2], row["last_lost_at"])

    def summary(self) -> dict[str, Any] | None:
        """``{"dropped": n, "droppedSince": iso}`` once a row was lost (for the trace)."""
        with self._lock:
            if not self.total or self.since is None:
                return None
            return {"dropped": self.total, "droppedSince": self.since.isoformat()}


def append_loss_file(path: Path, rows: Sequence[Mapping[str, Any]], **where: Any) -> None:
    """Append loss counts to the JSON-lines file ``path`` (the records database unreachable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for row in rows:
            values = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}
            handle.write(json.dumps(values | where, sort_keys=True) + "\n")


def _file_losses(
    path: Path | None, since: datetime | None, database: str | None, scope: str | None
) -> list[dict[str, Any]]:
    if path is None or not path.is_file():
        return []
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
            last = datetime.fromisoformat(row["last_lost_at"])
            first = datetime.fromisoformat(row["first_lost_at"])
            rows = int(row["rows_lost"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a crash: not a count
        if database is not None and row.get("database") != database:
            continue  # another records database's count
        if scope is not None and row.get("scope") != scope:
            continue
        if since is None or last >= since:
            found.append({"rows": rows, "first": first})
    return found


def read_losses(
    engine: Engine | None,
    *,
    since: datetime | None = None,
    scope: Mapping[str, Any] | None = None,
    loss_file: Path | None = None,
) -> dict[str, Any]:
    """Rows lost since ``since`` (all: ``None``): ``{"rows", "since", "kept_in"}``.

    ``kept_in`` names where the counts were read: the table, and ``loss_file`` when it holds
    counts the database could not take.
    """
    total, first = 0, None
    kept_in = []
    if engine is not None:
        query = select(
            func.coalesce(func.sum(tool_invocation_loss.c.rows_lost), 0),
            func.min(tool_invocation_loss.c.first_lost_at),
        )
        if since is not None:
            query = query.where(tool_invocation_loss.c.last_lost_at >= since)
        if scope:
            query = query.where(scope_condition(tool_invocation_loss.c.scope, scope))
        with engine.connect() as conn:
            rows, earliest = conn.execute(query).one()
        total += int(rows or 0)
        first = _aware(earliest)
        kept_in.append(tool_invocation_loss.name)
    database = redact(engine.url.render_as_string(hide_password=False)) if engine else None
    from_file = _file_losses(loss_file, since, database, scope_key(scope) if scope else None)
    if from_file:
        total += sum(r["rows"] for r in from_file)
        earliest_file = min(r["first"] for r in from_file)
        first = min(first, earliest_file) if first else earliest_file
        kept_in.append(str(loss_file))
    return {
        "rows": total,
        "since": first.isoformat() if first and total else None,
        "kept_in": kept_in,
    }


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)  # SQLite drops the zone


def describe_losses(losses: Mapping[str, Any]) -> str | None:
    """The line ``report`` and ``records status`` print (None: nothing was lost).

    Example:
        >>> describe_losses({"rows": 12, "since": "2026-12-01T10:00:00+00:00"})[:50]
        '12 records dropped since 2026-12-01T10:00:00+00:00'
    """
    if not losses.get("rows"):
        return None
    return (
        f"{losses['rows']} records dropped since {losses['since']} (never written: the records "
        "queue was full or the records database unreachable)"
    )
