"""Volume and health of lookups, aggregated by the database (SQLAlchemy Core, one query each).

Nothing here loads rows: every figure is a ``GROUP BY`` over the indexed columns, and the latency
percentiles are nearest-rank percentiles computed with window functions (SQLite 3.25+ and
PostgreSQL alike), so memory does not grow with the number of records.

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> period = Period.parse("7d")
    >>> health_totals(engine, RecordFilter(period))["lookups"]
    0
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, and_, case, cast, func, literal, select
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import ColumnElement

from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.records.tables import tool_invocation as t

__all__ = ["Period", "RecordFilter", "daily_series", "health_totals", "latency_percentiles"]


def day_of(engine: Engine, column: Any) -> ColumnElement[str]:
    """``YYYY-MM-DD`` (UTC) of a timestamp column, in the database's own dialect."""
    if engine.dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.substr(cast(column, t.c.query.type), 1, 10)  # SQLite stores ISO text


def _count_if(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _health_columns() -> list[Any]:
    return [
        func.count().label("lookups"),
        _count_if(t.c.found.is_(True)).label("found"),
        _count_if(t.c.relevance_level == "high").label("high"),
        _count_if(t.c.relevance_level == "medium").label("medium"),
        _count_if(and_(t.c.relevance_level == "low", t.c.found.is_(True))).label("low"),
        _count_if(t.c.evidence_status == "no_evidence").label("no_evidence"),
        _count_if(t.c.fallback_reason.is_not(None)).label("retried"),
        _count_if(t.c.path_fallback.is_not(None)).label("path_fallbacks"),
        _count_if(t.c.error_kind.is_not(None)).label("errors"),
    ]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _grouped(engine: Engine, column: Any, where: list[Any]) -> dict[str, int]:
    query = (
        select(column, func.count())
        .where(column.is_not(None), *where)
        .group_by(column)
        .order_by(func.count().desc())
    )
    with engine.connect() as conn:
        return {str(key): int(n) for key, n in conn.execute(query)}


def health_totals(
    engine: Engine, records: RecordFilter, daily: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Totals of the period: volume, found rate, relevance mix, retries, path fallbacks, errors.

    ``daily`` (:func:`daily_series` of the same records) saves a pass: the counts are its sums.
    """
    where = records.where(t)
    if daily is None:
        with engine.connect() as conn:
            row = conn.execute(select(*_health_columns()).where(*where)).one()._mapping
        totals = {key: int(row[key] or 0) for key in row}
    else:
        keys = [c.name for c in _health_columns()]
        totals = {key: sum(int(day[key]) for day in daily) for key in keys}
    lookups = totals["lookups"]
    return {
        "lookups": lookups,
        "found": totals["found"],
        "found_rate": _rate(totals["found"], lookups),
        "relevance": {
            "high": totals["high"],
            "medium": totals["medium"],
            "low": totals["low"],
            "no_evidence": totals["no_evidence"],
        },
        "retried": totals["retried"],
        "retry_rate": _rate(totals["retried"], lookups),
        "retry_reasons": _grouped(engine, t.c.fallback_reason, where),
        "path_fallbacks": totals["path_fallbacks"],
        "path_fallback_reasons": _grouped(engine, t.c.path_fallback, where),
        "errors": totals["errors"],
        "errors_by_kind": _grouped(engine, t.c.error_kind, where),
        "latency_ms": latency_percentiles(engine, records),
    }


def _percentile_query(engine: Engine, records: RecordFilter, by_day: bool) -> Any:
    day = day_of(engine, t.c.created_at) if by_day else literal("all")
    partition = day if by_day else None
    ranked = (
        select(
            day.label("day"),
            t.c.latency_ms.label("ms"),
            func.row_number().over(partition_by=partition, order_by=t.c.latency_ms).label("rn"),
            func.count().over(partition_by=partition).label("n"),
        )
        .where(t.c.latency_ms.is_not(None), *records.where(t))
        .subquery()
    )

    def nearest_rank(percent: int) -> ColumnElement[Any]:
        rank = cast((ranked.c.n * percent + 99) / 100, Integer)  # ceil(n * p), integers only
        return func.max(case((ranked.c.rn == rank, ranked.c.ms)))

    return select(
        ranked.c.day, nearest_rank(50).label("p50"), nearest_rank(95).label("p95")
    ).group_by(ranked.c.day)


def latency_percentiles(engine: Engine, records: RecordFilter) -> dict[str, float | None]:
    """Nearest-rank p50 and p95 of the whole lookup's latency (ms) over the period."""
    with engine.connect() as conn:
        row = conn.execute(_percentile_query(engine, records, by_day=False)).first()
    if row is None:
        return {"p50": None, "p95": None}
    return {"p50": _ms(row.p50), "p95": _ms(row.p95)}


def _ms(value: Any) -> float | None:
    return round(float(value), 1) if value is not None else None


def daily_series(engine: Engine, records: RecordFilter) -> list[dict[str, Any]]:
    """One entry per day with lookups (UTC): the health columns and that day's p50/p95."""
    day = day_of(engine, t.c.created_at)
    query = (
        select(day.label("day"), *_health_columns())
        .where(*records.where(t))
        .group_by(day)
        .order_by(day)
    )
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(query)]
        latency = {
            r.day: (r.p50, r.p95)
            for r in conn.execute(_percentile_query(engine, records, by_day=True))
        }
    series = []
    for row in rows:
        p50, p95 = latency.get(row["day"], (None, None))
        lookups = int(row["lookups"])
        counts = {key: int(row[key] or 0) for key in row if key != "day"}
        entry: dict[str, Any] = {"day": str(row["day"]), **counts}
        entry |= {
            "found_rate": _rate(counts["found"], lookups),
            "retry_rate": _rate(counts["retried"], lookups),
            "latency_p50_ms": _ms(p50),
            "latency_p95_ms": _ms(p95),
        }
        series.append(entry)
    return series
