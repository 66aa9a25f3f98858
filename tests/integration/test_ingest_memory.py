"""An ingest's memory: one embedding model per ingest, and freed memory handed back.

The model is the largest thing an ingest holds (about 165 MB resident for the bundled one); the
judgement profile measured at the end of an ingest must read with the ingest's own model, not
load a second one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import onnxruntime
import pytest

from langchain_lookup_knowledge.core.memory import _malloc_trim, release_free_memory
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.conftest import local_settings
from tests.kb_helpers import write


def test_an_ingest_loads_the_embedding_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions: list[str] = []
    real_session = onnxruntime.InferenceSession

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        sessions.append(str(path))
        return real_session(path, *args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", counted)
    kb = tmp_path / "kb"
    write(kb, "db/replica-lag.md", "# Replica lag\n\nCheck the replication delay first.\n")
    write(kb, "web/tls.md", "# TLS certificate expiry\n\nRenew the certificate with certbot.\n")
    settings = local_settings(tmp_path, milvus_uri=str(tmp_path / "milvus.db"))
    try:
        report = ingest_folder(kb, settings, show_progress=False)
    finally:
        close_all_clients()
    assert report.chunks_written == 2
    assert report.profile_seconds is not None  # the profile was measured, with the same model
    assert len(sessions) == 1, sessions


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_memory_is_handed_back_on_glibc() -> None:
    assert _malloc_trim() is not None
    release_free_memory()  # and it is callable as the ingest calls it
