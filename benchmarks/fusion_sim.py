"""Fusion, BM25-input and document-aggregation variants simulated offline on a BEIR split.

Fetches once (and caches in ``--cache``): every chunk of the ``eval beir`` collection (fields and
vector), and per query its vector and the dense and BM25 lists (``--depth`` chunks each, through
the SDK path with the request the pipeline builds); BM25 lists over other BM25 inputs (the whole
document, the chunk with its document, the body without its header, the header twice) come from
BM25-only collections of their own (the collection's analyzer, lexical form and k1 / b), so no
variant embeds anything. Each variant fuses the lists its way and runs the package's own rerank
and evidence steps on the pool (``per_document_cap=1``, ``top_k=10``, the similarity floor), as
``eval beir`` scores; nDCG@10 per query with a paired bootstrap interval against ``chunk-rrf``,
which reproduces the shipped defaults (a BEIR collection has no catalog, so no L0).

Variants: the legs alone; more legs or other BM25 inputs (``section-sparse``: a document's BM25
rank given to each of its chunks); leg weights in the RRF; list depth and pool size; a
document-level share of the RRF (``doc-rrf``: a leg's rank of a document is its best chunk's
among distinct documents); rerank weights; the document-support boost; term boosts and the
similarity read over a document's chunks. ``--only`` keeps the variants whose names start so.

    python benchmarks/fusion_sim.py ../shared/data/beir-scifact --uri /tmp/h25/scifact.db \\
        --split train --every 1 --cache /tmp/h25/sim_trainall --only "bm25,doc-rrf"
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langchain_lookup_knowledge.core.models import Candidate, HitReason
from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.evaluation.beir import (
    corpus_documents,
    load_beir,
    pipeline_collection,
)
from langchain_lookup_knowledge.evaluation.metrics import per_query
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap
from langchain_lookup_knowledge.pipeline.evidence import build_evidence_blocks
from langchain_lookup_knowledge.pipeline.rerank import ScoredCandidate, rerank
from langchain_lookup_knowledge.retrieval.hits import candidate_from_fields
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.retrieval.scores import dense_label, fused_label
from langchain_lookup_knowledge.settings import LookupSettings


def _bm25_ids(bm: Any, name: str, text: str, depth: int) -> list[str]:
    """The ids of the ``depth`` best BM25 hits of ``text`` in collection ``name``."""
    hits = bm.search(
        name,
        data=[text],
        anns_field="sparse",
        search_params={"metric_type": "BM25", "params": {"drop_ratio_search": 0.0}},
        limit=depth,
        output_fields=["id"],
    )[0]
    return [str(h["entity"]["id"]) for h in hits]


def _bm25_collection(
    bm: Any, name: str, rows: list[dict[str, str]], layout: Any, base: Any
) -> None:
    """A BM25-only collection ``name`` over ``rows`` (id, text) in ``bm``, with the BM25
    parameters of ``base`` (the Milvus Lite index algorithm)."""
    from pymilvus import DataType

    from langchain_lookup_knowledge.store.bm25_index import (
        add_bm25_field,
        bm25_parameters,
        sparse_index_params,
    )
    from langchain_lookup_knowledge.store.index_record import add_index_arguments

    schema = bm.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, max_length=256, is_primary=True)
    schema.add_field(
        "text",
        DataType.VARCHAR,
        max_length=65535,
        enable_analyzer=True,
        analyzer_params={"type": layout.analyzer or "standard"},
    )
    add_bm25_field(schema, source="text", sparse="sparse", name="text_bm25")
    index = bm.prepare_index_params()
    spec = sparse_index_params(bm25_parameters(base, "standard"))
    spec["params"]["inverted_index_algo"] = "TAAT_NAIVE"  # what Milvus Lite supports
    index.add_index("sparse", **add_index_arguments(spec))
    bm.create_collection(name, schema=schema, index_params=index)
    for start in range(0, len(rows), 500):
        bm.insert(name, rows[start : start + 500])
    bm.flush(name)


def fetch(args: argparse.Namespace, queries: dict[str, str]) -> dict[str, Any]:
    from pymilvus import MilvusClient

    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

    data = load_beir(args.dir, args.split)
    settings = LookupSettings(milvus_uri=args.uri, record_invocations=False)
    collection = pipeline_collection(data, settings, corpus_documents(data))
    base = settings.model_copy(update={"collection": collection, "catalog_collection": None})
    runtime = LookupRuntime(base)
    path = runtime.path("sdk")
    layout = runtime.layout
    client = runtime.client

    chunks: dict[str, dict[str, Any]] = {}
    vectors: dict[str, np.ndarray] = {}
    it = client.query_iterator(
        layout.name,
        filter="",
        output_fields=[*layout.scalar_fields, layout.vector_field],
        batch_size=1000,
    )
    while page := it.next():
        for row in page:
            key = str(row[layout.id_field])
            vectors[key] = np.asarray(row.pop(layout.vector_field), dtype=np.float32)
            chunks[key] = dict(row)
    it.close()
    print(f"{len(chunks)} chunks read", file=sys.stderr, flush=True)

    docs = Path(args.cache) / "docbm25.db"
    bm = MilvusClient(str(docs))
    if not bm.has_collection("docs"):
        rows = [
            {"id": doc_id, "text": layout.bm25_text_of(f"{title}\n\n{text}")[:60000]}
            for doc_id, (title, text) in data.corpus.items()
        ]
        _bm25_collection(bm, "docs", rows, layout, base)

    per_q: dict[str, Any] = {}
    for n, (qid, text) in enumerate(queries.items(), start=1):
        vector = runtime.embeddings.embed_query(text)
        lists: dict[str, list[str]] = {}
        for mode in ("dense", "sparse"):
            request = SearchRequest.configured(
                base,
                query_text=text,
                query_vector=vector,
                expr=None,
                k=args.depth,
                retrieval_mode=mode,
                row_count=layout.row_count,
                lexical=layout.lexical_form,
            )
            lists[mode] = [c.evidence_key for c in path.search(request)]
            if mode == "sparse":
                lists["doc_sparse"] = _bm25_ids(bm, "docs", request.bm25_text, args.depth)
        per_q[qid] = {"vector": np.asarray(vector, dtype=np.float32), "lists": lists}
        if n % 25 == 0:
            print(f"fetched {n}/{len(queries)}", file=sys.stderr, flush=True)
    return {"chunks": chunks, "vectors": vectors, "queries": per_q, "layout": layout}


def chunk_bm25_legs(
    args: argparse.Namespace, cache: dict[str, Any], texts: dict[str, Callable[[str], str]]
) -> bool:
    """Add to each query's lists a BM25 leg over the chunks with another BM25 input per
    chunk (``texts``: leg name -> the chunk key's text), each leg a BM25-only collection."""
    from pymilvus import MilvusClient

    missing = [n for n in texts if n not in next(iter(cache["queries"].values()))["lists"]]
    if not missing:
        return False
    layout = cache["layout"]
    base = LookupSettings(record_invocations=False)
    bm = MilvusClient(str(Path(args.cache) / "docbm25.db"))
    data = load_beir(args.dir, args.split)
    for name in missing:
        coll = "c_" + "".join(ch if ch.isalnum() else "_" for ch in name)
        if not bm.has_collection(coll):
            rows = [
                {"id": key, "text": layout.bm25_text_of(texts[name](key))[:60000]}
                for key in cache["chunks"]
            ]
            _bm25_collection(bm, coll, rows, layout, base)
        for qid, entry in cache["queries"].items():
            request = SearchRequest.configured(
                base,
                query_text=data.queries[qid],
                query_vector=[],
                expr=None,
                k=args.depth,
                retrieval_mode="sparse",
                row_count=layout.row_count,
                lexical=layout.lexical_form,
            )
            entry["lists"][name] = _bm25_ids(bm, coll, request.bm25_text, args.depth)
        print(f"leg {name} added", file=sys.stderr, flush=True)
    return True


class Sim:
    """Candidates built from the cached chunks, each with its cosine to the query."""

    def __init__(self, cache: dict[str, Any]) -> None:
        self.chunks = cache["chunks"]
        self.layout = cache["layout"]
        keys = sorted(cache["vectors"])
        self.keys = keys
        self.index = {k: i for i, k in enumerate(keys)}
        m = np.stack([cache["vectors"][k] for k in keys])
        self.matrix = m / np.linalg.norm(m, axis=1, keepdims=True)
        self.queries = cache["queries"]
        self.by_source: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            self.by_source[key.rsplit("#", 1)[0]].append(key)
        for v in self.by_source.values():
            v.sort(key=lambda k: int(k.rsplit("#", 1)[1]))
        self._sims: dict[str, np.ndarray] = {}

    def sims(self, qid: str) -> np.ndarray:
        if qid not in self._sims:
            q = self.queries[qid]["vector"]
            self._sims[qid] = self.matrix @ (q / np.linalg.norm(q))
        return self._sims[qid]

    document_similarity = False  # a chunk's similarity: the best of its document's chunks

    def similarity(self, qid: str, key: str) -> float:
        if self.document_similarity:
            keys = self.by_source[key.rsplit("#", 1)[0]]
            best = max(self.sims(qid)[self.index[k]] for k in keys)
            return float(min(1.0, max(0.0, best)))
        return float(min(1.0, max(0.0, self.sims(qid)[self.index[key]])))

    def candidate(self, qid: str, key: str, raw: float, rank: int, k: int) -> Candidate:
        sim = self.similarity(qid, key)
        label = fused_label("sdk", "rrf", raw, sim, lists=2, rrf_k=k)
        return candidate_from_fields(self.chunks[key], self.layout, label, rank)

    def leg(self, qid: str, name: str) -> list[str]:
        lists = self.queries[qid]["lists"]
        if name == "section_sparse":  # whole-document BM25, each document's chunks in order
            return [key for doc in lists["doc_sparse"] for key in self.by_source[doc]]
        if name == "dense_exact":
            order = np.argsort(-self.sims(qid))[:100]
            return [self.keys[i] for i in order]
        return list(lists[name])

    def rrf(
        self,
        qid: str,
        legs: Sequence[str] = ("dense", "sparse"),
        depth: int = 30,
        k: int = 10,
        pool: int = 30,
        doc_share: float = 0.0,
        weights: Sequence[float] = (),
    ) -> list[Candidate]:
        """RRF of the first ``depth`` chunks of each leg; with ``doc_share`` > 0 that share of a
        chunk's fused score is its document's RRF (a document's rank in a leg: its best
        chunk's among distinct documents)."""
        own: dict[str, float] = defaultdict(float)
        doc: dict[str, float] = defaultdict(float)
        for i, name in enumerate(legs):
            weight = weights[i] if weights else 1.0
            seen: dict[str, int] = {}
            for rank, key in enumerate(self.leg(qid, name)[:depth], start=1):
                own[key] += weight / (k + rank)
                source = key.rsplit("#", 1)[0]
                if source not in seen:
                    seen[source] = len(seen) + 1
                    doc[source] += weight / (k + seen[source])
        fused = {
            key: doc_share * doc[key.rsplit("#", 1)[0]] + (1 - doc_share) * own[key] for key in own
        }
        order = sorted(fused, key=lambda key: (-fused[key], -own[key], key))[:pool]
        return [self.candidate(qid, key, fused[key], r, k) for r, key in enumerate(order, 1)]

    def dense_pool(self, qid: str, pool: int = 30) -> list[Candidate]:
        out = []
        for rank, key in enumerate(self.leg(qid, "dense")[:pool], start=1):
            label = dense_label("sdk", "COSINE", self.similarity(qid, key))
            out.append(candidate_from_fields(self.chunks[key], self.layout, label, rank))
        return out


def document_support(scored: list[ScoredCandidate], weight: float) -> list[ScoredCandidate]:
    """A document's best chunk lifted by ``weight`` x the best base of its other chunks."""
    best: dict[str, dict[str, float]] = defaultdict(dict)
    for s in scored:
        c = s.candidate
        best[c.source][c.evidence_key] = max(best[c.source].get(c.evidence_key, 0.0), s.base)
    out = []
    for s in scored:
        others = [b for k, b in best[s.candidate.source].items() if k != s.evidence_key]
        if not others or s.base < max(others):
            out.append(s)
            continue
        reason = HitReason(kind="document_support", detail="", contribution=weight * max(others))
        out.append(
            ScoredCandidate(
                candidate=s.candidate,
                base=s.base,
                reasons=[*s.reasons, reason],
                terms_found=s.terms_found,
            )
        )
    return sorted(out, key=ScoredCandidate.sort_key)


def ranking(
    pool: Sequence[Candidate],
    query: str,
    weights: RerankWeights | None = None,
    support: float = 0.0,
    floor: float = 0.2,
    document_terms: bool = False,
) -> list[str]:
    if document_terms:  # the term boosts read every candidate chunk of the document
        joined: dict[str, list[str]] = defaultdict(list)
        for c in pool:
            joined[c.source].append(c.content)
        pool = [c.model_copy(update={"content": "\n".join(joined[c.source])}) for c in pool]
    scored = rerank(pool, query, None, weights=weights or RerankWeights(), ranks_of=None)
    if support:
        scored = document_support(scored, support)
    sel = build_evidence_blocks(
        scored, top_k=10, per_document_cap=1, min_similarity=floor, l0_participated=False
    )
    return [b.source for b in sel.blocks]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--uri", required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--cache", required=True, help="a folder for the cached lists")
    parser.add_argument("--only", default="", help="comma list of variant name prefixes")
    args = parser.parse_args()

    data = load_beir(args.dir, args.split)
    queries = dict(list(data.queries.items())[:: args.every])
    qrels = {q: data.qrels[q] for q in queries}
    folder = Path(args.cache)
    folder.mkdir(parents=True, exist_ok=True)
    pickled = folder / "lists.pkl"
    if pickled.is_file():
        cache = pickle.loads(pickled.read_bytes())
    else:
        cache = fetch(args, queries)
        pickled.write_bytes(pickle.dumps(cache))
    content = {k: str(v.get(cache["layout"].content_field, "")) for k, v in cache["chunks"].items()}
    by_source: dict[str, list[str]] = defaultdict(list)
    for key in sorted(content, key=lambda k: (k.rsplit("#", 1)[0], int(k.rsplit("#", 1)[1]))):
        by_source[key.rsplit("#", 1)[0]].append(key)

    def body(key: str) -> str:
        offset = cache["chunks"][key].get("metadata", {}).get("body_offset") or 0
        return content[key][offset:]

    def header(key: str) -> str:
        offset = cache["chunks"][key].get("metadata", {}).get("body_offset") or 0
        return content[key][:offset]

    def with_document(key: str) -> str:
        return (
            content[key] + "\n\n" + "\n\n".join(body(k) for k in by_source[key.rsplit("#", 1)[0]])
        )

    def document(key: str) -> str:
        return header(key) + "\n\n".join(body(k) for k in by_source[key.rsplit("#", 1)[0]])

    if chunk_bm25_legs(
        args,
        cache,
        {
            "chunk_plus_document": with_document,
            "document_per_chunk": document,
            "body_only": body,
            "header_twice": lambda key: header(key) + content[key],
        },
    ):
        pickled.write_bytes(pickle.dumps(cache))
    sim = Sim(cache)

    variants: dict[str, Callable[[str], list[str]]] = {
        "chunk-rrf": lambda q: ranking(sim.rrf(q), queries[q]),
        "dense only": lambda q: ranking(sim.dense_pool(q), queries[q]),
        "sparse only": lambda q: ranking(sim.rrf(q, ("sparse",)), queries[q]),
        "section-sparse only": lambda q: ranking(sim.rrf(q, ("section_sparse",)), queries[q]),
        "dense+section-sparse": lambda q: ranking(
            sim.rrf(q, ("dense", "section_sparse")), queries[q]
        ),
        "dense+section-sparse d50": lambda q: ranking(
            sim.rrf(q, ("dense", "section_sparse"), depth=50), queries[q]
        ),
        "dense+chunk_plus_document": lambda q: ranking(
            sim.rrf(q, ("dense", "chunk_plus_document")), queries[q]
        ),
        "dense+document_per_chunk": lambda q: ranking(
            sim.rrf(q, ("dense", "document_per_chunk")), queries[q]
        ),
        "chunk_plus_document only": lambda q: ranking(
            sim.rrf(q, ("chunk_plus_document",)), queries[q]
        ),
        "bm25 x2": lambda q: ranking(sim.rrf(q, weights=(1.0, 2.0)), queries[q]),
        "bm25 x1.5": lambda q: ranking(sim.rrf(q, weights=(1.0, 1.5)), queries[q]),
        "3 legs section x0.5": lambda q: ranking(
            sim.rrf(q, ("dense", "sparse", "section_sparse"), weights=(1, 1, 0.5)), queries[q]
        ),
        "3 legs dense x2": lambda q: ranking(
            sim.rrf(q, ("dense", "sparse", "section_sparse"), weights=(2, 1, 1)), queries[q]
        ),
        "floor 0": lambda q: ranking(sim.rrf(q), queries[q], floor=0.0),
        "document terms": lambda q: ranking(sim.rrf(q), queries[q], document_terms=True),
        "dense+body_only": lambda q: ranking(sim.rrf(q, ("dense", "body_only")), queries[q]),
        "dense+header_twice": lambda q: ranking(sim.rrf(q, ("dense", "header_twice")), queries[q]),
        "3 legs": lambda q: ranking(sim.rrf(q, ("dense", "sparse", "section_sparse")), queries[q]),
        "chunk-rrf no boosts": lambda q: ranking(
            sim.rrf(q),
            queries[q],
            RerankWeights(query_term_coverage=0, title_term_overlap=0, first_chunk=0),
        ),
        "chunk-rrf rank only": lambda q: ranking(
            sim.rrf(q), queries[q], RerankWeights(similarity_share=0)
        ),
    }
    for depth in (50, 100):
        variants[f"chunk-rrf d{depth}"] = lambda q, d=depth: ranking(
            sim.rrf(q, depth=d), queries[q]
        )
        variants[f"chunk-rrf d{depth} pool60"] = lambda q, d=depth: ranking(
            sim.rrf(q, depth=d, pool=60), queries[q]
        )
    for w in (0.05, 0.1, 0.2):
        variants[f"support {w}"] = lambda q, w=w: ranking(sim.rrf(q), queries[q], support=w)
    for share in (1.0, 0.5):
        for depth in (30, 50):
            variants[f"doc-rrf s{share} d{depth}"] = lambda q, s=share, d=depth: ranking(
                sim.rrf(q, depth=d, doc_share=s), queries[q]
            )

    def with_document_similarity(q: str) -> list[str]:
        sim.document_similarity = True
        try:
            return ranking(sim.rrf(q), queries[q])
        finally:
            sim.document_similarity = False

    variants["document similarity"] = with_document_similarity
    for rrf_k in (5, 20, 60):
        variants[f"rrf_k {rrf_k}"] = lambda q, k=rrf_k: ranking(sim.rrf(q, k=k), queries[q])
    for share in (0.2, 0.3, 0.4, 0.6):
        variants[f"similarity_share {share}"] = lambda q, s=share: ranking(
            sim.rrf(q), queries[q], RerankWeights(similarity_share=s)
        )
    for idf in (0.5, 1.0):
        variants[f"term_idf {idf}"] = lambda q, i=idf: ranking(
            sim.rrf(q), queries[q], RerankWeights(term_idf=i)
        )
    for name, extra in {
        "coverage 0.12": {"query_term_coverage": 0.12},
        "coverage 0.04": {"query_term_coverage": 0.04},
        "title 0.1": {"title_term_overlap": 0.1},
        "title 0": {"title_term_overlap": 0.0},
        "first_chunk 0": {"first_chunk": 0.0},
    }.items():
        variants[name] = lambda q, e=extra: ranking(sim.rrf(q), queries[q], RerankWeights(**e))
    wanted = [p for p in args.only.split(",") if p]
    ref: dict[str, float] = {}
    report = {}
    for name, rank_of in variants.items():
        if wanted and name != "chunk-rrf" and not any(name.startswith(p) for p in wanted):
            continue
        rankings: dict[str, Any] = {q: rank_of(q) for q in queries}
        scores = per_query(rankings, qrels, "ndcg@10")
        mean = sum(scores.values()) / len(scores)
        if not ref:
            ref = scores
        ids = sorted(ref)
        iv = paired_bootstrap([scores[q] for q in ids], [ref[q] for q in ids]).as_dict()
        report[name] = {"ndcg@10": round(mean, 4), "vs_chunk_rrf": iv}
        print(
            f"{name:<28} nDCG@10 {mean:.4f}  vs chunk-rrf {iv['delta']:+.4f} "
            f"[{iv['low']:+.4f}, {iv['high']:+.4f}]",
            flush=True,
        )
    (folder / "report.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
