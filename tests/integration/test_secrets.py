"""No secret (Milvus token, OpenAI API key) in logs, traces, retrieval details, records, error
messages or ``repr(settings)`` — on success, on an unreachable Milvus, on a failing embedder.

Every surface is collected as text and searched for recognizable secret strings.
"""

from __future__ import annotations

import json
import traceback

import pytest
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from pydantic import SecretStr

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.errors import EmbeddingError, StoreUnavailableError
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.store.connection import close_client, open_client
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.fakes import call
from tests.faults import failing_embedding_server

MILVUS_TOKEN = "root:tok-MILVUS-SECRET-7f3a9c"
OPENAI_KEY = "sk-OPENAI-SECRET-91bd44e2"
SECRETS = (MILVUS_TOKEN, "tok-MILVUS-SECRET", OPENAI_KEY, "OPENAI-SECRET")


def assert_no_secret(surfaces: dict[str, str]) -> None:
    for where, text in surfaces.items():
        for secret in SECRETS:
            assert secret not in text, f"secret leaked in {where}"


def run_texts(collector: RunCollectorCallbackHandler) -> str:
    return "\n".join(run.model_dump_json() for run in collector.traced_runs)


def records_text(settings: LookupSettings) -> str:
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
    return json.dumps(rows, default=str)


def test_settings_repr_and_dumps_hide_secrets():
    settings = LookupSettings(
        milvus_token=MILVUS_TOKEN,
        openai_api_key=OPENAI_KEY,
        invocation_db_url="postgresql+psycopg://app:pg-PASSWORD@db/x",
    )
    assert_no_secret(
        {
            "repr": repr(settings),
            "str": str(settings),
            "model_dump_json": settings.model_dump_json(),
            "model_dump": str(settings.model_dump()),
        }
    )
    assert "pg-PASSWORD" not in repr(settings)
    assert "pg-PASSWORD" not in str(settings)
    assert settings.milvus_token is not None
    assert settings.milvus_token.get_secret_value() == MILVUS_TOKEN  # still usable


def test_unreachable_milvus_leaks_no_secret(tmp_path, real_embeddings, all_logs):
    settings = LookupSettings(
        data_dir=tmp_path,
        milvus_uri="http://127.0.0.1:1",
        milvus_timeout_s=2,
        milvus_token=MILVUS_TOKEN,
        openai_api_key=OPENAI_KEY,
        invocation_db_url=f"sqlite:///{tmp_path / 'records.sqlite3'}",
    )
    with pytest.raises(StoreUnavailableError) as caught:
        open_client(settings)
    graph = build_lookup_graph(settings, embeddings=real_embeddings)
    collector = RunCollectorCallbackHandler()
    out = graph.invoke({"query": "etcd is slow"}, config={"callbacks": [collector]})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    tool_collector = RunCollectorCallbackHandler()
    message = tool.invoke(call("etcd is slow"), config={"callbacks": [tool_collector]})
    assert message.status == "error"
    assert LookupResult.model_validate(out["result"]).message.startswith(
        "Knowledge retrieval unavailable"
    )
    assert_no_secret(
        {
            "open_client error": "".join(traceback.format_exception(caught.value)),
            "result": json.dumps(out["result"]),
            "retrieval_details": json.dumps(out["retrieval_details"], default=str),
            "graph trace runs": run_texts(collector),
            "tool message": str(message.content),
            "tool trace runs": run_texts(tool_collector),
            "records": records_text(settings),
            "logs": all_logs.text,
            "log args": repr([(r.msg, r.args) for r in all_logs.records]),
        }
    )
    assert "127.0.0.1:1" in str(message.content)  # the error is still informative


def test_lookup_with_a_milvus_token_leaks_no_secret(sample_kb_store, real_embeddings, all_logs):
    settings = sample_kb_store.model_copy(
        update={
            "milvus_token": SecretStr(MILVUS_TOKEN),
            "openai_api_key": SecretStr(OPENAI_KEY),
            "invocation_db_url": sample_kb_store.resolved_invocation_db_url.replace(
                "records.sqlite3", "secret-records.sqlite3"
            ),
        }
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    collector = RunCollectorCallbackHandler()
    try:
        message = tool.invoke(
            call("my pod keeps crashing and restarting"), config={"callbacks": [collector]}
        )
    finally:
        close_client(settings)
    assert message.status == "success"
    assert message.artifact["found"]
    assert message.artifact["retrievalTrace"]["pathUsed"] == "vectorstore"
    assert_no_secret(
        {
            "tool message": str(message.content),
            "artifact": json.dumps(message.artifact, default=str),
            "trace runs": run_texts(collector),
            "records": records_text(settings),
            "logs": all_logs.text,
            "log args": repr([(r.msg, r.args) for r in all_logs.records]),
        }
    )


@pytest.mark.parametrize("behaviour", ["500", "echo401"])
def test_failing_embedding_service_leaks_no_api_key(settings, all_logs, behaviour):
    with failing_embedding_server(behaviour) as (base_url, requests):
        settings = settings.model_copy(
            update={
                "embedding_provider": "openai",
                "openai_base_url": base_url,
                "openai_api_key": SecretStr(OPENAI_KEY),
                "milvus_token": SecretStr(MILVUS_TOKEN),
                "embedding_max_retries": 0,
                "embedding_timeout_s": 2,
            }
        )
        with pytest.raises(EmbeddingError) as caught:
            build_embeddings(settings).embed_query("disk full")
        tool = create_lookup_knowledge_tool(settings)
        collector = RunCollectorCallbackHandler()
        message = tool.invoke(call("disk full"), config={"callbacks": [collector]})
    assert requests  # the key really was sent to the service
    assert message.status == "error"
    assert "embedding service" in message.content
    assert_no_secret(
        {
            "error": str(caught.value),
            "error chain": "".join(traceback.format_exception(caught.value)),
            "tool message": str(message.content),
            "trace runs": run_texts(collector),
            "logs": all_logs.text,
            "log args": repr([(r.msg, r.args) for r in all_logs.records]),
        }
    )


def test_cli_shows_the_records_url_without_its_password():
    from langchain_lookup_knowledge.cli.demo import hide_password

    shown = hide_password("postgresql+psycopg://app:pg-PASSWORD@db:5432/records")
    assert "pg-PASSWORD" not in shown
    assert shown.startswith("postgresql+psycopg://app:")
    assert hide_password("sqlite:////tmp/records.sqlite3") == "sqlite:////tmp/records.sqlite3"
