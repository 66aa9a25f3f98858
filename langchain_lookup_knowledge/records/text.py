"""The report for a terminal: the same sections as ``--json``, read top to bottom.

Example:
    >>> print(render_text({"period": {"since": "2026-11-24T00:00", "until": "2026-12-01T00:00"},
    ...                    "totals": {"lookups": 0}}).splitlines()[0])
    lookup_knowledge report 2026-11-24T00:00 -> 2026-12-01T00:00 (UTC)
"""

from __future__ import annotations

from typing import Any

from langchain_lookup_knowledge.records.documents import document_names

GAP_GROUPS_SHOWN = 15
DOCUMENTS_SHOWN = 10


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _pairs(mapping: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items()) or "none"


def render_text(report: dict[str, Any]) -> str:
    """A plain-text rendering of :func:`~langchain_lookup_knowledge.records.report.build_report`."""
    period = report.get("period") or {}
    totals = report.get("totals") or {}
    lines = [
        f"lookup_knowledge report {str(period.get('since'))[:16]} -> "
        f"{str(period.get('until'))[:16]} (UTC)"
        + (f", collection {report['collection']}" if report.get("collection") else "")
        + (f", scope {report['scope']}" if report.get("scope") else "")
    ]
    lines += [f"  note: {note}" for note in report.get("limitations") or []]
    if not totals.get("lookups"):
        lines.append("no lookups recorded in this period")
        return "\n".join(lines)
    sections = (
        _totals(totals),
        _daily(report.get("daily") or []),
        _gaps(report.get("gaps") or {}),
        _documents(report.get("documents") or {}),
        _routing(report.get("routing") or []),
    )
    for section in sections:  # each after a blank line
        lines += ["", *section]
    return "\n".join(lines)


def _totals(totals: dict[str, Any]) -> list[str]:
    relevance = totals.get("relevance") or {}
    latency = totals.get("latency_ms") or {}
    return [
        f"lookups {totals['lookups']}, found {_pct(totals.get('found_rate'))}; relevance "
        f"high {relevance.get('high')}, medium {relevance.get('medium')}, low "
        f"{relevance.get('low')}, no evidence {relevance.get('no_evidence')}",
        f"retried without the L0 filter {_pct(totals.get('retry_rate'))} "
        f"({_pairs(totals.get('retry_reasons') or {})}); VectorStore->SDK fallbacks "
        f"{totals.get('path_fallbacks')}; errors {totals.get('errors')} "
        f"({_pairs(totals.get('errors_by_kind') or {})})",
        f"latency p50 {latency.get('p50')} ms, p95 {latency.get('p95')} ms",
    ]


def _daily(days: list[dict[str, Any]]) -> list[str]:
    return ["per day: day lookups found% retried% p50ms p95ms"] + [
        f"  {day['day']} {day['lookups']:>7} {_pct(day['found_rate']):>6} "
        f"{_pct(day['retry_rate']):>8} {day['latency_p50_ms']} {day['latency_p95_ms']}"
        for day in days
    ]


def _gaps(gaps: dict[str, Any]) -> list[str]:
    lines = [
        f"knowledge gaps: {gaps.get('lookups')} lookups with no evidence or low relevance, "
        f"{gaps.get('distinct_questions')} distinct questions, grouped {gaps.get('method')} "
        f"({gaps.get('why')})"
    ]
    for group in (gaps.get("groups") or [])[:GAP_GROUPS_SHOWN]:
        nearest = ", ".join(
            f"{d['source']} ({d['best_similarity']:.2f})" for d in group["nearest_documents"]
        )
        lines.append(f"  {group['count']:>5}  {group['label']}")
        for example in group["examples"][1:3]:
            lines.append(f"         also: {example}")
        if nearest:
            lines.append(f"         nearest: {nearest}")
        for kind, values in (group.get("l0_hints") or {}).items():
            lines.append(f"         L0 {kind}: {', '.join(values)}")
    return lines


def _documents(documents: dict[str, Any]) -> list[str]:
    lines = ["most cited (lookups, evidence blocks, in context pack):"]
    cited = (documents.get("most_cited") or [])[:DOCUMENTS_SHOWN]
    for doc, name in zip(cited, document_names(cited), strict=True):
        lines.append(
            f"  {doc['lookups']:>5} {doc['evidence_blocks']:>5} {doc['in_context']:>5}  {name}"
        )
    never = documents.get("never_cited") or []
    lines.append(
        f"never cited: {len(never)} of {documents.get('catalog_documents')} catalog documents"
        + (
            f" of collection {documents['catalog_collection']!r}"
            if documents.get("catalog_collection")
            else ""
        )
        + ("" if documents.get("catalog") == "ok" else f" (catalog {documents.get('catalog')})")
        + (
            f" by category: {_pairs(documents.get('never_cited_by_category') or {})}"
            if never
            else ""
        )
    )
    for doc in never[:DOCUMENTS_SHOWN]:
        lines.append(f"  [{doc['category']}] {doc['source']}  {doc['title']}")
    if len(never) > DOCUMENTS_SHOWN:
        lines.append(f"  ... {len(never) - DOCUMENTS_SHOWN} more (--json lists them all)")
    return lines


def _routing(routing: list[dict[str, Any]]) -> list[str]:
    lines = ["category routing (L0 filter retried unfiltered):"]
    for row in routing:
        flag = "  <- the L0 domain misleads here" if row["misleads"] else ""
        lines.append(
            f"  {row['category']}: {row['filtered_lookups']} filtered lookups, retried "
            f"{_pct(row['retry_rate'])} (low quality {row['retried_low_quality']}, empty "
            f"{row['retried_empty']}){flag}"
        )
    if not routing:
        lines.append("  no lookup used an L0 category filter")
    return lines
