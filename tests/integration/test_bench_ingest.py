"""``bench``'s ingest measurement on a user's knowledge base: it leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_lookup_knowledge.settings import LookupSettings


def _small_kb(root: Path) -> Path:
    kb = root / "kb"
    (kb / "ops").mkdir(parents=True)
    (kb / "ops" / "disk.md").write_text(
        "---\ntitle: Disk full\n---\n# Disk full\n\nFree space on the node, then restart.\n",
        encoding="utf-8",
    )
    (kb / "ops" / "dns.md").write_text(
        "# DNS fails\n\nCheck CoreDNS pods and the upstream resolver.\n", encoding="utf-8"
    )
    return kb


def test_bench_ingest_leaves_no_scratch_collection_after_two_runs(
    settings: LookupSettings, tmp_path: Path, real_embeddings
):
    from langchain_lookup_knowledge.evaluation.ingest_bench import ingest_bench
    from langchain_lookup_knowledge.store.connection import open_client

    kb = _small_kb(tmp_path)
    client = open_client(settings)
    before = set(client.list_collections())
    for _ in range(2):
        figures = ingest_bench(settings, kb, real_embeddings)
        assert figures["chunks"] == 2
        # the embedder alone on the same chunks, beside the ingest, and the ratio
        assert figures["embedder_best_chunks_per_s"] > 0
        # the ratio is printed to 3 decimals and the rates to 2: equal up to that rounding
        assert figures["ingest_vs_embedder_ratio"] == pytest.approx(
            figures["ingest_chunks_per_s"] / figures["embedder_best_chunks_per_s"],
            rel=0.02,
            abs=1e-3,
        )
    assert set(client.list_collections()) == before
