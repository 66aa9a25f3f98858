"""Credentials inside a URL (``http://user:password@host`` as ``milvus_uri`` or
``openai_base_url``, a PostgreSQL records URL) never show: not in ``settings.model_dump()``, CLI
errors, the tool message the model reads, records, traces or DEBUG logs (issue 13, "Isolation and
secrets"). Each sink's text is collected and searched for the password.
"""

from __future__ import annotations

import json
import traceback

import pytest
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.redaction import redact
from langchain_lookup_knowledge.store.connection import connection_args, open_client
from tests.fakes import call
from tests.faults import failing_embedding_server, run_cli

PG_PASSWORD = "pg-URL-SECRET-5d1e"
MILVUS_PASSWORD = "mv-URL-SECRET-8c2a"
OPENAI_PASSWORD = "oa-URL-SECRET-3f9b"
PASSWORDS = (PG_PASSWORD, MILVUS_PASSWORD, OPENAI_PASSWORD)


def assert_no_password(surfaces: dict[str, str]) -> None:
    for where, text in surfaces.items():
        for secret in PASSWORDS:
            assert secret not in text, f"URL password leaked in {where}"


def test_settings_dumps_and_repr_mask_url_passwords():
    settings = LookupSettings(
        milvus_uri=f"http://root:{MILVUS_PASSWORD}@127.0.0.1:19530",
        openai_base_url=f"http://emb:{OPENAI_PASSWORD}@127.0.0.1:8080/v1",
        invocation_db_url=f"postgresql+psycopg://app:{PG_PASSWORD}@127.0.0.1:5432/records",
    )
    dumped = settings.model_dump()
    assert_no_password(
        {
            "model_dump": str(dumped),
            "model_dump_json": settings.model_dump_json(),
            "repr": repr(settings),
            "str": str(settings),
        }
    )
    # The user and host stay visible; the settings themselves still hold the real value.
    assert dumped["invocation_db_url"] == "postgresql+psycopg://app:***@127.0.0.1:5432/records"
    assert dumped["milvus_uri"] == "http://root:***@127.0.0.1:19530"
    assert settings.invocation_db_url is not None
    assert PG_PASSWORD in settings.invocation_db_url


def run_texts(collector: RunCollectorCallbackHandler) -> str:
    return "\n".join(run.model_dump_json() for run in collector.traced_runs)


def log_texts(caplog) -> dict[str, str]:
    return {
        "logs": caplog.text,
        "log args": repr([(r.msg, r.args) for r in caplog.records]),
    }


def test_unreachable_milvus_and_embedder_with_url_passwords_leak_nothing(tmp_path, all_logs):
    """Milvus, the embedding service and the records database all named by URLs with
    passwords; Milvus refuses, the embedder answers 500, PostgreSQL is not there."""
    with failing_embedding_server("500") as (base_url, requests):
        settings = LookupSettings(
            data_dir=tmp_path,
            milvus_uri=f"http://root:{MILVUS_PASSWORD}@127.0.0.1:1",
            milvus_timeout_s=2,
            embedding_provider="openai",
            openai_base_url=base_url.replace("http://", f"http://emb:{OPENAI_PASSWORD}@"),
            embedding_max_retries=0,
            embedding_timeout_s=2,
            invocation_db_url=f"postgresql+psycopg://app:{PG_PASSWORD}@127.0.0.1:1/records",
        )
        graph = build_lookup_graph(settings)
        collector = RunCollectorCallbackHandler()
        out = graph.invoke({"query": "etcd is slow"}, config={"callbacks": [collector]})
        tool = create_lookup_knowledge_tool(settings)
        tool_collector = RunCollectorCallbackHandler()
        message = tool.invoke(call("etcd is slow"), config={"callbacks": [tool_collector]})
        with pytest.raises(StoreUnavailableError) as caught:
            open_client(settings)
    assert requests  # the embedding service was asked (with its credentials)
    assert message.status == "error"
    assert "embedding service http://127.0.0.1:" in message.content  # still names what failed
    result = LookupResult.model_validate(out["result"])
    assert result.retrieval_trace.recording["status"] == "error"
    assert_no_password(
        {
            "open_client error": "".join(traceback.format_exception(caught.value)),
            "result": result.model_dump_json(),
            "retrieval_details": json.dumps(out["retrieval_details"], default=str),
            "graph trace runs": run_texts(collector),
            "tool message": str(message.content),
            "tool artifact": json.dumps(message.artifact, default=str),
            "tool trace runs": run_texts(tool_collector),
            **log_texts(all_logs),
        }
    )


def test_records_of_a_milvus_url_with_a_password_hold_no_password(
    tmp_path, real_embeddings, all_logs
):
    settings = LookupSettings(
        data_dir=tmp_path,
        milvus_uri=f"http://root:{MILVUS_PASSWORD}@127.0.0.1:1",
        milvus_timeout_s=2,
        invocation_db_url=f"sqlite:///{tmp_path / 'records.sqlite3'}",
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    message = tool.invoke(call("etcd is slow"))
    assert message.status == "error"
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
    assert len(rows) == 1
    assert "127.0.0.1:1" in rows[0]["error"]
    assert_no_password(
        {
            "tool message": str(message.content),
            "records": json.dumps(rows, default=str),
            **log_texts(all_logs),
        }
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["query", "disk full", "--uri", f"http://root:{MILVUS_PASSWORD}@127.0.0.1:1"], {}),
        (["ingest", ".", "--uri", f"http://root:{MILVUS_PASSWORD}@127.0.0.1:1"], {}),
        (
            ["query", "disk full", "--uri", "http://127.0.0.1:1"],
            {"LOOKUP_KNOWLEDGE_INVOCATION_DB_URL": f"postgresql://a:{PG_PASSWORD}@127.0.0.1:1/r"},
        ),
    ],
)
def test_cli_errors_show_no_url_password(tmp_path, args, env):
    proc = run_cli(*args, data_dir=tmp_path, env=env)
    assert proc.returncode != 0
    assert "127.0.0.1:1" in proc.stdout + proc.stderr
    assert_no_password({"stdout": proc.stdout, "stderr": proc.stderr})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://u:p@ss@h:1/x", "http://u:***@h:1/x"),  # '@' inside the password
        ("a http://u:p1@h1 b https://v:p2@h2/y", "a http://u:***@h1 b https://v:***@h2/y"),
        ("postgresql://postgres@127.0.0.1/db", "postgresql://postgres@127.0.0.1/db"),  # no password
        ("'grpc://u:pw@h'", "'grpc://u:***@h'"),
        ("no url here: a:b@c", "no url here: a:b@c"),
    ],
)
def test_redact_masks_every_url_password_and_only_that(text, expected):
    assert redact(text) == expected


def test_milvus_url_credentials_become_the_token_and_leave_the_uri():
    args = connection_args(LookupSettings(milvus_uri="http://root:Mil%40vus@127.0.0.1:19530"))
    assert args["uri"] == "http://127.0.0.1:19530"
    assert args["token"] == "root:Mil@vus"


def test_a_bench_child_process_gets_the_real_urls():
    """model_dump masks the passwords; the settings handed to a child process must not."""
    from langchain_lookup_knowledge.evaluation.cold_start import settings_json

    settings = LookupSettings(
        milvus_uri=f"http://root:{MILVUS_PASSWORD}@127.0.0.1:19530",
        invocation_db_url=f"postgresql+psycopg://app:{PG_PASSWORD}@127.0.0.1:5432/records",
    )
    child = LookupSettings.model_validate_json(settings_json(settings))
    assert child.milvus_uri == settings.milvus_uri
    assert child.invocation_db_url == settings.invocation_db_url
