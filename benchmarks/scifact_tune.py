"""Ranking variants of the pipeline on a BEIR split, against the shipped defaults, same run.

Reuses the collection ``eval beir`` ingested (run it first with the same ``--uri``): no variant
here changes what is stored, only how it is searched and reranked. Each variant is a name and
``LookupSettings`` overrides as JSON; every variant is scored as ``eval beir`` scores the
pipeline (``top_k=10``, ``per_document_cap=1``, the rankings whatever the decision
concluded), nDCG@10 per query, with a paired bootstrap interval of its difference from
the defaults. Tune on the train split (or a slice of it with ``--every``), then measure the
chosen variant once on test.

Each variant runs on the BM25 index an ingest with its settings would build (``bm25_k1``,
``bm25_b``, ``bm25_defaults``: the defaults are ``auto``'s 0.9 / 0.4 for SciFact's standard
analyzer, ``{"bm25_defaults": "engine"}`` the engine's own); the index is rebuilt when that
differs from the current one (Milvus reads them when the index is built, not per search; nothing
is embedded again) and left as it was found. Use a copy of the database when other runs share it.

    python benchmarks/scifact_tune.py ../shared/data/beir-scifact --uri /tmp/fig/scifact.db \\
        --split train --variant 'engine={"bm25_defaults": "engine"}' --variant 'rrf60={"rrf_k": 60}'
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.evaluation.beir import (
    corpus_documents,
    load_beir,
    pipeline_collection,
)
from langchain_lookup_knowledge.evaluation.metrics import per_query
from langchain_lookup_knowledge.evaluation.runner import eval_settings, run_pipeline
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.schema import (
    bm25_parameters,
    describe_chunk_collection,
    indexed_bm25_parameters,
    rebuild_sparse_index,
)

METRICS = ("ndcg@10", "recall@10", "mrr@10")
BM25_INDEX_SETTINGS = ("bm25_k1", "bm25_b", "bm25_defaults")


class SparseIndex:
    """The collection's BM25 index, rebuilt per variant only when its parameters differ.

    A variant's parameters are the ones ``bm25_parameters`` asks for this analyzer; one it
    leaves unset is the engine's default (an ingest would keep the index's own value).
    """

    def __init__(self, settings: LookupSettings) -> None:
        self.client = open_client(settings)
        self.layout = describe_chunk_collection(self.client, settings, None)
        self.original = indexed_bm25_parameters(self.client, self.layout)
        self.current = dict(self.original)

    def use(self, overrides: dict[str, Any]) -> dict[str, float]:
        """Index with the variant's BM25 parameters (the engine's defaults for the rest)."""
        asked = {k: v for k, v in overrides.items() if k in BM25_INDEX_SETTINGS}
        wanted = bm25_parameters(LookupSettings(**asked), self.layout.analyzer)
        if wanted != self.current:
            rebuild_sparse_index(self.client, self.layout, wanted)
            self.current = wanted
        return wanted

    def restore(self) -> None:
        """The index as it was found."""
        if self.current != self.original:
            rebuild_sparse_index(self.client, self.layout, self.original)
            self.current = dict(self.original)


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``name={"key": value}`` -> (name, overrides)."""
    name, _, overrides = text.partition("=")
    if not name or not overrides:
        raise SystemExit(f"--variant {text!r}: expected NAME=JSON")
    return name, json.loads(overrides)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="BEIR dataset folder")
    parser.add_argument("--uri", required=True, help="the Milvus Lite file eval beir wrote")
    parser.add_argument("--split", default="train")
    parser.add_argument("--every", type=int, default=1, help="every Nth judged query only")
    parser.add_argument("--variant", action="append", default=[], help='NAME={"setting": v}')
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    data = load_beir(args.dir, args.split)
    queries = dict(list(data.queries.items())[:: args.every])
    qrels = {q: data.qrels[q] for q in queries}
    settings = LookupSettings(milvus_uri=args.uri)
    collection = pipeline_collection(data, settings, corpus_documents(data))
    base = settings.model_copy(update={"collection": collection, "catalog_collection": None})
    embedder = build_embeddings(base)
    ranking_only = {"per_document_cap": 1, "top_k": 10}

    variants = [("defaults", {}), *map(parse_variant, args.variant)]
    index = SparseIndex(base)
    scores: dict[str, dict[str, dict[str, float]]] = {}
    report: dict[str, Any] = {"split": args.split, "queries": len(queries), "variants": {}}
    for name, overrides in variants:
        bm25_index = index.use(overrides)
        cfg = eval_settings(base, **ranking_only, **overrides)
        graph = build_lookup_graph(cfg, embeddings=embedder)
        run = run_pipeline(graph, queries, desc=name, ranking_only=True)
        scores[name] = {m: per_query(run.rankings, qrels, m) for m in METRICS}
        row: dict[str, Any] = {"overrides": overrides, "bm25_index": bm25_index}
        for m in METRICS:
            values = scores[name][m]
            row[m] = round(sum(values.values()) / len(values), 4)
        ref, own = scores["defaults"]["ndcg@10"], scores[name]["ndcg@10"]
        ids = sorted(ref)
        row["ndcg@10_vs_defaults"] = paired_bootstrap(
            [own[q] for q in ids], [ref[q] for q in ids]
        ).as_dict()
        row["p50_ms"] = run.timing()["p50_ms"]
        report["variants"][name] = row
        iv = row["ndcg@10_vs_defaults"]
        print(
            f"{name:<16} nDCG@10 {row['ndcg@10']:.4f}  R@10 {row['recall@10']:.4f}  "
            f"MRR@10 {row['mrr@10']:.4f}  vs defaults {iv['delta']:+.4f} "
            f"[{iv['low']:+.4f}, {iv['high']:+.4f}]  p50 {row['p50_ms']} ms",
            file=sys.stderr,
            flush=True,
        )
    index.restore()
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
