"""Category routing: how often a category's L0 filter had to be retried without it.

A lookup whose L0 hints name one category searches that category first; when the filtered
result is empty (``filtered_vector_no_evidence``) or weak (``filtered_vector_low_quality``) it
retries unfiltered. A category retried in most of its lookups is one where the L0 domain
misleads (a folder name that questions mention but whose documents do not answer them).

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> category_routing(engine, RecordFilter(Period.parse("7d")))
    []
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.engine import Engine

from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.records.tables import tool_invocation as t

__all__ = ["MISLEADS_AT", "Period", "category_routing"]
MISLEADS_AT = 0.5
"""A category whose filter is retried in more than this share of its lookups misleads."""


def category_routing(engine: Engine, records: RecordFilter) -> list[dict[str, Any]]:
    """Per L0 filter category: filtered lookups, retries by reason, retry rate, ``misleads``."""

    def count(reason: str) -> Any:
        return func.sum(case((t.c.fallback_reason == reason, 1), else_=0))

    lookups = func.count().label("lookups")
    query = (
        select(
            t.c.category_filter,
            lookups,
            count("filtered_vector_low_quality").label("low_quality"),
            count("filtered_vector_no_evidence").label("empty"),
        )
        .where(t.c.category_filter.is_not(None), *records.where(t))
        .group_by(t.c.category_filter)
        .order_by(lookups.desc())
    )
    rows = []
    with engine.connect() as conn:
        for row in conn.execute(query):
            n, low, empty = int(row.lookups), int(row.low_quality or 0), int(row.empty or 0)
            rate = round((low + empty) / n, 4) if n else 0.0
            rows.append(
                {
                    "category": row.category_filter,
                    "filtered_lookups": n,
                    "retried_low_quality": low,
                    "retried_empty": empty,
                    "retry_rate": rate,
                    "misleads": rate > MISLEADS_AT,
                }
            )
    rows.sort(key=lambda r: (-r["retry_rate"], -r["filtered_lookups"]))
    return rows
