"""The report's documents section and its charts: one document per collection (a path in two
collections is two documents), never-cited counted within the catalog's collection, and chart
labels shown whole (wrapped, not clipped). A real SQLite records file, no Milvus."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sqlalchemy import create_engine

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.records.columns import RECORD_VERSION
from langchain_lookup_knowledge.records.database import create_schema
from langchain_lookup_knowledge.records.page import render_html
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.report import build_report
from langchain_lookup_knowledge.records.tables import tool_invocation, tool_invocation_source

LONG = "kubernetes/networking/ingress-controller-returns-502-bad-gateway-after-a-deploy.md"


def _lookup(conn, collection: str, source: str) -> None:
    now = datetime.now(UTC)
    row_id = conn.execute(
        tool_invocation.insert().values(
            tool_name="lookup_knowledge",
            query=f"a question about {source}",
            created_at=now,
            found=True,
            evidence_status="evidence",
            relevance_level="high",
            retrieval_details={},
            record_version=RECORD_VERSION,
            collection=collection,
            scope="",
        )
    ).inserted_primary_key[0]
    conn.execute(
        tool_invocation_source.insert().values(
            invocation_id=row_id,
            created_at=now,
            collection=collection,
            scope="",
            source=source,
            evidence_blocks=1,
            in_context=True,
            similarity=0.8,
        )
    )


def test_documents_are_counted_per_collection_and_named_whole(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'records.sqlite3'}")
    create_schema(engine)
    with engine.begin() as conn:
        _lookup(conn, "kb", LONG)
        _lookup(conn, "kb", LONG)
        _lookup(conn, "docs", LONG)
        _lookup(conn, "docs", "a.md")
    settings = LookupSettings(data_dir=tmp_path, collection="kb")
    catalog = [CatalogEntry(LONG, "Ingress 502", "kubernetes"), CatalogEntry("a.md", "A", "x")]
    report = build_report(
        settings, Period.parse("1d"), engine=engine, catalog=catalog, group_by="terms"
    )
    cited = report["documents"]["most_cited"]
    assert [(c["collection"], c["source"], c["lookups"]) for c in cited] == [
        ("kb", LONG, 2),
        ("docs", "a.md", 1),
        ("docs", LONG, 1),
    ]
    # the catalog is kb's: a.md was cited in docs only, so in kb it is never cited
    assert [d["source"] for d in report["documents"]["never_cited"]] == ["a.md"]
    page = render_html(report)
    chart = re.search(r'<svg[^>]*data-chart="cited".*?</svg>', page, re.S)
    assert chart is not None
    labels = [
        "".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", text))
        for text in re.findall(r'<text class="label"[^>]*>(.*?)</text>', chart[0])
    ]
    assert labels == [f"kb: {LONG}", "docs: a.md", f"docs: {LONG}"]
    engine.dispose()
