"""Deleting old records: ``lookup-knowledge records prune --older-than 90d`` and the
``records_retention_days`` setting (the recorder prunes at most once an hour).

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> prune_records(engine, older_than=timedelta(days=90))
    0
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from langchain_lookup_knowledge.records.scope import scope_condition
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source

logger = logging.getLogger(__name__)
PRUNE_BATCH = 20_000
AUTO_PRUNE_EVERY_S = 3600.0


def prune_records(
    engine: Engine,
    *,
    older_than: timedelta,
    now: datetime | None = None,
    scope: Mapping[str, Any] | None = None,
    batch: int = PRUNE_BATCH,
) -> int:
    """Delete records (and their source rows) created before ``now - older_than``; return how
    many lookups went. Under a ``scope`` (an authoritative ``default_filter``) only that scope's
    records go: one tenant's retention never deletes another's. Deletes in batches so writers
    never wait long for the lock."""
    cutoff = (now or datetime.now(UTC)) - older_than
    conditions = [tool_invocation.c.created_at < cutoff]
    if scope:  # the scope's records, narrowed by a call's own filter or not
        conditions.append(scope_condition(tool_invocation.c.scope, scope))
    deleted = 0
    while True:
        with engine.begin() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    select(tool_invocation.c.id).where(*conditions).limit(batch)
                )
            ]
            if not ids:
                break
            conn.execute(
                delete(tool_invocation_source).where(
                    tool_invocation_source.c.invocation_id.in_(ids)
                )
            )
            conn.execute(delete(tool_invocation).where(tool_invocation.c.id.in_(ids)))
            deleted += len(ids)
    if not scope:
        with engine.begin() as conn:  # source rows whose lookup is already gone
            conn.execute(
                delete(tool_invocation_source).where(tool_invocation_source.c.created_at < cutoff)
            )
    return deleted


class AutoPrune:
    """The recorder's retention: prune after a write, at most once per ``every_s``; never fails
    the write (a failed prune is logged and tried again later)."""

    def __init__(
        self,
        retention_days: float | None,
        every_s: float = AUTO_PRUNE_EVERY_S,
        scope: Mapping[str, Any] | None = None,
    ) -> None:
        self.scope = scope
        self.retention = timedelta(days=retention_days) if retention_days else None
        self.every_s = every_s
        self._last = float("-inf")
        self._lock = threading.Lock()

    def maybe_prune(self, engine: Engine) -> int | None:
        """Prune if due; the number of lookups deleted, None when not due or disabled."""
        if self.retention is None:
            return None
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.every_s:
                return None
            self._last = now
        try:
            return prune_records(engine, older_than=self.retention, scope=self.scope)
        except Exception as exc:
            logger.warning("pruning old tool_invocation records failed: %s", exc)
            return None
