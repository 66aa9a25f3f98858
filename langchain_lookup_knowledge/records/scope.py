"""Which records a report reads: a period, optionally one collection, and the tenant scope.

Under an authoritative ``default_filter`` a report reads only the records written under that same
filter (the ``scope`` column): a tenant's report shows that tenant's lookups and nothing else.
Without one it reads every scope.

Example:
    >>> from datetime import UTC, datetime
    >>> period = Period(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    >>> RecordFilter(period, scope={"tenant": "a"}).scope_key
    '{"tenant": "a"}'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table
from sqlalchemy.sql.elements import ColumnElement

from langchain_lookup_knowledge.records.columns import scope_key
from langchain_lookup_knowledge.records.period import Period


@dataclass(frozen=True)
class RecordFilter:
    """The rows of ``tool_invocation`` (or ``tool_invocation_source``) a report covers."""

    period: Period
    collection: str | None = None
    scope: Mapping[str, Any] | None = None

    @property
    def scope_key(self) -> str | None:
        """The ``scope`` value rows must have; None: any scope (no ``default_filter``)."""
        return scope_key(self.scope) if self.scope else None

    def where(self, table: Table) -> list[ColumnElement[bool]]:
        """The WHERE conditions on ``table`` (both record tables have these columns)."""
        conditions = [
            table.c.created_at >= self.period.since,
            table.c.created_at < self.period.until,
        ]
        if self.collection is not None:
            conditions.append(table.c.collection == self.collection)
        if self.scope_key is not None:
            conditions.append(table.c.scope == self.scope_key)
        return conditions
