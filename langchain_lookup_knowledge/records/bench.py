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
import resource
import subprocess
import sys
import time
from collections import Counter
from typing import Any

from sqlalchemy import select

from langchain_lookup_knowledge.records.bench_data import (
    BATCH,
    CATEGORIES,
    GAP_PHRASES,
    PREVIEW,
    SOURCES,
    TOPICS,
    copy_postgres,
    generate,
    row_details,
    synthetic_rows,
)
from langchain_lookup_knowledge.records.database import open_engine
from langchain_lookup_knowledge.records.tables import tool_invocation

__all__ = [
    "BATCH",
    "CATEGORIES",
    "GAP_PHRASES",
    "MODULE",
    "PREVIEW",
    "SOURCES",
    "TOPICS",
    "copy_postgres",
    "generate",
    "main",
    "measure",
    "row_details",
    "run_baseline",
    "run_report",
    "synthetic_rows",
]

MODULE = "langchain_lookup_knowledge.records.bench"


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
