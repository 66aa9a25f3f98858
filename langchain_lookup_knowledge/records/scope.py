"""Which records a report reads: a period, optionally one collection, and the tenant scope.

A record's ``scope`` is the filter its lookup ran under (``default_filter`` and the call's own
``filters``). Under an authoritative ``default_filter`` a report reads only the records whose
scope holds every field of it with the same value (:func:`scope_condition`): a tenant's report
shows that tenant's lookups, narrowed by a call's filter or not, and nothing else. Without one
it reads every scope.

Example:
    >>> from datetime import UTC, datetime
    >>> period = Period(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    >>> RecordFilter(period, scope={"tenant": "a"}).scope_key
    '{"tenant": "a"}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Boolean, Table, and_, or_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement

from langchain_lookup_knowledge.records.columns import scope_key
from langchain_lookup_knowledge.records.period import Period


class _HasText(FunctionElement[bool]):
    """``text`` occurs in ``column`` (case-sensitive on every dialect, unlike SQLite's LIKE)."""

    type = Boolean()
    inherit_cache = True
    name = "has_text"


@compiles(_HasText)
def _has_text(element: _HasText, compiler: SQLCompiler, **kw: Any) -> str:
    column, text = list(element.clauses)
    return f"(position({compiler.process(text, **kw)} in {compiler.process(column, **kw)}) > 0)"


@compiles(_HasText, "sqlite")
def _has_text_sqlite(element: _HasText, compiler: SQLCompiler, **kw: Any) -> str:
    column, text = list(element.clauses)
    return f"(instr({compiler.process(column, **kw)}, {compiler.process(text, **kw)}) > 0)"


def scope_condition(column: ColumnElement[Any], scope: Mapping[str, Any]) -> ColumnElement[bool]:
    """Rows whose ``scope`` (canonical JSON, :func:`~.columns.scope_key`) holds every field of
    ``scope`` with the same value: the scope itself, or a narrower one.

    A field is found as ``"name": value`` between ``{`` or ``, `` and ``,`` or ``}``: inside a
    JSON string every ``"`` is escaped, so such a match is always a whole field.
    """
    fields = []
    for name, value in scope.items():
        field = json.dumps(name, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)
        found = [_HasText(column, f"{a}{field}{b}") for a in ("{", ", ") for b in (",", "}")]
        fields.append(or_(*found))
    return or_(column == scope_key(scope), and_(*fields))


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
        if self.scope:
            conditions.append(scope_condition(table.c.scope, self.scope))
        return conditions
