"""Per-knowledge-base thresholds read from its own profiling questions, against the shared ones.

The judgement's thresholds (``found``, ``medium``, ``high``) are fitted across knowledge bases and
shared by every one. This measures the alternative: place each knowledge base's thresholds at
a percentile of the model's scores of its own profiling questions (its pseudo-questions, or
the off-topic probes), the percentile learned on the other knowledge bases (where their ideal
thresholds fall in their own profiling scores), and judge each knowledge base left out.

``rows`` looks up one collection's profiling questions (the ones ``ingest`` profiles with) and
writes their rows; ``fit`` reads the rows of ``benchmarks/judge_rows.py`` and, per knowledge base,
the profiling rows ``DIR/<kb>.jsonl``, and prints both tables (leave one knowledge base out).

    python benchmarks/judge_kb_thresholds.py rows rben --uri /tmp/fig/en.db --collection rb \\
        --out /tmp/fig/profiling_rows/rben.jsonl
    python benchmarks/judge_kb_thresholds.py fit /tmp/fig/rows/*.jsonl \\
        --profiling-rows /tmp/fig/profiling_rows --kind pseudo
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from langchain_lookup_knowledge.judgement.features import judgement_features, row_vector
from langchain_lookup_knowledge.judgement.fitting import (
    FitOptions,
    decide_rows,
    fit,
    judged,
    prepared,
    profile_of,
    read,
    table,
)
from langchain_lookup_knowledge.judgement.model import JudgeModel, thresholds_for

LEVELS = ("found", "medium", "high")
MIN_PROFILING_SCORES = 10
MIN_IN_SCOPE = 15  # a training KB's group needs this many in-scope rows to place a threshold


def write_rows(kb: str, uri: str, collection: str, out: Path) -> None:
    from langchain_lookup_knowledge.embeddings import cached_embeddings
    from langchain_lookup_knowledge.judgement.questions import profile_questions, source_order
    from langchain_lookup_knowledge.profiling import lookup_rows
    from langchain_lookup_knowledge.settings import LookupSettings
    from langchain_lookup_knowledge.store.catalog_store import stored_chunk_keys
    from langchain_lookup_knowledge.store.chunk_texts import iter_texts_by_source
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.describe import describe_for_embedder

    settings = LookupSettings(milvus_uri=uri, collection=collection, milvus_timeout_s=120)
    client = open_client(settings)
    layout, _ = describe_for_embedder(client, settings, cached_embeddings(settings, None))
    keys = stored_chunk_keys(client, layout.name, layout.id_field)
    documents = iter_texts_by_source(client, layout, keys, source_order(keys))
    questions = profile_questions(documents=documents)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for row in lookup_rows(settings, questions, kb=kb, profile=False):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def profiling_items(by_kb: dict[str, list[dict]], folder: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for kb, rows in by_kb.items():
        profile = profile_of(rows)
        items = []
        for line in (folder / f"{kb}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            got = row_vector(row)
            if got is not None:
                x = judgement_features(got[1], row["signals"], profile)
                items.append({"kind": row["kind"], "group": got[0], "x": x})
        out[kb] = items
    return out


def run_fit(paths: list[str], folder: Path, kind: str) -> None:
    by_kb = read(paths)
    items = prepared(by_kb)
    options = FitOptions()
    profiling = profiling_items(by_kb, folder)

    def own_scores(model: JudgeModel, kb: str, group: str) -> np.ndarray:
        return np.array(
            [
                model.score_features(group, p["x"])
                for p in profiling[kb]
                if p["kind"] == kind and p["group"] == group
            ]
        )

    shared: list[dict] = []
    per_kb: list[dict] = []
    for kb in sorted(by_kb):
        model = fit([i for i in items if i["kb"] != kb], options)
        learned: dict[str, dict[str, list[float]]] = {}
        for group in ("dense", "bm25"):
            shares: dict[str, list[float]] = {name: [] for name in LEVELS}
            for other in sorted(set(by_kb) - {kb}):
                rows = [
                    i for i in items if i["kb"] == other and i.get("group") == group and "x" in i
                ]
                scores = own_scores(model, other, group)
                in_scope = sum(i["top5"] for i in rows)
                if in_scope < MIN_IN_SCOPE or len(scores) < MIN_PROFILING_SCORES:
                    continue
                labelled = [
                    (model.score_features(group, i["x"]), i["top5"], i["right1"], i["oos"])
                    for i in rows
                ]
                ideal = thresholds_for(
                    labelled,
                    min_found=options.min_found,
                    max_right_low=options.max_right_low,
                    high_precision=options.high_precision,
                )
                for name in LEVELS:
                    shares[name].append(float((scores < ideal[name]).mean()))
            learned[group] = shares
            print(kb, group, {n: [round(v, 2) for v in s] for n, s in shares.items()})

        def decide(it: dict, model: JudgeModel = model, kb: str = kb, learned: Any = learned):
            score, found, level = judged(model, it)
            shares = learned.get(it.get("group"), {})
            if "x" not in it or not shares.get("found"):
                return score, found, level
            scores = own_scores(model, kb, it["group"])
            if len(scores) < MIN_PROFILING_SCORES:
                return score, found, level
            cut = {n: float(np.quantile(scores, float(np.median(s)))) for n, s in shares.items()}
            cut["medium"] = max(cut["medium"], cut["found"])
            cut["high"] = max(cut["high"], cut["medium"])
            level = "medium" if score >= cut["medium"] else "low"
            level = "high" if score >= cut["high"] else level
            return score, score >= cut["found"], level

        rows = [i for i in items if i["kb"] == kb]
        shared += decide_rows(rows, partial(judged, model))
        per_kb += decide_rows(rows, decide)
    table(shared, "shared thresholds (the shipped way), leave one knowledge base out")
    table(per_kb, f"per-knowledge-base thresholds at learned percentiles of its {kind} scores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rows = sub.add_parser("rows", help="look up one collection's profiling questions")
    rows.add_argument("kb")
    rows.add_argument("--uri", required=True)
    rows.add_argument("--collection", required=True)
    rows.add_argument("--out", required=True, type=Path)
    fitting = sub.add_parser("fit", help="shared against per-KB thresholds, leave one KB out")
    fitting.add_argument("rows", nargs="+")
    fitting.add_argument("--profiling-rows", required=True, type=Path)
    fitting.add_argument("--kind", choices=("pseudo", "probe"), default="pseudo")
    args = parser.parse_args()
    if args.command == "rows":
        write_rows(args.kb, args.uri, args.collection, args.out)
    else:
        run_fit(args.rows, args.profiling_rows, args.kind)


if __name__ == "__main__":
    main()
