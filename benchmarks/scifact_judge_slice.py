"""The SciFact knowledge base of the judgement's fit: a corpus slice, ingested, and its claims.

The abstracts judged for the first ``--claims`` claims of the *train* qrels (qrels order) plus
``--others`` abstracts drawn at random (seeded) among those judged for no test claim, ingested
as one collection; the claims are written as a question file (``q``, ``rel``) for
``benchmarks/judge_rows.py sf``, which reads ``/tmp/judge-data/scifact_dev.jsonl``:

    python benchmarks/scifact_judge_slice.py ../shared/data/beir-scifact \\
        --uri /tmp/judge-data/db/sf.db --collection sf --questions /tmp/judge-data/scifact_dev.jsonl
    python benchmarks/judge_rows.py sf --uri /tmp/judge-data/db/sf.db --collection sf \\
        --out /tmp/judge-data/rows/sf.jsonl
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.evaluation.beir_data import corpus_documents, load_beir
from langchain_lookup_knowledge.ingest import ingest_documents


def _qrels(folder: Path, split: str) -> list[tuple[str, str]]:
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as f:
        return [(row[0], row[1]) for row in list(csv.reader(f, delimiter="\t"))[1:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the BEIR SciFact folder")
    parser.add_argument("--uri", required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--questions", required=True, type=Path)
    parser.add_argument("--claims", type=int, default=120)
    parser.add_argument("--others", type=int, default=700)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    claims: dict[str, list[str]] = {}
    for qid, doc in _qrels(args.source, "train"):
        if qid in claims or len(claims) < args.claims:
            claims.setdefault(qid, []).append(doc)
    test_docs = {doc for _, doc in _qrels(args.source, "test")}
    judged = {doc for docs in claims.values() for doc in docs}
    data = load_beir(args.source, "train")
    pool = sorted(d for d in data.corpus if d not in judged and d not in test_docs)
    keep = judged | set(random.Random(args.seed).sample(pool, args.others))
    docs = [d for d in corpus_documents(data) if d.source in keep]
    settings = LookupSettings(milvus_uri=args.uri, collection=args.collection)
    report = ingest_documents(docs, settings, label=f"{args.source} (judgement slice)")
    print(f"{len(docs)} abstracts, {report.chunks_written} chunks written")
    text = {q["_id"]: q["text"] for q in map(json.loads, (args.source / "queries.jsonl").open())}
    args.questions.parent.mkdir(parents=True, exist_ok=True)
    with args.questions.open("w", encoding="utf-8") as out:
        for qid, docs_of_claim in claims.items():
            row = {"q": text[qid], "rel": docs_of_claim}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(claims)} claims -> {args.questions}")


if __name__ == "__main__":
    main()
