"""``lookup-knowledge report`` and ``lookup-knowledge records prune`` as a user runs them, on
lookups the ``query`` command recorded over the sample knowledge base."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, func, select, update

from langchain_lookup_knowledge.recording import tool_invocation
from tests.cli_helpers import run_cli

run_main = run_cli  # (exit code, stdout, stderr) of the CLI run in this process


@pytest.fixture
def env(sample_kb_store, tmp_path, monkeypatch):
    """The sample store configured through the environment, records in a fresh SQLite file."""
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(sample_kb_store.data_dir))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_MILVUS_URI", str(sample_kb_store.milvus_uri))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_COLLECTION", sample_kb_store.collection)
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", url)
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_TIMEOUT_S", "30")  # a loaded machine
    return url


def test_report_after_query_commands(env, tmp_path):
    code, _, err = run_main(
        ["query", "pod keeps crashing and restarting", "recipe for chocolate cake"]
    )
    assert code == 0, err
    code, out, err = run_main(["report", "--json", "--group-by", "terms"])
    assert code == 0, err
    report = json.loads(out)
    assert report["totals"]["lookups"] == 2
    assert report["gaps"]["groups"][0]["examples"] == ["recipe for chocolate cake"]
    assert report["documents"]["catalog_collection"] == "sample_kb"
    assert report["documents"]["catalog_documents"] == 18
    page = tmp_path / "report.html"
    code, out, err = run_main(["report", "--since", "1d", "--html", str(page)])
    assert code == 0, err
    assert "recipe for chocolate cake" in out  # the text report
    assert "never cited:" in out
    assert page.read_text(encoding="utf-8").count("<svg") >= 4


def test_prune_deletes_old_records(env):
    run_main(["query", "ingress returns 502 bad gateway", "etcd is slow"])
    engine = create_engine(env)
    with engine.begin() as conn:
        conn.execute(
            update(tool_invocation)
            .where(tool_invocation.c.query == "etcd is slow")
            .values(created_at=datetime.now(UTC) - timedelta(days=120))
        )
    code, out, err = run_main(["records", "prune", "--older-than", "90d", "--json"])
    assert code == 0, err
    assert json.loads(out)["deleted"] == 1
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tool_invocation)).scalar() == 1
    engine.dispose()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["records", "prune", "--older-than", "ninety days"], "invalid duration 'ninety days'"),
        (["report", "--since", "yesterday"], "invalid time 'yesterday'"),
        (["report", "--since", "1d", "--until", "7d"], "empty period"),
        (["report", "--html", "/nonexistent-dir/r.html"], "folder /nonexistent-dir"),
        (["report", "--db", "postgresql+psycopg://u:secret@127.0.0.1:1/x"], "cannot read"),
    ],
)
def test_user_errors_are_one_line_naming_the_problem(env, argv, message):
    code, _out, err = run_main(argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert "secret" not in err


def test_an_unknown_collection_is_an_error_naming_those_that_exist(env):
    code, _, err = run_main(["query", "etcd is slow"])
    assert code == 0, err
    err = run_main(["report", "--collection", "runbooks"])[2]
    assert "recorded: sample_kb; ingested: sample_kb" in err
    for argv in (["report", "--collection", "runbooks"], ["query", "x", "--collection", "kb"]):
        code, out, err = run_main(argv)
        assert code == 2, (argv, out)
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "sample_kb" in lines[0], lines[0]  # the name it should have been
    code, out, err = run_main(["report", "--collection", "sample_kb", "--json"])
    assert code == 0, err
    assert json.loads(out)["totals"]["lookups"] == 1
