"""Synthetic records for the report benchmark: realistic rows, written fast (COPY on PostgreSQL).

Example:
    >>> BATCH
    5000
"""

from __future__ import annotations

import json
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_lookup_knowledge.records.columns import indexed_values, source_rows
from langchain_lookup_knowledge.records.database import open_engine
from langchain_lookup_knowledge.records.privacy import query_hash
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source

__all__ = [
    "BATCH",
    "CATEGORIES",
    "GAP_PHRASES",
    "PREVIEW",
    "SOURCES",
    "TOPICS",
    "copy_postgres",
    "generate",
    "row_details",
    "synthetic_rows",
]


CATEGORIES = [f"cat{i:02d}" for i in range(20)]


SOURCES = [f"{CATEGORIES[i % 20]}/doc-{i:03d}.md" for i in range(500)]


TOPICS = [f"topic{i}" for i in range(1000)]


GAP_PHRASES = ["how do I {t}", "{t} not working", "{t} steps", "fix {t} error", "{t} runbook"]


PREVIEW = "x" * 160


BATCH = 5000


def row_details(rng: random.Random, query: str, gap: bool, category: str | None) -> dict[str, Any]:
    blocks = [] if gap and rng.random() < 0.6 else rng.sample(SOURCES, rng.randint(1, 3))
    sim = rng.uniform(0.1, 0.4) if gap else rng.uniform(0.5, 0.9)
    retried = category is not None and rng.random() < 0.3
    attempts = []
    if category:
        status = rng.choice(["low_quality", "empty"]) if retried else "ok"
        attempts.append(
            {
                "name": "filtered",
                "filter": f'category == "{category}"',
                "path": "vectorstore",
                "candidates": 15,
                "topSimilarity": sim,
                "latencyMs": 20.0,
                "status": status,
                "error": None,
                "pathFallback": None,
            }
        )
    if retried or not category:
        fallback = "vectorstore failed: MilvusException" if rng.random() < 0.01 else None
        attempts.append(
            {
                "name": "unfiltered_retry" if retried else "unfiltered",
                "filter": None,
                "path": "sdk" if fallback else "vectorstore",
                "candidates": 15,
                "topSimilarity": sim,
                "latencyMs": 20.0,
                "status": "ok",
                "error": None,
                "pathFallback": fallback,
            }
        )
    reason = None
    if retried:
        reason = (
            "filtered_vector_low_quality"
            if attempts[0]["status"] == "low_quality"
            else "filtered_vector_no_evidence"
        )
    level = "low" if gap else rng.choice(["high", "high", "medium"])
    return {
        "query_transform": {
            "query": query,
            "notes": [],
            "category_filter": category,
            "caller_filter": None,
            "retrieval_mode": "hybrid",
            "l0_hints": {"domains": [category] if category else []},
        },
        "retrieval_trace": {
            "attempts": attempts,
            "selectedAttempt": attempts[-1]["name"],
            "fallbackReason": reason,
            "candidateCount": 15,
            "finalCount": len(blocks),
        },
        "fallback_reason": reason,
        "context_pack_summary": {
            "included_sources": blocks,
            "omitted_sources": [],
            "budget": 6000,
            "used": 3000,
            "truncated": False,
        },
        "rerank_trace": [
            {"rank": i + 1, "source": s, "finalScore": sim} for i, s in enumerate(blocks)
        ],
        "evidence_blocks": [
            {
                "evidence_key": f"{s}#0",
                "source": s,
                "title": s,
                "retrieval_layer": "L1",
                "score": sim,
                "similarity": sim,
                "hit_reasons": ["l1_similarity"],
                "content_preview": PREVIEW,
            }
            for s in blocks
        ],
        "l0_matched_titles": [],
        "l0_matched_keywords": [],
        "l0_domains": [category] if category else [],
        "l0_entities": [],
        "found": bool(blocks),
        "evidence_status": "evidence" if blocks else "no_evidence",
        "relevance_level": level,
        "nearest_sources": [] if blocks else [{"source": rng.choice(SOURCES), "similarity": sim}],
    }


def synthetic_rows(n: int, seed: int = 7) -> Any:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    for i in range(n):
        gap = rng.random() < 0.3
        topic = rng.choice(TOPICS)
        query = (
            rng.choice(GAP_PHRASES).format(t=topic)
            if gap
            else f"what is the procedure for {topic} on cluster {rng.randint(1, 50)}"
        )
        category = rng.choice(CATEGORIES) if rng.random() < 0.4 else None
        details = row_details(rng, query, gap, category)
        error = "sdk: TimeoutError: 10s" if rng.random() < 0.005 else None
        row = {
            "tool_name": "lookup_knowledge",
            "query": query,
            "created_at": now - timedelta(seconds=rng.uniform(0, 90 * 86400)),
            "latency_ms": rng.lognormvariate(3.5, 0.5),
            "found": details["found"],
            "evidence_status": details["evidence_status"],
            "retrieval_layer": "L1" if details["found"] else None,
            "retrieval_details": details,
            "error": error,
        }
        row |= indexed_values(
            details, error=error, collection="bench", scope=None, query_hash=query_hash(query)
        )
        yield i + 1, row, details


def copy_postgres(engine: Any, n: int) -> None:
    """PostgreSQL: COPY (what a bulk load uses), ids assigned here."""
    columns = [c.name for c in tool_invocation.columns]
    source_cols = [c.name for c in tool_invocation_source.columns if c.name != "id"]
    raw, raw_sources = engine.raw_connection(), engine.raw_connection()
    try:
        cur, cur_sources = raw.cursor(), raw_sources.cursor()
        rows_sql = f"COPY tool_invocation ({', '.join(columns)}) FROM STDIN"
        sources_sql = f"COPY tool_invocation_source ({', '.join(source_cols)}) FROM STDIN"
        with cur.copy(rows_sql) as copy, cur_sources.copy(sources_sql) as copy_sources:
            for row_id, row, details in synthetic_rows(n):
                row["id"] = row_id
                values = [row.get(c) for c in columns]
                values[columns.index("retrieval_details")] = json.dumps(row["retrieval_details"])
                copy.write_row(values)
                for src in source_rows(row_id, row, details):
                    copy_sources.write_row([src[c] for c in source_cols])
        cur.execute("SELECT setval('tool_invocation_id_seq', %s)", (n,))
        raw.commit()
        raw_sources.commit()
    finally:
        raw.close()
        raw_sources.close()


def generate(url: str, n: int) -> None:
    """Write ``n`` rows (and their source rows) into the records database at ``url``."""
    engine = open_engine(url)
    started = time.perf_counter()
    if engine.dialect.name == "postgresql":
        copy_postgres(engine, n)
    else:
        batch: list[dict[str, Any]] = []
        sources: list[dict[str, Any]] = []
        for row_id, row, details in synthetic_rows(n):
            batch.append(row | {"id": row_id})
            sources += source_rows(row_id, row, details)
            if len(batch) >= BATCH:
                with engine.begin() as conn:
                    conn.execute(tool_invocation.insert(), batch)
                    conn.execute(tool_invocation_source.insert(), sources)
                batch, sources = [], []
        if batch:
            with engine.begin() as conn:
                conn.execute(tool_invocation.insert(), batch)
                if sources:
                    conn.execute(tool_invocation_source.insert(), sources)
    # Statistics (and PostgreSQL's visibility map, for index-only scans), as autovacuum or
    # SQLite's optimize would have them on a database that grew by itself.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("VACUUM ANALYZE tool_invocation")
            conn.exec_driver_sql("VACUUM ANALYZE tool_invocation_source")
        else:
            conn.exec_driver_sql("ANALYZE")
    engine.dispose()
    print(f"generated {n} rows in {time.perf_counter() - started:.0f}s", file=sys.stderr)
