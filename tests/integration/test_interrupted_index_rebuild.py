"""A process killed while an ingest rebuilds the BM25 index: what a fresh process then gets.

Milvus Lite drops every index of a collection when one is dropped, so a process that dies
between the drop and the create leaves a collection with no index at all: Milvus can neither
load nor search it. The death is real: a child process runs the ingest with an INJECTED FAULT
(its ``MilvusClient.create_index`` SIGKILLs the process, the point right after the drop), on real
Milvus Lite with the real embedder. Then, in this process: a lookup (the tool, the CLI) fails
with an error that names the collection, the missing indexes and the fix, and the next ingest
builds them again with nothing re-embedded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from milvus_lite.server_manager import server_manager_instance

from langchain_lookup_knowledge.errors import MissingIndexError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.index_record import INDEXES_PROPERTY, recorded_indexes
from langchain_lookup_knowledge.store.schema import describe_chunk_collection
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.cli_helpers import run_cli
from tests.conftest import local_settings
from tests.fakes import call
from tests.kb_helpers import write

REPO = Path(__file__).resolve().parents[2]
KB = {
    "limits/quota.md": "---\ntitle: Quota\n---\n# Quota\n\nRaise the quota when it is reached.\n",
    "storage/volume.md": "---\ntitle: Volume\n---\n# Volume\n\nRotate the logs of the volume.\n",
}
COLLECTION = "interrupted"


def ingest_json(settings: LookupSettings) -> dict[str, Any]:
    """``lookup-knowledge ingest KB --json`` on ``settings``' collection: its report."""
    code, out, err = run_cli(
        [
            "ingest",
            str(Path(settings.data_dir) / "kb"),
            "--uri",
            settings.milvus_uri,
            "--collection",
            settings.collection,
            "--json",
        ]
    )
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


# INJECTED FAULT: the child dies at the first index creation of its ingest, i.e. after the
# BM25 rebuild released the collection and dropped its indexes (a kill -9 at that moment).
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from pymilvus import MilvusClient
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.settings import LookupSettings

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    MilvusClient.create_index = killed
    root = Path(sys.argv[1])
    settings = LookupSettings(
        data_dir=root, milvus_uri=str(root / "milvus.db"), collection=sys.argv[2],
        record_invocations=False, bm25_b=0.0,  # explicit: this ingest rebuilds the index
    )
    ingest_folder(root / "kb", settings, show_progress=False)
    """
)


def interrupt_a_rebuild(
    root: Path, settings: LookupSettings, ingest_embeddings: Embeddings
) -> LookupSettings:
    """Ingest ``KB`` into ``settings``' collection, then cut its BM25 index rebuild short."""
    for rel, text in KB.items():
        write(root / "kb", rel, text)
    ingest_folder(root / "kb", settings, embeddings=ingest_embeddings, show_progress=False)
    # pymilvus keeps this process's embedded server (and the database lock) until released
    close_all_clients()
    server_manager_instance.release_server(settings.resolved_milvus_uri)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), settings.collection],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[
        -2000:
    ]  # it died at the injected fault
    client = open_client(settings)
    assert client.has_collection(settings.collection)
    assert client.list_indexes(settings.collection) == []  # Lite dropped the dense index too
    return settings


@pytest.fixture
def interrupted(tmp_path: Path, ingest_embeddings: Embeddings) -> Iterator[LookupSettings]:
    """A collection whose BM25 index rebuild was cut short by a killed process."""
    settings = local_settings(tmp_path, collection=COLLECTION, bm25_defaults="engine")
    yield interrupt_a_rebuild(tmp_path, settings, ingest_embeddings)
    close_all_clients()


def test_a_lookup_on_it_fails_clearly_in_the_tool_and_the_cli(
    interrupted: LookupSettings, real_embeddings: Embeddings, monkeypatch: pytest.MonkeyPatch
):
    with pytest.raises(MissingIndexError) as caught:
        describe_chunk_collection(open_client(interrupted), interrupted, None)
    message = str(caught.value)
    assert f"collection {COLLECTION!r}" in message
    assert "'vector'" in message
    assert "'sparse'" in message
    assert "lookup-knowledge ingest" in message
    assert "nothing is re-embedded" in message

    tool = create_lookup_knowledge_tool(interrupted, embeddings=real_embeddings)
    reply = tool.invoke(call("quota", "c1"))
    assert reply.status == "error"  # the agent gets a tool error, not an exception
    assert COLLECTION in reply.content
    assert "lookup-knowledge ingest" in reply.content
    assert "Traceback" not in reply.content

    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(interrupted.data_dir))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_INVOCATIONS", "false")
    code, out, err = run_cli(
        ["query", "--uri", interrupted.milvus_uri, "--collection", COLLECTION, "quota"]
    )
    assert code != 0
    assert "has no index on 'vector' and 'sparse'" in err
    assert "lookup-knowledge ingest" in err
    assert "Traceback" not in out + err

    code, out, err = run_cli(
        ["query", "--uri", interrupted.milvus_uri, "--collection", COLLECTION, "quota", "--json"]
    )
    assert code == 2
    assert json.loads(out) == {  # a script parsing stdout reads the failure too
        "error": {
            "type": "MissingIndexError",
            "message": err.strip().removeprefix("lookup-knowledge: error: "),
        }
    }


def test_the_next_ingest_builds_the_missing_indexes_and_re_embeds_nothing(
    interrupted: LookupSettings, real_embeddings: Embeddings, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(interrupted.data_dir))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_INVOCATIONS", "false")
    report = ingest_json(interrupted)
    assert report["indexesRepaired"] == ["vector", "sparse"]
    assert report["chunksWritten"] == 0
    assert report["unchanged"] == len(KB)
    assert report["totalChunks"] == len(KB)

    layout = describe_chunk_collection(open_client(interrupted), interrupted, None)
    assert layout.has_bm25
    assert layout.index_type == interrupted.index_type
    tool = create_lookup_knowledge_tool(interrupted, embeddings=real_embeddings)
    reply = tool.invoke(call("how do I raise the quota", "c2"))
    assert reply.status == "success"
    assert reply.artifact["found"] is True
    assert reply.artifact["evidenceBlocks"][0]["source"] == "limits/quota.md"

    again = ingest_json(interrupted)
    assert again["indexesRepaired"] == []  # whole again: nothing to repair


def test_the_repair_builds_the_indexes_the_collection_had_not_todays_settings(
    tmp_path: Path, ingest_embeddings: Embeddings, monkeypatch: pytest.MonkeyPatch
):
    # built with an HNSW dense index and the engine's BM25 defaults ...
    built = local_settings(
        tmp_path, collection=COLLECTION, bm25_defaults="engine", index_type="HNSW", hnsw_m=8
    )
    interrupt_a_rebuild(tmp_path, built, ingest_embeddings)
    # ... repaired by an ingest with today's defaults (FLAT, BM25 auto: 0.9 / 0.4 for English)
    today = local_settings(tmp_path, collection=COLLECTION)
    assert (today.index_type, today.bm25_defaults) == ("FLAT", "auto")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_INVOCATIONS", "false")
    report = ingest_json(today)
    assert report["indexesRepaired"] == ["vector", "sparse"]
    assert report["chunksWritten"] == 0
    client = open_client(today)
    vector = client.describe_index(COLLECTION, "vector")
    assert (vector["index_type"], vector["params"]["M"]) == ("HNSW", 8)  # not FLAT, nor M 16
    assert report["bm25Index"] == {}  # the engine's, as built: not what auto builds today
    assert describe_chunk_collection(client, today, None).index_type == "HNSW"
    close_all_clients()


def test_a_collection_that_recorded_no_index_is_repaired_with_the_settings_and_a_warning(
    tmp_path: Path,
    ingest_embeddings: Embeddings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
):
    settings = local_settings(tmp_path, collection=COLLECTION, bm25_defaults="engine")
    for rel, text in KB.items():
        write(tmp_path / "kb", rel, text)
    ingest_folder(tmp_path / "kb", settings, embeddings=ingest_embeddings, show_progress=False)
    client = open_client(settings)
    assert set(recorded_indexes(client.describe_collection(COLLECTION), COLLECTION)) == {
        "vector",
        "sparse",
    }  # recorded when it was created
    # an earlier release's collection (no record) whose indexes went another way
    client.drop_collection_properties(COLLECTION, property_keys=[INDEXES_PROPERTY])
    client.release_collection(COLLECTION)
    while client.list_indexes(COLLECTION):  # Milvus Lite drops them all with the first
        client.drop_index(COLLECTION, client.list_indexes(COLLECTION)[0])
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_INVOCATIONS", "false")
    report = ingest_json(settings)
    assert report["indexesRepaired"] == ["vector", "sparse"]
    # the ingest's settings (the CLI's: bm25_defaults=auto), as a new English collection's
    assert report["bm25Index"] == {"bm25_k1": 0.9, "bm25_b": 0.4}
    warned = [r.getMessage() for r in caplog.records if "recorded no index" in r.getMessage()]
    assert len(warned) == 2
    assert "building it as the settings build a new collection's" in warned[0]
    recorded = recorded_indexes(open_client(settings).describe_collection(COLLECTION), COLLECTION)
    assert recorded["vector"]["index_type"] == settings.index_type  # recorded from now on
    close_all_clients()


def test_a_new_hnsw_collection_on_milvus_lite_is_built_with_its_hnsw_settings(
    tmp_path: Path, ingest_embeddings: Embeddings
):
    settings = local_settings(
        tmp_path, collection=COLLECTION, index_type="HNSW", hnsw_m=8, hnsw_ef_construction=64
    )
    write(tmp_path / "kb", "limits/quota.md", KB["limits/quota.md"])
    ingest_folder(tmp_path / "kb", settings, embeddings=ingest_embeddings, show_progress=False)
    client = open_client(settings)
    # Milvus Lite reads only nested index params: flat ones alone were dropped in silence
    assert client.describe_index(COLLECTION, "vector")["params"] == {"M": 8, "efConstruction": 64}
    recorded = recorded_indexes(client.describe_collection(COLLECTION), COLLECTION)
    assert recorded["vector"]["params"] == {"M": 8, "efConstruction": 64}
    close_all_clients()
