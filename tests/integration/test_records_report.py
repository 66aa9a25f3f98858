"""``lookup-knowledge report`` over real lookups on the sample knowledge base, recorded in SQLite
and in a real PostgreSQL server: volume and health, gap grouping (by meaning with the real
embedder, and by terms), most and never cited documents, category routing, a tenant's scope, the
hash and none modes, and the HTML page rendered by a real headless chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, update

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.recording import metadata, tool_invocation
from langchain_lookup_knowledge.records.gaps import GapQuestion
from langchain_lookup_knowledge.records.grouping import group_questions
from langchain_lookup_knowledge.records.page import render_html
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.report import build_report

ANSWERED = [
    "pod keeps crashing and restarting",
    "pod keeps crashing and restarting",
    "ingress returns 502 bad gateway",
    "postgres replica is falling behind the primary",
]
CAKE = ["how do I bake a chocolate cake", "chocolate cake recipe", "Chocolate cake recipe"]
VAULT = ["vault unseal procedure", "vault unseal procedure", "how do I unseal hashicorp vault"]


def _period() -> Period:
    now = datetime.now(UTC)
    return Period(now - timedelta(days=1), now + timedelta(minutes=1))


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def recorded(request, kb_settings, real_embeddings, tmp_path_factory) -> object:
    """Settings whose records hold real lookups of ANSWERED, CAKE and VAULT (one from 3 days
    ago, outside the report's period)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('report') / 'records.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
        engine = create_engine(url)
        metadata.drop_all(engine)
        engine.dispose()
    # record_timeout_s: a loaded test machine must not time rows out
    settings = kb_settings.model_copy(update={"invocation_db_url": url, "record_timeout_s": 30.0})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    for question in ["etcd is slow", *ANSWERED, *CAKE, *VAULT]:
        tool.invoke({"query": question})
    engine = create_engine(url)
    with engine.begin() as conn:  # the first lookup happened three days ago
        conn.execute(
            update(tool_invocation)
            .where(tool_invocation.c.query == "etcd is slow")
            .values(created_at=datetime.now(UTC) - timedelta(days=3))
        )
    engine.dispose()
    return settings


@pytest.fixture(scope="module")
def report(recorded, real_embeddings) -> dict:
    return build_report(recorded, _period(), embeddings=real_embeddings)


def test_volume_and_health(report):
    totals = report["totals"]
    assert totals["lookups"] == len(ANSWERED) + len(CAKE) + len(VAULT)  # etcd: out of period
    # the vault questions find weak evidence (low relevance), the cake ones none
    assert totals["found"] == len(ANSWERED) + len(VAULT)
    assert totals["relevance"]["no_evidence"] == len(CAKE)
    assert totals["relevance"]["low"] == len(VAULT)
    assert totals["latency_ms"]["p50"] is not None
    assert totals["latency_ms"]["p50"] <= totals["latency_ms"]["p95"]
    (day,) = report["daily"]
    assert day["lookups"] == totals["lookups"]
    assert day["found_rate"] == pytest.approx(7 / 10)


def test_gap_phrasings_are_grouped_by_meaning(report):
    gaps = report["gaps"]
    assert gaps["method"] == "meaning"
    assert "embedder" in gaps["why"]
    assert gaps["lookups"] == 6
    assert gaps["distinct_questions"] == 4  # case and spacing aside
    by_count = sorted(
        (g["count"], sorted(e.lower() for e in g["examples"])) for g in gaps["groups"]
    )
    assert by_count == [
        (3, sorted(["how do i bake a chocolate cake", "chocolate cake recipe"])),
        (3, sorted(["vault unseal procedure", "how do i unseal hashicorp vault"])),
    ]
    for group in gaps["groups"]:
        assert group["nearest_documents"], "each gap says which documents came nearest"


def test_most_cited_and_never_cited(report, kb_settings):
    documents = report["documents"]
    cited = {d["source"]: d for d in documents["most_cited"]}
    crash = cited["kubernetes/pod-crashloopbackoff.md"]
    assert crash["lookups"] == 2
    assert crash["in_context"] == 2
    counts = [d["lookups"] for d in documents["most_cited"]]
    assert counts == sorted(counts, reverse=True)
    never = {d["source"]: d["category"] for d in documents["never_cited"]}
    assert documents["catalog"] == "ok"
    assert documents["catalog_documents"] == 18
    assert not set(never) & set(cited)
    assert len(never) + len(set(cited)) == 18  # every catalog document is one or the other
    assert never["databases/mysql-slow-queries.md"] == "databases"
    assert never["observability/alertmanager-notifications-failing.md"] == "observability"
    assert sum(documents["never_cited_by_category"].values()) == len(never)


def test_category_routing_counts_filtered_lookups(report):
    routing = {r["category"]: r for r in report["routing"]}
    assert routing["networking"]["filtered_lookups"] >= 1
    for row in routing.values():
        retried = row["retried_low_quality"] + row["retried_empty"]
        assert row["retry_rate"] == pytest.approx(retried / row["filtered_lookups"], abs=1e-4)
        assert row["misleads"] == (row["retry_rate"] > 0.5)


def test_grouping_by_terms_keeps_paraphrases_without_shared_terms_apart(real_embeddings):
    questions = [
        GapQuestion("a", "disk is full", 3, "", ""),
        GapQuestion("b", "no space left on device", 2, "", ""),
        GapQuestion("c", "vault unseal procedure", 1, "", ""),
    ]
    meaning = group_questions(questions, method="meaning", embeddings=real_embeddings)
    assert [g.count for g in meaning.groups] == [5, 1]
    terms = group_questions(questions, method="terms")
    assert [g.count for g in terms.groups] == [3, 2, 1]


def test_cjk_questions_are_grouped_by_terms_under_an_english_only_embedder(real_embeddings):
    questions = [
        GapQuestion("a", "数据库连接数满了", 2, "", ""),
        GapQuestion("b", "数据库连接数满了怎么办", 1, "", ""),
        GapQuestion("c", "vault unseal procedure", 1, "", ""),
    ]
    grouping = group_questions(
        questions, method="meaning", embeddings=real_embeddings, english_only_embedder=True
    )
    assert sorted(g.count for g in grouping.groups) == [1, 3]
    assert "CJK" in grouping.why


def test_tenant_report_shows_only_its_lookups(kb_settings, real_embeddings, tmp_path):
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    base = kb_settings.model_copy(update={"invocation_db_url": url, "record_timeout_s": 30.0})
    tenant = base.model_copy(update={"default_filter": {"category": "kubernetes"}})
    for settings, question in [
        (tenant, "pod keeps crashing and restarting"),
        (tenant, "vault unseal procedure"),
        (base, "ingress returns 502 bad gateway"),
        (base, "recipe for chocolate cake"),
    ]:
        create_lookup_knowledge_tool(settings, embeddings=real_embeddings).invoke(
            {"query": question}
        )
    mine = build_report(tenant, _period(), group_by="terms")
    assert mine["scope"] == {"category": "kubernetes"}
    assert mine["totals"]["lookups"] == 2
    assert [g["examples"] for g in mine["gaps"]["groups"]] == [["vault unseal procedure"]]
    assert {d["source"].split("/")[0] for d in mine["documents"]["most_cited"]} == {"kubernetes"}
    never = mine["documents"]["never_cited"]
    assert never
    assert {d["category"] for d in never} == {"kubernetes"}  # the tenant's catalog only
    everyone = build_report(base, _period(), group_by="terms")
    assert everyone["totals"]["lookups"] == 4


@pytest.mark.parametrize(("mode", "method"), [("hash", "exact"), ("none", "nearest_document")])
def test_report_says_what_it_cannot_show_without_question_text(
    kb_settings, real_embeddings, tmp_path, mode, method
):
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    settings = kb_settings.model_copy(
        update={"invocation_db_url": url, "record_query_text": mode, "record_timeout_s": 30.0}
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    for question in VAULT:
        tool.invoke({"query": question})
    report = build_report(settings, _period(), embeddings=real_embeddings)
    gaps = report["gaps"]
    assert gaps["method"] == method
    assert report["query_text"] == {
        "full": 0,
        "hash": 3 if mode == "hash" else 0,
        "none": 3 if mode == "none" else 0,
    }
    assert all(g["examples"] == [] for g in gaps["groups"])
    if mode == "hash":  # identical questions still count as one
        assert sorted(g["count"] for g in gaps["groups"]) == [1, 2]
    else:  # by the documents they came nearest to
        assert all(g["label"].startswith("questions nearest to") for g in gaps["groups"])
    (note,) = report["limitations"]
    assert f"record_query_text={mode}" in note


# --- the HTML page in a real browser -----------------------------------------------------------

PROBE = """<script>
window.addEventListener('load', () => {
  const out = [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const marks = svg.querySelectorAll('rect.bar, circle.point').length;
    const size = Math.round(box.width) + 'x' + Math.round(box.height);
    return svg.dataset.chart + ':' + size + ':' + marks;
  });
  const tables = [...document.querySelectorAll('table[data-table]')].map(
    t => t.dataset.table + ':' + t.rows.length);
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = 'CHARTS ' + out.join(' ') + ' TABLES ' + tables.join(' ');
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    pytest.skip("no chromium on this machine (apt-get install -y chromium; .ci/servers.sh does)")


def _headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1100,1400",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_html_page_renders_its_charts_and_tables_in_headless_chromium(report, tmp_path):
    browser = _chromium()
    page = render_html(report)
    assert "<script" not in page
    assert not re.search(r"(src|href)=['\"]?https?:", page), "nothing fetched at view time"
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    result = _headless(browser, tmp_path / "profile", "--dump-dom", probed.as_uri())
    found = re.search(r"CHARTS (.*?) TABLES (.*?)</pre>", result.stdout)
    assert found, f"the page did not render: {result.stderr[-500:]}"
    charts = {
        name: (int(w), int(h), int(marks))
        for name, w, h, marks in re.findall(r"(\w+):(\d+)x(\d+):(\d+)", found.group(1))
    }
    tables = dict(re.findall(r"(\w+):(\d+)", found.group(2)))
    assert {"volume", "rates", "latency", "gaps", "cited", "never_cited"} <= set(charts)
    for name, (width, height, marks) in charts.items():
        assert width > 300, f"chart {name} laid out {width}px wide"
        assert height > 20, f"chart {name} laid out {height}px high"
        assert marks > 0, f"chart {name} has no bars or points"
    assert int(tables["gaps"]) == 1 + len(report["gaps"]["groups"])  # header + one per group
    assert int(tables["cited"]) == 1 + len(report["documents"]["most_cited"])
    assert int(tables["never_cited"]) == 1 + len(report["documents"]["never_cited"])
    plain = tmp_path / "report.html"
    plain.write_text(page, encoding="utf-8")
    shot = tmp_path / "report.png"
    _headless(browser, tmp_path / "profile", f"--screenshot={shot}", plain.as_uri())
    assert shot.stat().st_size > 10_000, "a blank screenshot"
