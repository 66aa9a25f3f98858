"""``eval beir`` on a small real SciFact slice (benchmarks/scifact_slice.py): ``bm25_defaults`` /
``bm25_k1`` / ``bm25_b`` rebuild the BM25 index of the cached collection (nothing is ingested
again) and the report says which index it scored. Skips where ../shared/data is absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.cli_helpers import run_cli_json
from tests.conftest import REPO, SHARED_DATA, require_shared


def run_json(argv: list[str]) -> dict[str, Any]:
    """Run the CLI in this process with ``--json``; the last stdout line is the report."""
    return run_cli_json(argv)[0]


@pytest.fixture(scope="module")
def scifact_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = require_shared(SHARED_DATA / "beir-scifact")
    target = tmp_path_factory.mktemp("sf") / "slice"
    script = REPO / "benchmarks" / "scifact_slice.py"
    sizes = ["--queries", "4", "--distractors", "16"]
    subprocess.run(
        [sys.executable, str(script), str(source), str(target), *sizes],
        check=True,
        capture_output=True,
    )
    return target


def test_bm25_parameters_rebuild_the_cached_index_and_the_report_names_it(
    scifact_slice: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    uri = str(tmp_path / "sf.db")
    argv = ["eval", "beir", str(scifact_slice), "--uri", uri, "--no-baselines"]
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RETRIEVAL_MODE", "sparse")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_BM25_DEFAULTS", "engine")
    first = run_json(argv)
    assert not first["cached"]
    assert first["settings"]["bm25_index"] == {}  # built with the engine's defaults

    monkeypatch.delenv("LOOKUP_KNOWLEDGE_BM25_DEFAULTS")  # auto: SciFact is English
    tuned = run_json(argv)
    assert tuned["cached"]  # the same collection: only its BM25 index was built again
    assert tuned["collection"] == first["collection"]
    assert tuned["settings"]["bm25_index"] == {"bm25_k1": 0.9, "bm25_b": 0.4}
    assert tuned["queries"] == first["queries"] == 4

    monkeypatch.setenv("LOOKUP_KNOWLEDGE_BM25_K1", "1.2")
    own = run_json(argv)
    assert own["cached"]
    assert own["settings"]["bm25_index"] == {"bm25_k1": 1.2, "bm25_b": 0.4}
    close_all_clients()
