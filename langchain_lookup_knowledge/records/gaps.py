"""The questions the knowledge base could not answer: ``no_evidence`` or low relevance.

The database groups them by ``query_hash`` (one row per distinct question, with its count);
only the latest record of each of the ``max_questions`` most asked distinct questions is read
(for its text, L0 hints and nearest documents). ``grouping`` then folds phrasings of one missing
document together.

Example:
    >>> from sqlalchemy import create_engine
    >>> from langchain_lookup_knowledge.records.database import create_schema
    >>> engine = create_engine("sqlite://")
    >>> create_schema(engine)
    >>> gap_questions(engine, RecordFilter(Period.parse("7d"))).questions
    []
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, and_, case, func, or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import ColumnElement

from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.records.tables import tool_invocation as t
from langchain_lookup_knowledge.records.tables import tool_invocation_source as s

__all__ = ["GapQuestion", "GapQuestions", "Period", "gap_condition", "gap_questions"]
MAX_QUESTIONS = 500
"""Distinct gap questions read per report (the most asked ones); the rest are counted."""
_ID_CHUNK = 500


def gap_condition() -> ColumnElement[bool]:
    """A lookup the knowledge base did not answer well: no evidence, or low relevance.

    A lookup that failed (a missing collection, Milvus down) is not a gap of the knowledge
    base: it is counted under ``errors``, not listed as a question to write a document for.
    """
    return and_(
        t.c.error_kind.is_(None),
        or_(
            t.c.evidence_status == "no_evidence",
            and_(t.c.found.is_(True), t.c.relevance_level == "low"),
        ),
    )


@dataclass
class GapQuestion:
    """One distinct unanswered question (or, without its text, one bucket of them)."""

    key: str  # query_hash, or "near:<source>" when the records keep no hash
    text: str | None
    count: int
    first_seen: str
    last_seen: str
    l0_hints: dict[str, Counter[str]] = field(default_factory=dict)
    nearest: dict[str, float] = field(default_factory=dict)  # source -> best similarity


@dataclass
class GapQuestions:
    """What the database said about the period's gap questions."""

    lookups: int  # gap lookups in the period
    distinct: int  # distinct questions (hashes) among them
    unhashed: int  # gap lookups recorded with record_query_text=none
    questions: list[GapQuestion]


_HINT_KEYS = {
    "domains": "l0_domains",
    "keywords": "l0_matched_keywords",
    "titles": "l0_matched_titles",
    "entities": "l0_entities",
}


def _hints(details: dict[str, Any]) -> dict[str, Counter[str]]:
    return {
        name: Counter(str(v) for v in details.get(key) or []) for name, key in _HINT_KEYS.items()
    }


def _nearest(details: dict[str, Any]) -> dict[str, float]:
    nearest: dict[str, float] = {}
    for block in details.get("evidence_blocks") or []:
        source, sim = str(block.get("source") or ""), block.get("similarity")
        if source:
            nearest[source] = max(nearest.get(source, 0.0), float(sim or 0.0))
    if not nearest:
        for near in details.get("nearest_sources") or []:
            source = str(near.get("source") or "")
            if source:
                nearest[source] = float(near.get("similarity") or 0.0)
    return nearest


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return str(value)


def gap_questions(
    engine: Engine, records: RecordFilter, *, max_questions: int = MAX_QUESTIONS
) -> GapQuestions:
    """The period's gap questions, most asked first (at most ``max_questions`` distinct)."""
    where = [gap_condition(), *records.where(t)]
    count = func.count().label("n")
    by_hash = _buckets(
        t.c.query_hash,
        count,
        func.max(t.c.id).label("latest_id"),
        t.c.created_at,
        where=[t.c.query_hash.is_not(None), *where],
        order_by=[count.desc(), func.max(t.c.id).desc()],
        limit=max_questions,
    )
    with engine.connect() as conn:
        totals = conn.execute(
            select(
                func.count(),
                func.count(func.distinct(t.c.query_hash)),
                func.coalesce(func.sum(case((t.c.query_hash.is_(None), 1), else_=0)), 0),
            ).where(*where)
        ).one()
        grouped = conn.execute(by_hash).all()
        details_of: dict[int, tuple[str, dict[str, Any]]] = {}
        ids = [row.latest_id for row in grouped]
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start : start + _ID_CHUNK]
            for row in conn.execute(
                select(t.c.id, t.c.query, t.c.retrieval_details).where(t.c.id.in_(chunk))
            ):
                details = row.retrieval_details if isinstance(row.retrieval_details, dict) else {}
                details_of[row.id] = (row.query, details)
        unhashed = _unhashed_by_nearest(conn, records) if totals[2] else []
    questions = []
    for row in grouped:
        text, details = details_of.get(row.latest_id, ("", {}))
        questions.append(
            GapQuestion(
                key=str(row.query_hash),
                text=text or None,
                count=int(row.n),
                first_seen=_iso(row.first_seen),
                last_seen=_iso(row.last_seen),
                l0_hints=_hints(details),
                nearest=_nearest(details),
            )
        )
    return GapQuestions(
        lookups=int(totals[0]),
        distinct=int(totals[1]),
        unhashed=int(totals[2]),
        questions=questions + unhashed,
    )


def _buckets(
    key: Any,
    count: Any,
    best: Any,
    created_at: Any,
    *,
    where: Sequence[Any],
    order_by: Sequence[Any],
    limit: int,
) -> Select[Any]:
    """One row per ``key`` among the rows ``where`` selects: ``count`` and ``best`` (the
    aggregates the caller labels), ``first_seen`` and ``last_seen`` (``created_at``)."""
    return (
        select(
            key,
            count,
            best,
            func.min(created_at).label("first_seen"),
            func.max(created_at).label("last_seen"),
        )
        .where(*where)
        .group_by(key)
        .order_by(*order_by)
        .limit(limit)
    )


def _unhashed_by_nearest(conn: Any, records: RecordFilter) -> list[GapQuestion]:
    """Gap lookups recorded without text or hash: one bucket per document they came nearest to
    (the only thing they have in common that the records still know)."""
    gap_ids = select(t.c.id).where(t.c.query_hash.is_(None), gap_condition(), *records.where(t))
    count = func.count(func.distinct(s.c.invocation_id)).label("n")
    query = _buckets(
        s.c.source,
        count,
        func.max(s.c.similarity).label("best"),
        s.c.created_at,
        where=[s.c.invocation_id.in_(gap_ids)],
        order_by=[count.desc()],
        limit=MAX_QUESTIONS,
    )
    return [
        GapQuestion(
            key=f"near:{row.source}",
            text=None,
            count=int(row.n),
            first_seen=_iso(row.first_seen),
            last_seen=_iso(row.last_seen),
            nearest={str(row.source): float(row.best or 0.0)},
        )
        for row in conn.execute(query)
    ]
