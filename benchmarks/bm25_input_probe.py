"""BM25 alone over different BM25 inputs of one knowledge folder (BM25IN ablation, dev only).

Each variant is its own Milvus Lite collection holding only a BM25 field (nothing is embedded),
searched with each question; documents are ranked by their best chunk, MRR@5 / R@5 per question.
Variants of the pipeline's input (its chunks, its indexed header, its lexical form) beside the
bare wiring's (``RecursiveCharacterTextSplitter(1000/100)`` over the raw file), so the part of
the input that moves questions can be read apart from the rerank and the fusion.

Usage:
    python benchmarks/bm25_input_probe.py KB_FOLDER QUESTIONS.jsonl [...] --variants full,none,bare
        [--params 0.9/0.4,1.5/0.75] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.evaluation.queries import bare_chunks
from langchain_lookup_knowledge.knowledge.chunking import Chunk, chunk_document
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document
from langchain_lookup_knowledge.store.bm25_index import add_bm25_field
from langchain_lookup_knowledge.store.index_record import add_index_arguments

Header = Callable[[Chunk, KnowledgeDocument], str]


def _terms(doc: KnowledgeDocument) -> str:
    return ", ".join([*doc.aliases, *doc.keywords])


def _section(chunk: Chunk) -> str:
    return " > ".join(chunk.breadcrumb.split(" > ")[1:])


def _join(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def _full(c: Chunk, d: KnowledgeDocument) -> str:  # what ingest indexes today (embedding_text)
    return _join(c.breadcrumb, _terms(d), d.summary if c.ordinal == 0 else "")


HEADERS: dict[str, Header] = {
    "full": _full,
    "none": lambda c, d: "",
    "crumb": lambda c, d: c.breadcrumb,  # no frontmatter terms / summary
    "title": lambda c, d: c.title,
    "section": lambda c, d: _section(c),  # the section path without the title
    "noterms": lambda c, d: _join(c.breadcrumb, d.summary if c.ordinal == 0 else ""),
    "first": lambda c, d: _full(c, d) if c.ordinal == 0 else "",  # header once per document
    "first_section": lambda c, d: _full(c, d) if c.ordinal == 0 else _section(c),
    "first_crumb": lambda c, d: _full(c, d) if c.ordinal == 0 else c.breadcrumb,
    "terms_first": lambda c, d: _join(
        c.breadcrumb, _terms(d) if c.ordinal == 0 else "", d.summary if c.ordinal == 0 else ""
    ),
}


def pipeline_texts(
    kb: Path, header: Header, chunk_size: int, overlap: int, categories: Path | None
) -> list[tuple[str, str]]:
    from langchain_lookup_knowledge.knowledge.category_map import load_category_map

    cats = load_category_map(categories) if categories else None
    rows = []
    root = kb.resolve()
    for path in iter_markdown_files(root):
        doc = load_document(path, root, 10_000_000, cats)
        if not isinstance(doc, KnowledgeDocument):
            continue
        for chunk in chunk_document(doc, chunk_size, overlap):
            head = header(chunk, doc)
            text = f"{head}\n\n{chunk.text}" if head else chunk.text
            rows.append((doc.stem, text))
    return rows


def build(
    client: MilvusClient,
    name: str,
    rows: list[tuple[str, str]],
    params: tuple[float, float],
    analyzer: str,
) -> None:
    schema = client.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("doc", DataType.VARCHAR, max_length=1024)
    a = {"type": "standard"} if analyzer == "standard" else {"tokenizer": analyzer}
    schema.add_field(
        "text", DataType.VARCHAR, max_length=65535, enable_analyzer=True, analyzer_params=a
    )
    add_bm25_field(schema, source="text", sparse="sparse", name="bm25")
    index = client.prepare_index_params()
    bm25 = {"bm25_k1": params[0], "bm25_b": params[1]}
    index.add_index(
        "sparse",
        **add_index_arguments(
            {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25", "params": bm25}
        ),
    )
    client.create_collection(name, schema=schema, index_params=index)
    for i in range(0, len(rows), 500):
        client.insert(name, [{"doc": d, "text": t} for d, t in rows[i : i + 500]])
    client.flush(name)
    client.load_collection(name)


def rank_docs(client: MilvusClient, name: str, query: str) -> list[str]:
    hits = client.search(
        name,
        data=[query],
        anns_field="sparse",
        limit=50,
        output_fields=["doc"],
        search_params={"metric_type": "BM25"},
    )[0]
    seen: list[str] = []
    for h in hits:
        d = h["entity"]["doc"]
        if d not in seen:
            seen.append(d)
    return seen


def mrr5(ranked: list[str], rel: set[str]) -> float:
    for i, d in enumerate(ranked[:5]):
        if d in rel:
            return 1.0 / (i + 1)
    return 0.0


def first_rank(ranked: list[str], rel: set[str]) -> int:
    for i, d in enumerate(ranked):
        if d in rel:
            return i + 1
    return 99


def boot(diffs: list[float], n: int = 2000, seed: int = 7) -> tuple[float, float, float]:
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(n))
    return sum(diffs) / len(diffs), means[int(0.025 * n)], means[int(0.975 * n) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kb", type=Path)
    ap.add_argument("questions", nargs="+", type=Path)
    ap.add_argument("--variants", default="full,none,first,crumb,title,noterms,bare")
    ap.add_argument("--params", default="0.9/0.4")
    ap.add_argument("--categories", type=Path)
    ap.add_argument("--analyzer", default="standard")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    qsets: dict[str, list[dict[str, Any]]] = {}
    for f in args.questions:
        qs = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        qsets[f.stem] = [q for q in qs if q.get("rel")]

    tmp = tempfile.mkdtemp(prefix="bm25probe-")
    client = MilvusClient(f"{tmp}/p.db")
    results: dict[str, dict[str, list[int]]] = {}
    for spec in args.variants.split(","):
        # spec: header[:lexform][:size][:qform]  lexform: si (stem, split), s, i, - (plain);
        # qform: the question's form when it differs (e.g. "s": stemmed, identifiers whole)
        bits = spec.split(":")
        qlex = bits[3] if len(bits) > 3 else None
        head, lex, size = (
            bits[0],
            (bits[1] if len(bits) > 1 else "i"),
            (int(bits[2]) if len(bits) > 2 else 1000),
        )
        form = None if lex == "-" else LexicalForm(stem="s" in lex, split_identifiers="i" in lex)
        if args.analyzer == "jieba" and form is not None:
            form = LexicalForm(stem=False, split_identifiers=True)
        qform = (
            form
            if qlex is None
            else (
                None
                if qlex == "-"
                else LexicalForm(stem="s" in qlex, split_identifiers="i" in qlex)
            )
        )
        if head == "bare":
            docs, _ = bare_chunks(args.kb)
            rows = [(d.metadata["doc_id"], d.page_content) for d in docs]
        else:
            rows = pipeline_texts(
                args.kb, HEADERS[head], size, min(150, size // 4), args.categories
            )
        if form is not None:
            rows = [(d, form.apply(t)) for d, t in rows]
        for p in args.params.split(","):
            k1, b = (float(x) for x in p.split("/"))
            name = f"v{len(results)}"
            build(client, name, rows, (k1, b), args.analyzer)
            key = f"{spec}@{p}"
            results[key] = {}
            for sname, qs in qsets.items():
                ranks = []
                for q in qs:
                    text = qform.apply(q["q"]) if qform is not None else q["q"]
                    ranks.append(first_rank(rank_docs(client, name, text), set(q["rel"])))
                results[key][sname] = ranks
            client.drop_collection(name)
    base = next(iter(results))
    print(f"{'variant':<28}" + "".join(f"{s[:22]:>24}" for s in qsets) + f"{'pooled':>24}")
    for key, per in results.items():
        cells = []
        all_d: list[float] = []
        for s in qsets:
            m = [mrr5_of(r) for r in per[s]]
            d = [mrr5_of(a) - mrr5_of(b) for a, b in zip(per[s], results[base][s], strict=True)]
            all_d += d
            up = sum(x > 0 for x in d)
            down = sum(x < 0 for x in d)
            cells.append(f"{sum(m) / len(m):.3f} +{up}/-{down}")
        mean, lo, hi = boot(all_d)
        print(
            f"{key:<28}"
            + "".join(f"{c:>24}" for c in cells)
            + f"{mean:+.3f} [{lo:+.3f},{hi:+.3f}]".rjust(24)
        )
    if args.out:
        args.out.write_text(json.dumps(results))


def mrr5_of(rank: int) -> float:
    return 1.0 / rank if rank <= 5 else 0.0


if __name__ == "__main__":
    main()
    sys.exit(0)
