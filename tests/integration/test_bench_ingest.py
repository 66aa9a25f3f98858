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
        # the pooled ratio is printed to 3 decimals and the rates to 2: equal up to that
        assert figures["ingest_vs_embedder_pooled_ratio"] == pytest.approx(
            figures["ingest_chunks_per_s"] / figures["embedder_best_chunks_per_s"],
            rel=0.02,
            abs=1e-3,
        )
    assert set(client.list_collections()) == before


def test_bench_ingest_alternates_the_embedder_alone_and_the_ingest(
    settings: LookupSettings, tmp_path: Path, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """Spies (the real calls run): embedder, ingest, embedder, ingest, embedder; the ratio is
    the median of each ingest against the embedder runs beside it."""
    import statistics

    from langchain_lookup_knowledge import ingest
    from langchain_lookup_knowledge.evaluation import ingest_bench as bench

    steps: list[str] = []
    real_alone, real_ingest = bench.embedder_alone, ingest.ingest_folder

    def alone(*args, **kwargs):
        steps.append("embedder")
        return real_alone(*args, **kwargs)

    def ingest_folder(*args, **kwargs):
        steps.append("ingest")
        return real_ingest(*args, **kwargs)

    monkeypatch.setattr(bench, "embedder_alone", alone)
    monkeypatch.setattr(ingest, "ingest_folder", ingest_folder)
    figures = bench.ingest_bench(settings, _small_kb(tmp_path), real_embeddings, rounds=3)
    assert steps == ["embedder", "ingest"] * 3 + ["embedder"]
    assert figures["ingest_rounds"] == 3
    assert len(figures["ingest_runs_s"]) == 3
    best = figures["embedder_runs_s"][figures["embedder_best"]]
    assert len(best) == 4
    paired = [
        figures["chunks"] / s / (figures["chunks"] * 2 / (best[i] + best[i + 1]))
        for i, s in enumerate(figures["ingest_runs_s"])
    ]
    assert figures["ingest_vs_embedder_ratios"] == pytest.approx(paired, rel=0.01, abs=2e-3)
    assert figures["ingest_vs_embedder_ratio"] == pytest.approx(
        statistics.median(paired), rel=0.01, abs=2e-3
    )
    low, high = figures["ingest_vs_embedder_ratio_range"]
    assert low == min(figures["ingest_vs_embedder_ratios"])
    assert high == max(figures["ingest_vs_embedder_ratios"])
