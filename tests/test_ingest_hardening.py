"""Ingest hardening (issue 13's ingest side, issue 14's ingest items): one bad thing never costs
the rest.

Real faults throughout: links and FIFOs on the real filesystem, poison files, a local
OpenAI-compatible embedding server that answers NaN / infinity / zero vectors, a subprocess
SIGKILLed mid-write, rows damaged with raw pymilvus, a full tmpfs, a read-only bind mount, a
network namespace without loopback. Milvus Lite in temporary folders, the real embedder.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import struct
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.errors import EmbeddingError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.store.catalog_store import load_catalog
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool

try:  # tests/ on sys.path (no tests/__init__.py) ...
    from agent_fakes import call
    from kb_helpers import write
except ImportError:  # ... or tests/ is a package
    from tests.agent_fakes import call
    from tests.kb_helpers import write

DIM = 8


def runbook(title: str, words: str = "disk space cleanup") -> str:
    return f"---\ntitle: {title}\nkeywords: [{words.split()[0]}]\n---\n# {title}\n\n{words}.\n"


def healthy_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 + 0.01 for b in digest[:DIM]]


@contextlib.contextmanager
def embedding_server(mode: list[str]) -> Iterator[str]:
    """A local OpenAI-compatible ``/v1/embeddings`` answering ``mode[0]`` vectors: "healthy"
    (hash-derived), "nan", "inf" or "zero". ``mode`` is a one-item list the test may change."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            texts = request["input"]
            texts = [texts] if isinstance(texts, str) else texts
            data = []
            for i, text in enumerate(texts):
                vector = {
                    "healthy": healthy_vector(str(text)),
                    "nan": [float("nan")] * DIM,
                    "inf": [float("inf")] + [1.0] * (DIM - 1),
                    "zero": [0.0] * DIM,
                }[mode[0]]
                value: object = vector
                if request.get("encoding_format") == "base64":
                    value = base64.b64encode(struct.pack(f"<{DIM}f", *vector)).decode()
                data.append({"object": "embedding", "index": i, "embedding": value})
            body = json.dumps(
                {
                    "object": "list",
                    "data": data,
                    "model": "m",
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[LookupSettings]:
    s = LookupSettings(
        data_dir=tmp_path,
        milvus_uri=str(tmp_path / "milvus.db"),
        collection=f"kb_{uuid.uuid4().hex[:8]}",
        invocation_db_url=f"sqlite:///{tmp_path / 'records.sqlite3'}",
    )
    yield s
    close_all_clients()


def chunk_keys(settings: LookupSettings) -> list[str]:
    client = open_client(settings)
    if not client.has_collection(settings.collection):
        return []
    rows = client.query(settings.collection, filter='pk != ""', output_fields=["pk"], limit=16384)
    return sorted(r["pk"] for r in rows)


def catalog(settings: LookupSettings) -> dict:
    entries = load_catalog(open_client(settings), settings.resolved_catalog_collection)
    return {e.source: e for e in entries}


# --------------------------------------------------------------------------------------------
# Garbage vectors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", ["nan", "inf", "zero"])
def test_garbage_vectors_are_refused_at_ingest_and_query_and_a_healthy_rerun_repairs(
    settings, tmp_path, garbage
):
    kb = tmp_path / "kb"
    for i in range(3):
        write(kb, f"ops/doc{i}.md", runbook(f"Disk {i}"))
    mode = [garbage]
    with embedding_server(mode) as base_url:
        service = settings.model_copy(
            update={
                "embedding_provider": "openai",
                "openai_base_url": base_url,
                "embedding_max_retries": 0,
            }
        )
        with pytest.raises(EmbeddingError, match="unusable vector"):
            ingest_folder(kb, service, show_progress=False)
        assert chunk_keys(service) == []  # nothing garbage stored
        assert catalog(service) == {}

        mode[0] = "healthy"
        report = ingest_folder(kb, service, show_progress=False)
        assert sorted(report.indexed) == [f"ops/doc{i}.md" for i in range(3)]
        assert len(chunk_keys(service)) == 3

        mode[0] = garbage  # the service breaks again: a lookup says so instead of "no evidence"
        tool = create_lookup_knowledge_tool(service)
        message = tool.invoke(call("disk space cleanup"))
        assert message.status == "error"
        assert "unusable vector" in message.content


class ZeroEmbeddings:
    """FAKE embedder (named as such) whose document vectors are all zeros after the first
    call (the dimension probe), as a broken model would answer: passed straight to
    ingest_folder, past the factory's check."""

    def embed_query(self, text: str) -> list[float]:
        return healthy_vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[0.0] * DIM for _ in texts]


def test_an_embedder_passed_in_is_checked_too(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "ops/doc.md", runbook("Disk"))
    with pytest.raises(EmbeddingError, match=r"chunk ops/doc.md#0 \(all-zero vector"):
        ingest_folder(kb, settings, embeddings=ZeroEmbeddings(), show_progress=False)  # type: ignore[arg-type]
    assert chunk_keys(settings) == []
