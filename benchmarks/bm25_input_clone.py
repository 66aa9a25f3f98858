"""Clone an ingested Milvus Lite collection with another BM25 input, nothing embedded again.

BM25IN ablation helper (dev only): the chunk rows (text, vector, metadata), the L0 catalog and
the KB vocabulary are kept; the chunk collection is created again with the lexical form the
settings ask for (``LOOKUP_KNOWLEDGE_BM25_STEMMING`` ...) and its BM25 input made from each
row's indexed text under a header rule (``--header``: what the chunk's indexed header keeps):

- ``full``: the indexed text as ingest wrote it (breadcrumb, terms, summary, chunk);
- ``first``: the header in a document's first chunk only, the other chunks their text alone;
- ``none``: the chunk text alone; ``title``: the document title, then the chunk text;
- ``crumb``: the breadcrumb, then the chunk text (no frontmatter aliases, keywords, summary).

A clone with ``--header full`` and the settings of the source scores as the source does
(checked on runbooks-en dev: the same per-question figures).

Usage:
    cp -a SRC.db DST.db && python benchmarks/bm25_input_clone.py DST.db COLLECTION --header first
"""

from __future__ import annotations

import argparse
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.schema import (
    _create_chunk_collection,
    describe_chunk_collection,
)


def bm25_source(row: dict[str, Any], header: str) -> str:
    text: str = row["text"]
    meta = row["metadata"]
    body = text[int(meta.get("body_offset") or 0) :]
    if header == "full":
        return text
    if header == "none":
        return body
    if header == "title":
        return f"{meta['title']}\n\n{body}"
    if header == "crumb":  # no frontmatter terms (aliases, keywords) nor summary
        return f"{meta['breadcrumb']}\n\n{body}"
    if header == "first":
        return text if int(meta["ordinal"]) == 0 else body
    raise ValueError(header)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("collection")
    ap.add_argument("--header", default="full")
    args = ap.parse_args()
    client = MilvusClient(args.uri)
    info = client.describe_collection(args.collection)
    props = {
        k: v for k, v in (info.get("properties") or {}).items() if k == "lookup_knowledge.embedder"
    }
    dim = next(f["params"]["dim"] for f in info["fields"] if f["name"] == "vector")
    analyzer_field = next(
        f
        for f in info["fields"]
        if f["name"] in ("lexical", "text") and f.get("params", {}).get("enable_analyzer")
    )
    params = analyzer_field["params"]["analyzer_params"]
    if isinstance(params, str):
        import json

        params = json.loads(params)
    analyzer = "standard" if params.get("type") == "standard" else params.get("tokenizer")
    fields = ["pk", "text", "vector", "metadata", "category", "source"]
    client.load_collection(args.collection)
    rows: list[dict[str, Any]] = []
    it = client.query_iterator(args.collection, batch_size=500, output_fields=fields)
    while batch := it.next():
        rows.extend(batch)
    it.close()
    client.drop_collection(args.collection)
    settings = LookupSettings(collection=args.collection)
    _create_chunk_collection(client, settings, int(dim), analyzer, props)
    layout = describe_chunk_collection(client, settings, int(dim))
    out = []
    for r in rows:
        row = {f: r[f] for f in fields}
        if layout.lexical_field:
            row[layout.lexical_field] = layout.bm25_text_of(bm25_source(r, args.header))
        out.append(row)
    for i in range(0, len(out), 500):
        client.insert(args.collection, out[i : i + 500])
    client.flush(args.collection)
    print(
        f"{args.collection}: {len(out)} rows, analyzer {analyzer}, form {layout.lexical_form}, "
        f"header {args.header}"
    )


if __name__ == "__main__":
    main()
