"""``LookupSettings`` is checked when it is built: every bad value, alone or in a combination
that cannot work, is named (field and value) in one ``ConfigurationError``, from arguments, env
vars and assignment alike, before a lookup or an ingest could tell the model "unavailable".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.errors import ConfigurationError
from tests.faults import run_cli


def problem(**values: Any) -> str:
    with pytest.raises(ConfigurationError) as caught:
        LookupSettings(**values)
    return str(caught.value)


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"chunk_overlap": 500}, ["chunk_overlap=500", "chunk_size=1000"]),
        ({"chunk_size": 200, "chunk_overlap": 150}, ["chunk_overlap=150", "chunk_size=200"]),
        ({"top_k": 10, "candidate_k": 8}, ["candidate_k=8", "top_k=10"]),
        ({"catalog_collection": "knowledge"}, ["catalog_collection='knowledge'", "collection="]),
        ({"content_field": "vector"}, ["content_field='vector'", "vector_field='vector'"]),
        ({"source_field": "category"}, ["source_field='category'", "category_field='category'"]),
        (
            {"embedding_provider": "openai"},
            ["embedding_provider='openai'", "openai_base_url=None", "openai_api_key=None"],
        ),
    ],
)
def test_settings_that_cannot_work_together_are_named_with_their_values(
    values: dict[str, Any], named: list[str]
) -> None:
    message = problem(**values)
    for part in named:
        assert part in message


def test_every_bad_setting_is_named_in_one_error() -> None:
    message = problem(
        top_k=0,  # out of range on its own
        embedding_batch_size=0,
        chunk_overlap=800,
        content_field="pk",
        default_filter={"tenant or 1==1": "a"},
    )
    for part in [
        "top_k=0",
        "embedding_batch_size=0",
        "chunk_overlap=800",
        "content_field='pk'",
        "default_filter=",
        "invalid field name 'tenant or 1==1'",
    ]:
        assert part in message
    assert "\n" not in message  # one line: the CLI prints it whole


def test_openai_needs_a_key_or_a_base_url_and_assignment_is_checked_too() -> None:
    assert LookupSettings(embedding_provider="openai", openai_api_key="sk-x").openai_api_key
    local = LookupSettings(openai_base_url="http://127.0.0.1:9/v1")
    local.embedding_provider = "openai"  # a keyless OpenAI-compatible server
    bare = LookupSettings()
    with pytest.raises(ConfigurationError, match="embedding_provider=openai needs openai_api_key"):
        bare.embedding_provider = "openai"
    assert bare.embedding_provider == "auto"  # the failed assignment changed nothing


def test_values_that_agree_are_accepted() -> None:
    s = LookupSettings(
        top_k=10,
        candidate_k=10,
        chunk_size=1000,
        chunk_overlap=499,
        category_field=None,
        source_field=None,
        default_filter={'metadata["tenant"]': ["a", "b"], "level": [1, 2]},
    )
    assert (s.candidate_k, s.chunk_overlap, s.rerank_pool) == (10, 499, 10)
    assert s.default_filter == {'metadata["tenant"]': ["a", "b"], "level": [1, 2]}


def test_env_vars_are_checked_at_construction_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOP_K", "0")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_CHUNK_OVERLAP", "600")
    message = problem()
    assert "top_k='0' (from LOOKUP_KNOWLEDGE_TOP_K)" in message
    assert "chunk_overlap=600" in message
    assert "chunk_size=1000" in message


def test_the_tool_is_never_built_on_bad_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: the tool was built, and every lookup told the model retrieval was unavailable."""
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_CHUNK_OVERLAP", "600")
    with pytest.raises(ConfigurationError, match="chunk_overlap must be below chunk_size // 2"):
        create_lookup_knowledge_tool()
    assert list(tmp_path.iterdir()) == []  # nothing opened, nothing written


def test_assignment_is_checked_and_leaves_the_settings_unchanged() -> None:
    s = LookupSettings()
    with pytest.raises(ConfigurationError, match=r"chunk_size=1000 and chunk_overlap=600"):
        s.chunk_overlap = 600
    with pytest.raises(ConfigurationError, match="top_k=0"):
        s.top_k = 0
    assert (s.chunk_overlap, s.top_k) == (150, 5)
    s.candidate_k = 5
    assert s.rerank_pool == 5


def test_model_validate_is_checked_like_the_constructor() -> None:
    """A dict of settings (a config file, another settings' model_dump) gets the same error."""
    base = LookupSettings().model_dump()
    with pytest.raises(ConfigurationError, match=r"chunk_size=1000 and chunk_overlap=600"):
        LookupSettings.model_validate(base | {"chunk_overlap": 600})
    assert LookupSettings.model_validate(base | {"top_k": 7}).top_k == 7


def test_secret_values_never_appear_in_the_error() -> None:
    message = problem(
        openai_api_key=12345678,
        invocation_db_url=["postgresql://u:hunter2@db/x"],
        milvus_uri=["http://root:s3cret@milvus:19530"],
    )
    assert "openai_api_key=<hidden>" in message
    assert "invocation_db_url=<hidden>" in message
    assert "milvus_uri=" in message
    for secret in ("12345678", "hunter2", "s3cret"):
        assert secret not in message


def test_the_cli_prints_one_line_naming_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_CHUNK_OVERLAP", "600")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_CANDIDATE_K", "2")
    done = run_cli("query", "disk full", "--no-record", data_dir=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "chunk_overlap=600" in done.stderr
    assert "candidate_k=2" in done.stderr
