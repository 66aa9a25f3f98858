"""A lookup is recorded under the scope it ran in, whatever set it: ``default_filter``, the call's
own ``filters``, or both. A tenant's report counts its lookups however their scope was set, and
the unscoped view keeps tenants apart (each row names its tenant)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, select

from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.report import build_report
from langchain_lookup_knowledge.records.retention import prune_records
from langchain_lookup_knowledge.records.tables import tool_invocation

K8S = {"category": "kubernetes"}
DB = {"category": "databases"}


def _period() -> Period:
    now = datetime.now(UTC)
    return Period(now - timedelta(days=1), now + timedelta(minutes=1))


@pytest.fixture
def recorded(kb_settings, real_embeddings, tmp_path):
    """Five lookups: two scoped by the call's filters, one by default_filter plus a narrower
    call filter, one of another tenant, one unscoped; each row written before returning."""
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    base = kb_settings.model_copy(
        update={"invocation_db_url": url, "record_timeout_s": 30.0, "record_wait": True}
    )
    tenant = base.model_copy(update={"default_filter": K8S})
    plain = build_lookup_graph(base, embeddings=real_embeddings)
    scoped = build_lookup_graph(tenant, embeddings=real_embeddings)
    plain.invoke({"query": "pod keeps crashing and restarting", "filters": K8S})
    plain.invoke({"query": "vault unseal procedure", "filters": K8S})
    narrower = {"source": "kubernetes/pod-crashloopbackoff.md"}
    scoped.invoke({"query": "crashloop backoff", "filters": narrower})
    plain.invoke({"query": "replica lag on the primary", "filters": DB})
    plain.invoke({"query": "ingress returns 502 bad gateway"})
    return base, tenant, url


def test_each_row_names_the_scope_its_lookup_ran_under(recorded):
    _base, _tenant, url = recorded
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(select(tool_invocation.c.query, tool_invocation.c.scope)).all())
    engine.dispose()
    assert rows == {
        "pod keeps crashing and restarting": '{"category": "kubernetes"}',
        "vault unseal procedure": '{"category": "kubernetes"}',
        "crashloop backoff": (
            '{"category": "kubernetes", "source": "kubernetes/pod-crashloopbackoff.md"}'
        ),
        "replica lag on the primary": '{"category": "databases"}',
        "ingress returns 502 bad gateway": "",
    }


def test_a_tenants_report_counts_its_lookups_however_scoped(recorded):
    base, tenant, _url = recorded
    mine = build_report(tenant, _period(), group_by="terms")
    assert mine["totals"]["lookups"] == 3
    other = build_report(base.model_copy(update={"default_filter": DB}), _period())
    assert other["totals"]["lookups"] == 1
    everyone = build_report(base, _period(), group_by="terms")
    assert everyone["totals"]["lookups"] == 5


def test_a_tenant_scope_never_matches_a_look_alike(recorded):
    base, _tenant, _url = recorded
    for look_alike in ({"category": "Kubernetes"}, {"category": "kube"}, {"source": "kubernetes"}):
        report = build_report(base.model_copy(update={"default_filter": look_alike}), _period())
        assert report["totals"]["lookups"] == 0, look_alike


def test_a_tenants_prune_deletes_its_own_records_only(recorded):
    _base, _tenant, url = recorded
    engine = create_engine(url)
    later = datetime.now(UTC) + timedelta(days=2)
    assert prune_records(engine, older_than=timedelta(days=1), now=later, scope=K8S) == 3
    with engine.connect() as conn:
        left = {r[0] for r in conn.execute(select(tool_invocation.c.query))}
    engine.dispose()
    assert left == {"replica lag on the primary", "ingress returns 502 bad gateway"}
