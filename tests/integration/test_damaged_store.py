"""A damaged Milvus Lite store never reads as "nothing found": real faults on a real database
(a segment's Parquet file deleted or truncated, ``manifest.json`` or ``schema.json`` overwritten,
every chunk deleted while the catalog still lists the documents) are a ``damaged`` error in the
result, the tool's message and the CLI, with the fix; ingest refuses such a store and
``ingest --rebuild`` repairs it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.store.connection import close_client, open_client
from tests.cli_helpers import run_cli
from tests.conftest import SAMPLE_KB, local_settings
from tests.fakes import call


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, ingest_embeddings) -> Path:
    """A data folder holding the sample knowledge base (closed: its files are complete)."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    root = tmp_path_factory.mktemp("pristine")
    settings = local_settings(root, collection="kb")
    ingest_folder(SAMPLE_KB, settings, embeddings=ingest_embeddings)
    close_client(settings)
    return root


def _chunks(root: Path) -> Path:
    return root / "milvus.db" / "collections" / "kb"


def _delete_segment(root: Path) -> None:
    for data in (_chunks(root) / "partitions").rglob("*.parquet"):
        data.unlink()


def _garbage_manifest(root: Path) -> None:
    (_chunks(root) / "manifest.json").write_text("garbage{", encoding="utf-8")


def _truncate_segment(root: Path) -> None:
    for data in (_chunks(root) / "partitions").rglob("*.parquet"):
        with data.open("r+b") as handle:
            handle.truncate(100)


def _truncate_schema(root: Path) -> None:
    with (_chunks(root) / "schema.json").open("r+b") as handle:
        handle.truncate(10)


FAULTS: dict[str, Callable[[Path], None]] = {
    "segment deleted": _delete_segment,
    "manifest garbage": _garbage_manifest,
    "segment truncated": _truncate_segment,
    "schema truncated": _truncate_schema,
}


@pytest.fixture
def damaged(request, pristine, tmp_path, monkeypatch):
    """A copy of the sample store with one real fault, configured through the environment."""
    root = tmp_path / "data"
    shutil.copytree(pristine, root)
    FAULTS[request.param](root)
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(root))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_COLLECTION", "kb")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", f"sqlite:///{tmp_path / 'r.db'}")
    settings = local_settings(root, collection="kb")
    yield settings
    close_client(settings)


@pytest.mark.parametrize("damaged", list(FAULTS), indirect=True)
def test_lookup_on_a_damaged_store_is_a_damaged_error(damaged, real_embeddings):
    out = build_lookup_graph(damaged, embeddings=real_embeddings).invoke({"query": "pod crashing"})
    assert out["error"] is not None, out["result"]["message"]
    assert out["error"]["kind"] == "damaged"
    assert out["result"]["found"] is False
    assert "is damaged" in out["result"]["message"]
    assert "No knowledge evidence" not in out["result"]["message"]
    assert "ingest --rebuild" in out["error"]["message"]


@pytest.mark.parametrize("damaged", ["segment deleted", "schema truncated"], indirect=True)
def test_the_model_is_told_the_knowledge_base_is_damaged(damaged, real_embeddings):
    tool = create_lookup_knowledge_tool(damaged, embeddings=real_embeddings)
    msg = tool.invoke(call("pod keeps crashing"))
    assert msg.status == "error"
    assert "knowledge base is damaged" in msg.content
    assert "retrying will not help" in msg.content
    assert "Try again later" not in msg.content


@pytest.mark.parametrize("damaged", list(FAULTS), indirect=True)
def test_cli_names_the_database_and_the_fix(damaged):
    code, out, err = run_cli(["query", "pod keeps crashing"])
    assert code == 2, out
    assert err.startswith("lookup-knowledge: error: ")
    assert f"Milvus Lite database {damaged.resolved_milvus_uri} is damaged" in err
    assert "lookup-knowledge ingest --rebuild" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("damaged", ["segment truncated", "schema truncated"], indirect=True)
def test_ingest_refuses_a_damaged_store_and_rebuild_repairs_it(damaged):
    code, _out, err = run_cli(["ingest", str(SAMPLE_KB)])
    assert code == 2
    assert "Traceback" not in err
    assert "is damaged" in err
    assert f"lookup-knowledge ingest --rebuild {SAMPLE_KB}" in err
    assert ".parquet" in err or "schema.json" in err  # what is damaged
    code, out, err = run_cli(["ingest", str(SAMPLE_KB), "--rebuild", "--json"])
    assert code == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["rebuilt"] == ["kb", "kb_catalog", "kb_catalog_vocabulary"]
    assert report["totalChunks"] > 0
    code, out, err = run_cli(["query", "pod keeps crashing and restarting", "--json"])
    assert code == 0, err
    assert json.loads(out)["found"] is True


@pytest.fixture
def emptied(pristine, tmp_path):
    """Whole files, but every chunk deleted while the catalog still lists the documents."""
    root = tmp_path / "data"
    shutil.copytree(pristine, root)
    settings = local_settings(root, collection="kb")
    client = open_client(settings)
    client.delete("kb", filter='pk != ""')
    yield settings
    close_client(settings)


def test_store_that_disagrees_with_its_catalog_is_damaged(emptied, real_embeddings):
    out = build_lookup_graph(emptied, embeddings=real_embeddings).invoke({"query": "pod crashing"})
    assert out["error"] is not None, out["result"]["message"]
    assert out["error"]["kind"] == "damaged"
    assert "holds no chunks while its catalog lists 18 documents" in out["error"]["message"]


def test_a_healthy_store_filtered_to_nothing_is_no_evidence_not_damage(pristine, real_embeddings):
    settings = local_settings(pristine, collection="kb", default_filter={"source": "nope.md"})
    out = build_lookup_graph(settings, embeddings=real_embeddings).invoke({"query": "pod"})
    close_client(settings)
    assert out["error"] is None
    assert out["result"]["evidenceStatus"] == "no_evidence"
