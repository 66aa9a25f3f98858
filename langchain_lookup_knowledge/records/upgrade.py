"""Old ``tool_invocation`` tables keep working: missing columns and indexes are added, and rows
written before them get their indexed columns and source rows filled in (in batches).

Rows from before have no ``collection`` or ``scope`` (the recorder did not know them): a report
for one collection or one tenant leaves them out; an unscoped report counts them.

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> backfill(engine)
    0
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import inspect, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from langchain_lookup_knowledge.records.columns import indexed_values, source_rows
from langchain_lookup_knowledge.records.privacy import query_hash
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source

logger = logging.getLogger(__name__)
BACKFILL_BATCH = 2000


def add_missing_columns(engine: Engine) -> list[str]:
    """``ALTER TABLE ... ADD COLUMN`` for each column of the current table shape that is missing;
    create missing indexes. Returns the columns added."""
    existing = {c["name"] for c in inspect(engine).get_columns(tool_invocation.name)}
    added = []
    for column in tool_invocation.columns:
        if column.name in existing:
            continue
        kind = column.type.compile(dialect=engine.dialect)
        try:
            with engine.begin() as conn:
                conn.execute(
                    text(f'ALTER TABLE {tool_invocation.name} ADD COLUMN "{column.name}" {kind}')
                )
            added.append(column.name)
        except DBAPIError:  # another process added it first
            columns = inspect(engine).get_columns(tool_invocation.name)
            if column.name not in {c["name"] for c in columns}:
                raise
    for index in [*tool_invocation.indexes, *tool_invocation_source.indexes]:
        try:
            index.create(engine, checkfirst=True)
        except DBAPIError:
            logger.debug("index %s created concurrently", index.name)
    return added


def backfill(engine: Engine, *, batch: int = BACKFILL_BATCH) -> int:
    """Fill in the indexed columns of rows that lack them; return how many rows were filled."""
    table = tool_invocation
    filled = 0
    while True:
        with engine.begin() as conn:
            rows = conn.execute(
                select(
                    table.c.id,
                    table.c.query,
                    table.c.created_at,
                    table.c.error,
                    table.c.retrieval_details,
                )
                .where(table.c.record_version.is_(None))
                .limit(batch)
            ).all()
            if not rows:
                return filled
            sources: list[dict[str, Any]] = []
            for row in rows:
                details = row.retrieval_details if isinstance(row.retrieval_details, dict) else {}
                values = indexed_values(
                    details,
                    error=row.error,
                    collection=None,
                    scope=None,
                    query_hash=query_hash(row.query) if row.query else None,
                )
                values["scope"] = None  # unknown, not "no scope"
                conn.execute(update(table).where(table.c.id == row.id).values(**values))
                sources += source_rows(row.id, {"created_at": row.created_at}, details)
            if sources:
                conn.execute(tool_invocation_source.insert(), sources)
            filled += len(rows)
