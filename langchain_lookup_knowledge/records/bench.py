"""Measure the report on generated records: ``python -m langchain_lookup_knowledge.records.bench``.

``generate`` writes N realistic rows (the real ``retrieval_details`` shape, ~2 KB each, and their
``tool_invocation_source`` rows) spread over 90 days; ``measure`` times the report over them in a
fresh process and prints its peak memory, beside a baseline measured in the same run: one pass
that streams every row of the period and aggregates its ``retrieval_details`` in Python (what a
report without the indexed columns has to do).

Example (a shell)::

    python -m langchain_lookup_knowledge.records.bench generate --db sqlite:////tmp/r.sqlite3 \\
        --rows 1000000
    python -m langchain_lookup_knowledge.records.bench measure --db sqlite:////tmp/r.sqlite3
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from langchain_lookup_knowledge.records.columns import indexed_values, source_rows
from langchain_lookup_knowledge.records.database import open_engine
from langchain_lookup_knowledge.records.privacy import query_hash
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source

CATEGORIES = [f"cat{i:02d}" for i in range(20)]
SOURCES = [f"{CATEGORIES[i % 20]}/doc-{i:03d}.md" for i in range(500)]
TOPICS = [f"topic{i}" for i in range(1000)]
GAP_PHRASES = ["how do I {t}", "{t} not working", "{t} steps", "fix {t} error", "{t} runbook"]
PREVIEW = "x" * 160
BATCH = 5000
MODULE = "langchain_lookup_knowledge.records.bench"


def _details(rng: random.Random, query: str, gap: bool, category: str | None) -> dict[str, Any]:
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


def _rows(n: int, seed: int = 7) -> Any:
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
        details = _details(rng, query, gap, category)
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


def _copy_postgres(engine: Any, n: int) -> None:
    """PostgreSQL: COPY (what a bulk load uses), ids assigned here."""
    columns = [c.name for c in tool_invocation.columns]
    source_cols = [c.name for c in tool_invocation_source.columns if c.name != "id"]
    raw, raw_sources = engine.raw_connection(), engine.raw_connection()
    try:
        cur, cur_sources = raw.cursor(), raw_sources.cursor()
        rows_sql = f"COPY tool_invocation ({', '.join(columns)}) FROM STDIN"
        sources_sql = f"COPY tool_invocation_source ({', '.join(source_cols)}) FROM STDIN"
        with cur.copy(rows_sql) as copy, cur_sources.copy(sources_sql) as copy_sources:
            for row_id, row, details in _rows(n):
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
        _copy_postgres(engine, n)
    else:
        batch: list[dict[str, Any]] = []
        sources: list[dict[str, Any]] = []
        for row_id, row, details in _rows(n):
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


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_report(url: str, since: str) -> dict[str, Any]:
    """One report (terms grouping, no catalog: the database's work only), timed."""
    from langchain_lookup_knowledge.records.period import Period
    from langchain_lookup_knowledge.records.report import build_report
    from langchain_lookup_knowledge.settings import LookupSettings

    settings = LookupSettings(invocation_db_url=url)
    started = time.perf_counter()
    report = build_report(settings, Period.parse(since), group_by="terms", catalog=[])
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mib": round(_peak_mib()),
        "lookups": report["totals"]["lookups"],
        "gap_groups": len(report["gaps"]["groups"]),
        "timings_ms": report["timings_ms"],
    }


def run_baseline(url: str, since: str) -> dict[str, Any]:
    """Every row of the period streamed and aggregated in Python (totals and citations only)."""
    from langchain_lookup_knowledge.records.period import Period

    period = Period.parse(since)
    engine = open_engine(url)
    started = time.perf_counter()
    totals: Counter[str] = Counter()
    cited: Counter[str] = Counter()
    query = select(tool_invocation.c.found, tool_invocation.c.retrieval_details).where(
        tool_invocation.c.created_at >= period.since, tool_invocation.c.created_at < period.until
    )
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=BATCH).execute(query)
        for found, details in result:
            totals["lookups"] += 1
            totals["found"] += bool(found)
            totals[str(details.get("relevance_level"))] += 1
            for block in details.get("evidence_blocks") or []:
                cited[block["source"]] += 1
    engine.dispose()
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mib": round(_peak_mib()),
        "lookups": totals["lookups"],
    }


def measure(url: str, since_list: list[str]) -> list[dict[str, Any]]:
    """Report and baseline, each in a fresh process (so its peak memory is its own)."""
    results = []
    for since in since_list:
        for kind in ("report", "baseline"):
            out = subprocess.run(
                [sys.executable, "-m", MODULE, "_one", kind, "--db", url, "--since", since],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            results.append({"kind": kind, "since": since} | json.loads(out))
    return results


def main(argv: list[str] | None = None) -> int:
    """``generate`` / ``measure`` (see the module doc)."""
    parser = argparse.ArgumentParser(prog="python -m langchain_lookup_knowledge.records.bench")
    sub = parser.add_subparsers(dest="action", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--db", required=True)
    gen.add_argument("--rows", type=int, default=1_000_000)
    mes = sub.add_parser("measure")
    mes.add_argument("--db", required=True)
    mes.add_argument("--since", nargs="+", default=["90d", "7d"])
    one = sub.add_parser("_one")
    one.add_argument("kind", choices=["report", "baseline"])
    one.add_argument("--db", required=True)
    one.add_argument("--since", default="90d")
    args = parser.parse_args(argv)
    if args.action == "generate":
        generate(args.db, args.rows)
    elif args.action == "measure":
        for result in measure(args.db, args.since):
            print(json.dumps(result))
    else:
        runner = run_report if args.kind == "report" else run_baseline
        print(json.dumps(runner(args.db, args.since)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
