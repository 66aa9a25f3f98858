"""A small BEIR slice for `eval beir` when the whole SciFact will not ingest in time.

The first QUERIES judged queries of the split (qrels order), and a corpus of the first DISTRACTORS
documents plus every document judged for those queries, in corpus order. The default (60, 500)
is the slice earlier releases' SciFact-slice figures used (docs/evaluation.md): 60 queries,
553 documents.

    python benchmarks/scifact_slice.py ../shared/data/beir-scifact /tmp/fig/sf60
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="BEIR dataset folder (corpus, queries, qrels)")
    parser.add_argument("target", type=Path, help="folder to write the slice to")
    parser.add_argument("--split", default="test")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--distractors", type=int, default=500)
    args = parser.parse_args()

    with (args.source / "qrels" / f"{args.split}.tsv").open(encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, judged = rows[0], rows[1:]
    chosen = list(dict.fromkeys(r[0] for r in judged))[: args.queries]
    wanted = set(chosen)
    qrels = [r for r in judged if r[0] in wanted]
    relevant = {r[1] for r in qrels}

    (args.target / "qrels").mkdir(parents=True, exist_ok=True)
    with (args.target / "qrels" / f"{args.split}.tsv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerows([header, *qrels])
    lines = (args.source / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    by_id = {json.loads(line)["_id"]: line for line in lines if line.strip()}
    (args.target / "queries.jsonl").write_text(
        "".join(by_id[q] + "\n" for q in chosen), encoding="utf-8"
    )
    kept = []
    with (args.source / "corpus.jsonl").open(encoding="utf-8") as f:
        for index, line in enumerate(f):
            if line.strip() and (index < args.distractors or json.loads(line)["_id"] in relevant):
                kept.append(line if line.endswith("\n") else line + "\n")
    (args.target / "corpus.jsonl").write_text("".join(kept), encoding="utf-8")
    print(f"{len(chosen)} queries, {len(kept)} documents, {len(qrels)} judgements -> {args.target}")


if __name__ == "__main__":
    main()
