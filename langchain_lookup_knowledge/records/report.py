"""``lookup-knowledge report``: one JSON-ready object from the invocation records.

Top-level keys of :func:`build_report` (and ``--json``), stable for dashboards:

- ``schema``: ``"lookup-knowledge/report@1"``; ``generated_at``; ``period`` {``since``, ``until``}
  (ISO, UTC; ``until`` excluded); ``collection`` (or null: all); ``scope`` (the authoritative
  ``default_filter`` the report is limited to, or null: every scope); ``database`` (URL, no
  password).
- ``totals``: ``lookups``, ``found``, ``found_rate``, ``relevance`` {``high``, ``medium``,
  ``low`` (found, low relevance), ``no_evidence``}, ``retried``, ``retry_rate``,
  ``retry_reasons`` {reason: n}, ``path_fallbacks``, ``path_fallback_reasons`` {reason: n},
  ``errors``, ``errors_by_kind`` {kind: n}, ``latency_ms`` {``p50``, ``p95``}.
- ``daily``: one entry per UTC day: ``day``, ``lookups``, ``found``, ``high``, ``medium``,
  ``low``, ``no_evidence``, ``retried``, ``path_fallbacks``, ``errors``, ``found_rate``,
  ``retry_rate``, ``latency_p50_ms``, ``latency_p95_ms``.
- ``gaps``: ``lookups`` (no evidence or low relevance), ``distinct_questions``, ``read``
  (distinct questions grouped), ``method`` (meaning | terms | exact | nearest_document), ``why``,
  ``groups``: [{``label``, ``count``, ``distinct_questions``, ``examples``,
  ``nearest_documents`` [{``source``, ``lookups``, ``best_similarity``}], ``l0_hints``
  {``domains``|``keywords``|``titles``|``entities``: {value: n}}, ``first_seen``,
  ``last_seen``}].
- ``documents``: ``most_cited`` [{``source``, ``lookups``, ``evidence_blocks``,
  ``in_context``}], ``catalog`` (``ok`` or why it could not be read), ``catalog_collection``
  (``--collection``, else the one collection the period's records come from, else the
  configured one), ``catalog_documents``,
  ``never_cited`` [{``source``, ``title``, ``category``}], ``never_cited_by_category``.
- ``routing``: [{``category``, ``filtered_lookups``, ``retried_low_quality``, ``retried_empty``,
  ``retry_rate``, ``misleads``}], most retried first.
- ``query_text``: {``full``, ``hash``, ``none``: lookups recorded under each mode} and
  ``limitations``: what this report cannot show because of them.
- ``records_lost``: {``rows``, ``since``, ``kept_in``}: rows recorders dropped (their queue full)
  or could not write before their process ended, in the period (:mod:`.losses`).
- ``timings_ms``: what each part took.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.embeddings import Embeddings
from sqlalchemy import case, event, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from langchain_lookup_knowledge.embeddings.choice import english_only_embedder
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.records.collections import require_known_collection
from langchain_lookup_knowledge.records.database import open_engine
from langchain_lookup_knowledge.records.documents import (
    catalog_in_scope,
    cited_sources,
    most_cited,
    never_cited,
)
from langchain_lookup_knowledge.records.gaps import gap_questions
from langchain_lookup_knowledge.records.grouping import group_questions
from langchain_lookup_knowledge.records.losses import LOSS_FILE_NAME, read_losses
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.queries import daily_series, health_totals
from langchain_lookup_knowledge.records.routing import category_routing
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.records.tables import tool_invocation as t
from langchain_lookup_knowledge.records.upgrade import backfill
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.settings import LookupSettings

SCHEMA = "lookup-knowledge/report@1"
GroupBy = Literal["auto", "meaning", "terms"]
CatalogSource = list[CatalogEntry] | None


def query_text_modes(engine: Engine, records: RecordFilter) -> dict[str, int]:
    """How many lookups of the period were recorded under each ``record_query_text`` mode."""

    def count(condition: Any) -> Any:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    query = select(
        count(t.c.query != ""),
        count((t.c.query == "") & t.c.query_hash.is_not(None)),
        count((t.c.query == "") & t.c.query_hash.is_(None)),
    ).where(*records.where(t))
    with engine.connect() as conn:
        full, hashed, none = conn.execute(query).one()
    return {"full": int(full), "hash": int(hashed), "none": int(none)}


def _sqlite_for_aggregates(dbapi_connection: Any, _record: Any) -> None:
    """A report's SQLite connections: GROUP BY and window sorts in memory, a larger page cache
    and memory-mapped reads (the defaults spill a million-row sort to temporary files)."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA temp_store=MEMORY")
        cursor.execute("PRAGMA cache_size=-65536")  # 64 MiB
        cursor.execute("PRAGMA mmap_size=268435456")  # 256 MiB
    finally:
        cursor.close()


def _sole_collection(engine: Engine, records: RecordFilter) -> str | None:
    """The one collection the period's records come from (None: none or several)."""
    query = (
        select(t.c.collection)
        .where(t.c.collection.is_not(None), *records.where(t))
        .group_by(t.c.collection)
        .limit(2)
    )
    with engine.connect() as conn:
        names = [row[0] for row in conn.execute(query)]
    return names[0] if len(names) == 1 else None


def limitations(modes: dict[str, int]) -> list[str]:
    """What the report cannot show, given the modes the period's records were written under."""
    notes = []
    if modes["hash"]:
        notes.append(
            f"{modes['hash']} lookups were recorded with record_query_text=hash: their "
            "questions have no text, so they are counted per identical question (case and "
            "spacing aside) but not grouped by meaning or terms, and show no examples."
        )
    if modes["none"]:
        notes.append(
            f"{modes['none']} lookups were recorded with record_query_text=none: no text and "
            "no hash, so repeats of one question cannot be counted; their gaps are grouped "
            "only by the documents they came nearest to."
        )
    return notes


def _grouping_choice(
    settings: LookupSettings, group_by: GroupBy, embeddings: Embeddings | None
) -> tuple[Literal["meaning", "terms"], Embeddings | None, str]:
    if group_by == "terms":
        return "terms", None, "by shared terms, as asked (--group-by terms)"
    if embeddings is None:
        try:
            from langchain_lookup_knowledge.embeddings.factory import build_embeddings

            embeddings = build_embeddings(settings)
        except Exception as exc:
            reason = describe_exception(exc, limit=200)
            return "terms", None, f"by shared terms: the configured embedder failed ({reason})"
    return (
        "meaning",
        embeddings,
        f"by meaning with the configured embedder ({settings.embedding_provider}): phrasings "
        "of one missing runbook rarely share their terms; cosine to a group's centroid >= "
        "0.6 joins it.",
    )


def build_report(
    settings: LookupSettings,
    period: Period,
    *,
    collection: str | None = None,
    engine: Engine | None = None,
    group_by: GroupBy = "auto",
    embeddings: Embeddings | None = None,
    catalog: CatalogSource = None,
) -> dict[str, Any]:
    """The report over the records of ``settings`` (see the module doc for its keys).

    ``catalog`` defaults to the store's catalog of ``collection`` (or ``settings.collection``);
    ``default_filter`` limits everything to its scope.

    Example:
        >>> report = build_report(LookupSettings(), Period.parse("7d"))  # doctest: +SKIP
        >>> report["gaps"]["groups"][0]["examples"]  # doctest: +SKIP
        ['how do I rotate the etcd CA', 'etcd CA rotation']
    """
    timings: dict[str, float] = {}
    opened = None  # the engine this call opened, disposed of when done
    if engine is None:
        engine = opened = open_engine(settings.resolved_invocation_db_url)
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_for_aggregates)
    try:
        started = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal started
            now = time.perf_counter()
            timings[name] = round((now - started) * 1000, 1)
            started = now

        backfill(engine)
        lap("backfill")
        if collection is not None:
            require_known_collection(engine, settings, collection)
        records = RecordFilter(period, collection=collection, scope=settings.default_filter)
        daily = daily_series(engine, records)
        lap("daily")
        totals = health_totals(engine, records, daily)
        lap("totals")
        gaps = gap_questions(engine, records)
        lap("gap_questions")
        method, embedder, why = _grouping_choice(settings, group_by, embeddings)
        english_only = english_only_embedder(settings)
        grouping = group_questions(
            gaps.questions,
            method=method,
            embeddings=embedder,
            english_only_embedder=english_only,
            why=why,
        )
        lap("gap_grouping")
        cited = most_cited(engine, records)
        catalog_collection = collection or _sole_collection(engine, records) or settings.collection
        in_catalog = replace(records, collection=catalog_collection)  # never cited: within it
        catalog_status = "ok"
        if catalog is None:
            try:
                target = settings.model_copy(update={"collection": catalog_collection})
                catalog = catalog_in_scope(target)
                if not catalog:
                    catalog_status = f"empty: collection {catalog_collection!r} has no catalog"
            except Exception as exc:
                reason = describe_exception(exc, limit=200, with_type=False)
                catalog_status = f"unavailable: {reason}"
                catalog = []
        unused = never_cited(catalog, cited_sources(engine, in_catalog))
        lap("documents")
        routing = category_routing(engine, records)
        modes = query_text_modes(engine, records)
        lap("routing")
        lost = lost_records(engine, settings, since=period.since)
    finally:
        if opened is not None:
            opened.dispose()
    return {
        "schema": SCHEMA,
        "generated_at": datetime.now(UTC).isoformat(),
        "period": {"since": period.since.isoformat(), "until": period.until.isoformat()},
        "collection": collection,
        "scope": settings.default_filter,
        "database": _hide_password(str(engine.url)),
        "totals": totals,
        "daily": daily,
        "gaps": {
            "lookups": gaps.lookups,
            "distinct_questions": gaps.distinct,
            "read": len(gaps.questions),
            "method": grouping.method,
            "why": grouping.why,
            "groups": [group.to_dict() for group in grouping.groups],
        },
        "documents": {
            "most_cited": cited,
            "catalog": catalog_status,
            "catalog_collection": catalog_collection,
            "catalog_documents": unused["catalog_documents"],
            "never_cited": unused["documents"],
            "never_cited_by_category": unused["by_category"],
        },
        "routing": routing,
        "query_text": modes,
        "limitations": limitations(modes),
        "records_lost": lost,
        "timings_ms": timings,
    }


def lost_records(
    engine: Engine | None, settings: LookupSettings, *, since: datetime | None
) -> dict[str, Any]:
    """Rows lost since ``since`` in ``settings``' scope: the records database's count and the
    local file's (see :func:`~.losses.read_losses`); a database without the table counts 0."""
    loss_file = settings.data_dir / LOSS_FILE_NAME
    scope = settings.default_filter
    try:
        return read_losses(engine, since=since, scope=scope, loss_file=loss_file)
    except DBAPIError:  # a database from before the table: nothing counted there yet
        return read_losses(None, since=since, scope=scope, loss_file=loss_file)


def _hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<invocation_db_url>"
