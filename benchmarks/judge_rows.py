"""Signal rows for the evidence judgement, one knowledge base at a time (cached as JSONL).

Every question of a knowledge base's dev files (in scope), its out-of-scope dev questions, the
in-scope dev questions of the other knowledge bases (out of scope here, except the same
documents in the other language), the package's off-topic probes and the KB's own
pseudo-questions are looked up with every block kept (whatever the decision concluded), and
each lookup's blocks (source, similarity, raw score, fused rank score) are written with the
question's label. ``benchmarks/judge_fit.py`` turns the rows into features and fits / judges leave
one knowledge base out. Test and holdout files are refused.

    python benchmarks/judge_rows.py rben --uri /tmp/judge-data/db/rben_v0.db --collection rben \\
        --out /tmp/judge-data/rows/rben_v0.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

KBS = {  # name -> (kb label in out-of-scope files, dev files, sibling KB)
    "rben": (
        "runbooks_en",
        [
            "runbooks_en_dev",
            "runbooks_en_symptom_dev",
            "runbooks_en_dev2",
            "runbooks_en_dev3",
            "runbooks_en_siblings_dev2",
        ],
        "rbzh",
    ),
    "rbzh": (
        "runbooks_zh",
        ["runbooks_zh_dev", "runbooks_zh_more_dev", "runbooks_zh_dev2", "runbooks_zh_dev3"],
        "rben",
    ),
    "apen": ("apisix_en", ["apisix_en_dev", "apisix_en_dev2", "apisix_en_dev3"], "apzh"),
    "apzh": ("apisix_zh", ["apisix_zh_dev", "apisix_zh_dev2", "apisix_zh_dev3"], "apen"),
    "tidb": ("tidb_zh", ["tidb_zh_dev", "tidb_zh_dev2", "tidb_zh_dev3"], ""),
    "sf": ("scifact", ["/tmp/judge-data/scifact_dev"], ""),
}
OOS = ["out_of_scope_dev", "out_of_scope_dev2", "out_of_scope_dev3"]
CROSS_PER_KB = 25  # other knowledge bases' in-scope questions asked here, per KB


def _path(name: str) -> Path:
    path = Path(name if name.startswith("/") else f"evals/{name}")
    path = path.with_suffix(".jsonl")
    if "test" in path.name or "holdout" in path.name:
        raise SystemExit(f"refused: {path} is a held-out file")
    return path


def _lines(name: str) -> list[dict]:
    return [json.loads(x) for x in _path(name).read_text(encoding="utf-8").splitlines() if x]


def questions(kb: str) -> list[dict]:
    """(text, kind, rel) of every question judged on ``kb``."""
    label, files, sibling = KBS[kb]
    out: list[dict] = []
    for name in files:
        out += [{"q": r["q"], "kind": "in", "rel": r["rel"], "set": name} for r in _lines(name)]
    for name in OOS:
        for r in _lines(name):
            if r.get("kb") == label:
                kind = "near" if r.get("near_miss") else "unrelated"
                out.append({"q": r["q"], "kind": kind, "rel": [], "set": name})
    for other, (_, other_files, _) in KBS.items():
        if other in (kb, sibling):
            continue
        pool = [r for name in other_files for r in _lines(name)]
        random.Random(f"cross:{kb}:{other}").shuffle(pool)
        out += [
            {"q": r["q"], "kind": "cross", "rel": [], "set": f"cross_{other}"}
            for r in pool[:CROSS_PER_KB]
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kb", choices=sorted(KBS))
    parser.add_argument("--uri", required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()

    from langchain_lookup_knowledge.profiling import lookup_rows
    from langchain_lookup_knowledge.settings import LookupSettings

    settings = LookupSettings(milvus_uri=args.uri, collection=args.collection, milvus_timeout_s=120)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in lookup_rows(settings, questions(args.kb), kb=args.kb):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            if row.get("id", 1) % 100 == 0:
                print(f"{args.kb}: {row['id']}", file=sys.stderr)


if __name__ == "__main__":
    main()
