"""``--html FILE``: the report as one self-contained page (inline CSS and SVG, no script, no
request at view time), charts where a person would rather look than read.

Example:
    >>> page = render_html({"period": {"since": "2026-11-24", "until": "2026-12-01"},
    ...                     "totals": {"lookups": 0}, "daily": []})
    >>> page.startswith("<!DOCTYPE html>"), "http" in page.replace("http://www.w3.org", "")
    (True, False)
"""

from __future__ import annotations

from html import escape
from typing import Any

from langchain_lookup_knowledge.records.documents import document_names
from langchain_lookup_knowledge.records.svg import day_lines, ranked_bars, stacked_day_bars

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f5f7fb}
main{max-width:1040px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#5b6475;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:10px}
.card{background:#fff;border:1px solid #dde3ee;border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:20px;white-space:nowrap}.card span{color:#5b6475;font-size:12px}
section{background:#fff;border:1px solid #dde3ee;border-radius:8px;padding:12px 16px;
margin-top:14px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eef1f6;vertical-align:top}
th{color:#5b6475;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
svg.chart{display:block;margin:6px 0}
svg .grid{stroke:#e8ecf3}svg text{font-size:11px;fill:#5b6475}
svg .label{fill:#1d2330;font-size:12px}svg .legend{fill:#1d2330}
.note{color:#8a4b00;background:#fff6e5;border:1px solid #f3d9a8;border-radius:6px;
padding:6px 10px;margin:6px 0}
code{font-size:12px}.muted{color:#5b6475}
"""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


def _num(value: Any) -> str:
    return "–" if value is None else escape(str(value))


def _table(name: str, headers: list[str], rows: list[list[str]], numeric: set[int]) -> str:
    if not rows:
        return f'<p class="muted" data-table="{escape(name)}">None in this period.</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<table data-table="{escape(name)}"><tr>{head}</tr>{body}</table>'


def _cards(totals: dict[str, Any], gaps: dict[str, Any]) -> str:
    latency = totals.get("latency_ms") or {}
    cards = [
        ("lookups", _num(totals.get("lookups"))),
        ("found", _pct(totals.get("found_rate"))),
        ("unanswered or low", _num(gaps.get("lookups"))),
        ("retried unfiltered", _pct(totals.get("retry_rate"))),
        ("path fallbacks", _num(totals.get("path_fallbacks"))),
        ("errors", _num(totals.get("errors"))),
        ("latency p50", _ms(latency.get("p50"))),
        ("latency p95", _ms(latency.get("p95"))),
    ]
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><b>{value}</b><span>{escape(label)}</span></div>'
            for label, value in cards
        )
        + "</div>"
    )


def _health(report: dict[str, Any]) -> str:
    daily = report.get("daily") or []
    days = [d["day"] for d in daily]
    if not days:
        return "<section><h2>Volume and health</h2><p class='muted'>No lookups.</p></section>"
    volume = stacked_day_bars(
        "volume",
        "Lookups per day by relevance",
        days,
        {
            "high": [d["high"] for d in daily],
            "medium": [d["medium"] for d in daily],
            "low": [d["low"] for d in daily],
            "no evidence": [d["no_evidence"] for d in daily],
        },
    )
    rates = day_lines(
        "rates",
        "Found rate and unfiltered-retry rate per day",
        days,
        {
            "found %": [_rate100(d["found_rate"]) for d in daily],
            "retried %": [_rate100(d["retry_rate"]) for d in daily],
        },
        unit="%",
        top=100,
    )
    latency = day_lines(
        "latency",
        "Lookup latency per day (ms)",
        days,
        {"p50": [d["latency_p50_ms"] for d in daily], "p95": [d["latency_p95_ms"] for d in daily]},
        unit=" ms",
    )
    totals = report.get("totals") or {}
    reasons = [
        [escape(kind), escape(reason), str(n)]
        for kind, key in (
            ("retry without L0 filter", "retry_reasons"),
            ("VectorStore -> SDK", "path_fallback_reasons"),
            ("error", "errors_by_kind"),
        )
        for reason, n in (totals.get(key) or {}).items()
    ]
    return (
        "<section><h2>Volume and health</h2>"
        f"<h3 class='muted'>Lookups per day, by relevance</h3>{volume}"
        f"<h3 class='muted'>Found and retried</h3>{rates}"
        f"<h3 class='muted'>Latency</h3>{latency}"
        + _table("reasons", ["what", "reason / kind", "lookups"], reasons, {2})
        + "</section>"
    )


def _rate100(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 1)


def _gaps(gaps: dict[str, Any]) -> str:
    groups = gaps.get("groups") or []
    chart = ranked_bars(
        "gaps", [(g["label"], g["count"]) for g in groups[:12]], "Unanswered question groups"
    )
    rows = []
    for g in groups:
        examples = "<br>".join(escape(e) for e in g["examples"]) or "<i>text not recorded</i>"
        nearest = "<br>".join(
            f"{escape(d['source'])} <span class='muted'>({d['best_similarity']:.2f})</span>"
            for d in g["nearest_documents"]
        )
        hints = "<br>".join(
            f"{escape(kind)}: {escape(', '.join(values))}"
            for kind, values in (g.get("l0_hints") or {}).items()
        )
        rows.append([str(g["count"]), examples, nearest or "–", hints or "–"])
    read = gaps.get("read", 0)
    more = gaps.get("distinct_questions", 0) - read
    extra = f" ({more} less asked distinct questions not grouped)" if more > 0 else ""
    return (
        "<section><h2>Knowledge gaps</h2>"
        f"<p class='muted'>{_num(gaps.get('lookups'))} lookups answered with no evidence or low "
        f"relevance; grouped {escape(str(gaps.get('method')))}: {escape(gaps.get('why') or '')}"
        f"{escape(extra)}</p>"
        + (chart if groups else "")
        + _table(
            "gaps",
            ["lookups", "questions", "nearest documents (similarity)", "L0 hints seen"],
            rows,
            {0},
        )
        + "</section>"
    )


def _documents(documents: dict[str, Any]) -> str:
    cited = documents.get("most_cited") or []
    names, counts = document_names(cited), [c["lookups"] for c in cited]
    never = documents.get("never_cited") or []
    by_category = documents.get("never_cited_by_category") or {}
    catalog = documents.get("catalog", "ok")
    note = "" if catalog == "ok" else f"<p class='note'>Catalog {escape(catalog)}</p>"
    return (
        "<section><h2>Documents</h2>"
        "<h3 class='muted'>Most cited (lookups with the document in evidence or context)</h3>"
        + (ranked_bars("cited", list(zip(names, counts, strict=True))[:12]) if cited else "")
        + _table(
            "cited",
            ["source", "lookups", "evidence blocks", "in context pack"],
            [
                [
                    escape(name),
                    str(c["lookups"]),
                    str(c["evidence_blocks"]),
                    str(c["in_context"]),
                ]
                for name, c in zip(names, cited, strict=True)
            ],
            {1, 2, 3},
        )
        + f"<h3 class='muted'>Never cited in the period: {len(never)} of "
        f"{_num(documents.get('catalog_documents'))} catalog documents</h3>{note}"
        + (
            ranked_bars("never_cited", list(by_category.items()), "Never cited, by category")
            if by_category
            else ""
        )
        + _table(
            "never_cited",
            ["source", "title", "category"],
            [[escape(d["source"]), escape(d["title"]), escape(d["category"])] for d in never],
            set(),
        )
        + "</section>"
    )


def _routing(routing: list[dict[str, Any]]) -> str:
    chart = ranked_bars(
        "routing",
        [(r["category"], round(r["retry_rate"] * 100, 1)) for r in routing[:12]],
        "Share of filtered lookups retried unfiltered, per L0 category (%)",
    )
    rows = [
        [
            escape(r["category"]),
            str(r["filtered_lookups"]),
            str(r["retried_low_quality"]),
            str(r["retried_empty"]),
            _pct(r["retry_rate"]),
            "<b>misleads</b>" if r["misleads"] else "",
        ]
        for r in routing
    ]
    return (
        "<section><h2>Category routing</h2>"
        "<p class='muted'>Categories whose L0 filter is usually retried without it (the L0 domain "
        "misleads there).</p>"
        + (chart if routing else "")
        + _table(
            "routing",
            ["category", "filtered lookups", "retried: low quality", "retried: empty", "rate", ""],
            rows,
            {1, 2, 3, 4},
        )
        + "</section>"
    )


def render_html(report: dict[str, Any]) -> str:
    """The report as one HTML page (see the module doc)."""
    period = report.get("period") or {}
    scope = report.get("scope")
    where = []
    if report.get("collection"):
        where.append(f"collection {report['collection']}")
    if scope:
        where.append(f"scope {scope}")
    notes = "".join(f"<p class='note'>{escape(n)}</p>" for n in report.get("limitations") or [])
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        "<title>lookup_knowledge report</title>"
        f"<style>{CSS}</style></head><body><main>"
        "<h1>What the agents asked the knowledge base</h1>"
        f"<p class='sub'>{escape(str(period.get('since', ''))[:16])} → "
        f"{escape(str(period.get('until', ''))[:16])} UTC"
        f"{escape(' · ' + ', '.join(where) if where else '')}</p>"
        + notes
        + _cards(report.get("totals") or {}, report.get("gaps") or {})
        + _health(report)
        + _gaps(report.get("gaps") or {})
        + _documents(report.get("documents") or {})
        + _routing(report.get("routing") or [])
        + "</main></body></html>"
    )
