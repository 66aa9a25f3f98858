"""Shared fixtures: Milvus Lite in a temporary folder, the real default embedder, the sample KB,
and the real PostgreSQL / Milvus test servers of tests/servers.py.

Fakes appear only where a test must force a ranking (``DirectionEmbeddings``, named as such).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.store.connection import close_all_clients

try:  # tests/ on sys.path (no tests/__init__.py) ...
    from servers import ServerUnavailable, start_milvus_server, start_postgres
except ImportError:  # ... or tests/ is a package
    from tests.servers import ServerUnavailable, start_milvus_server, start_postgres

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
RUNBOOKS_EN = SHARED_DATA / "runbooks-en" / "content" / "runbooks"
RUNBOOKS_ZH = SHARED_DATA / "runbooks-zh" / "content.zh" / "runbooks"
TIDB_ZH = SHARED_DATA / "tidb-docs-zh"
SAMPLE_KB = REPO / "langchain_lookup_knowledge" / "sample_kb"


def require_shared(path: Path) -> Path:
    """Skip (with the reason) when ../shared/data is absent, as on a user's fresh clone."""
    if not path.exists():
        pytest.skip(f"shared test data not found at {path}")
    return path


@pytest.fixture(scope="session")
def real_embeddings():
    """The real offline default embedder (pinned MiniLM int8), loaded once per session."""
    return build_embeddings(LookupSettings())


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[LookupSettings]:
    """Settings on a fresh Milvus Lite database and SQLite record file in ``tmp_path``."""
    s = LookupSettings(
        data_dir=tmp_path,
        milvus_uri=str(tmp_path / "milvus.db"),
        collection=f"kb_{uuid.uuid4().hex[:8]}",
        invocation_db_url=f"sqlite:///{tmp_path / 'records.sqlite3'}",
    )
    yield s
    close_all_clients()


@pytest.fixture(scope="session")
def sample_kb_store(tmp_path_factory: pytest.TempPathFactory, real_embeddings):
    """The bundled sample knowledge base, ingested once per session (read-only for tests)."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    root = tmp_path_factory.mktemp("sample_store")
    s = LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection="sample_kb",
        invocation_db_url=f"sqlite:///{root / 'records.sqlite3'}",
    )
    report = ingest_folder(SAMPLE_KB, s, embeddings=real_embeddings)
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


@pytest.fixture(scope="module")
def milvus_server_uri() -> Iterator[str]:
    """A Milvus standalone test server for the module (tests/servers.py); skips, with the
    reason, when it cannot be had. Shared clients are closed with the server."""
    try:
        with start_milvus_server() as uri:
            yield uri
    except ServerUnavailable as exc:
        pytest.skip(f"Milvus server unavailable: {exc.reason}")
    finally:
        close_all_clients()
