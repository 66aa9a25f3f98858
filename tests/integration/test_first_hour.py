"""What a new user's first hour runs into: each mistake gets one clear line, never a traceback.

A folder with no markdown, a misspelled ``LOOKUP_KNOWLEDGE_*`` variable, a records URL
SQLAlchemy cannot open, output piped into ``head``: real CLI runs on Milvus Lite in a temporary
folder (the pipe case in a child process, as a shell runs it).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge import settings as settings_module
from langchain_lookup_knowledge.cli import build_parser, unknown_setting_variables
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.settings import environment as settings_environment
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.cli_helpers import run_cli
from tests.fakes import call
from tests.kb_helpers import write


def test_ingest_of_a_folder_without_markdown_is_refused_naming_it(tmp_path):
    folder = tmp_path / "notes"
    write(folder, "todo.txt", "not markdown\n")
    write(folder, ".hidden/a.md", "# hidden\n")
    db = tmp_path / "m.db"
    code, out, err = run_cli(["ingest", str(folder), "--uri", str(db)])
    close_all_clients()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("lookup-knowledge: error: no markdown files (.md, .markdown")
    assert str(folder) in lines[0]
    assert "Traceback" not in err
    assert out == ""
    assert not db.exists()  # nothing created for nothing


def test_a_folder_emptied_on_purpose_is_pruned(tmp_path):
    folder = tmp_path / "kb"
    page = write(folder, "a.md", "# A\n\nDisk full on the build agent.\n")
    db = str(tmp_path / "m.db")
    assert run_cli(["ingest", str(folder), "--uri", db])[0] == 0
    page.unlink()
    code, out, err = run_cli(["ingest", str(folder), "--uri", db, "--prune"])
    close_all_clients()
    assert code == 0, err
    assert "1 pruned" in out


def test_a_misspelled_setting_variable_is_named_with_the_nearest_setting():
    warnings = unknown_setting_variables(
        {
            "LOOKUP_KNOWLEDGE_COLECTION": "kb",
            "LOOKUP_KNOWLEDGE_COLLECTION": "kb",
            "LOOKUP_KNOWLEDGE_WHATEVER": "1",
            "LOOKUP_KNOWLEDGE_TEST_POSTGRES_URL": "postgresql://x",  # the suite's own
            "PATH": "/usr/bin",
        }
    )
    assert warnings == [
        "LOOKUP_KNOWLEDGE_COLECTION is not a setting, ignored "
        "(did you mean LOOKUP_KNOWLEDGE_COLLECTION?)",
        "LOOKUP_KNOWLEDGE_WHATEVER is not a setting, ignored",
    ]


TOPK_WARNING = (
    "LOOKUP_KNOWLEDGE_TOPK is not a setting, ignored (did you mean LOOKUP_KNOWLEDGE_TOP_K?)"
)


@pytest.fixture
def no_variable_warned_yet(monkeypatch):
    """This process has warned about no unknown variable yet (each is warned once)."""
    monkeypatch.setattr(settings_environment, "_warned_variables", set())


def settings_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == settings_module.__name__]


def test_the_cli_warns_about_a_misspelled_setting_variable_once(
    tmp_path, monkeypatch, caplog, no_variable_warned_yet
):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOPK", "3")
    caplog.set_level(logging.WARNING)
    code, _, err = run_cli(["query", "--uri", str(tmp_path / "m.db")])  # no question: exit 2
    assert code == 2
    assert f"lookup-knowledge: warning: {TOPK_WARNING}" in err.splitlines()
    assert err.count("LOOKUP_KNOWLEDGE_TOPK") == 1
    assert settings_warnings(caplog) == []  # the settings it built do not log it again


def test_a_python_user_is_warned_once_about_a_misspelled_setting_variable(
    monkeypatch, caplog, no_variable_warned_yet
):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOPK", "3")
    caplog.set_level(logging.WARNING)
    assert LookupSettings().top_k == LookupSettings.model_fields["top_k"].default
    LookupSettings(collection="runbooks")
    assert settings_warnings(caplog) == [TOPK_WARNING]
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_COLECTION", "kb")  # a new typo is warned too
    LookupSettings()
    assert settings_warnings(caplog) == [
        TOPK_WARNING,
        "LOOKUP_KNOWLEDGE_COLECTION is not a setting, ignored "
        "(did you mean LOOKUP_KNOWLEDGE_COLLECTION?)",
    ]


def test_output_piped_into_a_reader_that_stops_is_not_a_traceback(tmp_path):
    folder = tmp_path / "kb"
    write(folder, "ops/disk.md", "# Disk full\n\nRun `docker system prune` on the agent.\n")
    db = str(tmp_path / "m.db")
    cli = [sys.executable, "-m", "langchain_lookup_knowledge.cli"]
    env = {**os.environ, "HOME": str(tmp_path)}
    # one process at a time on a Milvus Lite file: the ingest runs as a child too
    ingest = subprocess.run(
        [*cli, "ingest", str(folder), "--uri", db],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert ingest.returncode == 0, ingest.stderr
    # `lookup-knowledge query ... | head -0`: the reader is gone before the first line; stdout
    # buffered as a user's shell has it (not PYTHONUNBUFFERED), so the output waits for exit
    env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run(
        [*cli, "query", "--uri", db, "--no-record", "disk full", "docker prune"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        env=env,
    )
    os.close(write_end)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "BrokenPipeError" not in proc.stderr
    assert proc.returncode == 141


def test_the_demo_help_names_the_collection_the_demo_writes():
    (sub,) = [a for a in build_parser()._actions if a.dest == "command"]
    demo_help = " ".join(sub.choices["demo"].format_help().split())  # type: ignore[attr-defined]
    assert "collection name (default: the configured one, `knowledge`)" in demo_help
    query_help = " ".join(sub.choices["query"].format_help().split())  # type: ignore[attr-defined]
    assert "default: the configured retrieval_mode, hybrid" in query_help


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgres://lookup:pw-SECRET@db/lookup", "unknown database 'postgres' in the URL"),
        ("pg.internal/lookup", "not a database URL"),
        ("postgresql+psycopg2://lookup@db/lookup", "the driver of 'postgresql+psycopg2' is not"),
    ],
)
def test_a_records_url_a_new_user_gets_wrong_is_refused_when_the_settings_are_built(
    url, problem, monkeypatch
):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", url)
    with pytest.raises(ConfigurationError) as caught:
        LookupSettings()
    message = str(caught.value)
    assert "invocation_db_url=<hidden> (from LOOKUP_KNOWLEDGE_INVOCATION_DB_URL)" in message
    assert problem in message
    assert "use postgresql+psycopg://" in message
    assert "pw-SECRET" not in message


def test_the_records_urls_the_readme_shows_are_accepted(tmp_path):
    for url in (
        "postgresql+psycopg://lookup@pg.internal/lookup",
        f"sqlite:///{tmp_path / 'records.sqlite3'}",
    ):
        assert LookupSettings(invocation_db_url=url).invocation_db_url == url


def test_a_lookup_that_failed_is_an_error_of_the_report_not_a_knowledge_gap(
    kb_settings, real_embeddings
):
    from langchain_lookup_knowledge import create_lookup_knowledge_tool
    from langchain_lookup_knowledge.records.report import build_report

    settings = kb_settings.model_copy(update={"record_wait": True, "record_timeout_s": 30.0})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    assert tool.invoke({"query": "recipe for chocolate cake"})  # no evidence: a real gap
    # a new user's typo in the collection name: the lookup fails, the knowledge base is fine
    misnamed = settings.model_copy(update={"collection": "knowlege"})
    failing = create_lookup_knowledge_tool(misnamed, embeddings=real_embeddings)
    reply = failing.invoke(call("disk full", "1"))
    assert reply.status == "error"
    report = build_report(settings, _last_minutes(), embeddings=real_embeddings)
    assert report["totals"]["errors"] == 1
    questions = [e.lower() for g in report["gaps"]["groups"] for e in g["examples"]]
    assert "recipe for chocolate cake" in questions
    assert "disk full" not in questions
    assert report["gaps"]["lookups"] == 1
    # the text says whose catalog the never-cited count is of (a report spans collections)
    from langchain_lookup_knowledge.records.text import render_text

    catalog = report["documents"]["catalog_collection"]
    assert catalog == settings.collection
    assert f"catalog documents of collection {catalog!r}" in render_text(report)


def _last_minutes():
    from datetime import UTC, datetime, timedelta

    from langchain_lookup_knowledge.records.period import Period

    now = datetime.now(UTC)
    return Period(now - timedelta(minutes=30), now + timedelta(minutes=1))


def test_eval_of_a_collection_never_ingested_is_refused_not_scored_zero(tmp_path):
    questions = write(tmp_path, "q.jsonl", '{"q": "disk full", "rel": ["disk-full"]}\n')
    db = tmp_path / "m.db"
    code, out, err = run_cli(
        ["eval", "queries", str(questions), "--uri", str(db), "--collection", "knowlege"]
    )
    close_all_clients()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "collection 'knowlege' does not exist" in lines[0]
    assert "lookup-knowledge ingest PATH" in lines[0]
    assert out == ""


def test_a_setting_variable_that_is_not_json_is_named_with_the_parse_error(monkeypatch):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RERANK_WEIGHTS", "{similarity_share: 0.5}")
    with pytest.raises(ConfigurationError) as caught:
        LookupSettings()
    assert str(caught.value) == (
        "LookupSettings: rerank_weights (from LOOKUP_KNOWLEDGE_RERANK_WEIGHTS) is not valid "
        "JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


def test_a_misspelled_collection_is_told_which_collections_were_ingested(tmp_path):
    folder = tmp_path / "kb"
    write(folder, "a.md", "# A\n\nDisk full on the build agent.\n")
    db = str(tmp_path / "m.db")
    assert run_cli(["ingest", str(folder), "--uri", db, "--collection", "runbooks"])[0] == 0
    code, out, err = run_cli(
        ["query", "--uri", db, "--collection", "runbook", "--no-record", "disk full"]
    )
    close_all_clients()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "collection 'runbook' does not exist" in lines[0]
    # the chunk collection, not its catalog or vocabulary companions
    assert lines[0].endswith("; ingested there: runbooks")


def test_a_server_address_without_its_scheme_is_told_the_uri_to_use(tmp_path):
    code, out, err = run_cli(["query", "--uri", "localhost:19530", "--no-record", "disk full"])
    close_all_clients()
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [
        "lookup-knowledge: error: Milvus Lite database path must end in .db, got "
        "'localhost:19530' (a Milvus server is named with its scheme: http://localhost:19530)"
    ]
