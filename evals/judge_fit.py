"""Fit the evidence judgement across knowledge bases and judge each one left out.

Input: the rows of ``evals/judge_rows.py`` (one file per knowledge base). Each knowledge base's
profile is made from its own probe and pseudo-question rows (what ``ingest`` stores), its
lookups' features are read against it, and per knowledge base K the model is fitted on the
other knowledge bases' rows (thresholds too) and judges K's: every figure is leave-one-KB-out.
``--baseline`` prints the decisions of today's settings on the same rows. ``--write FILE``
fits on every knowledge base and writes the model (the package's ``judge_model.json``).

    python evals/judge_fit.py /tmp/judge-data/rows/*_v0.jsonl --baseline
    python evals/judge_fit.py /tmp/judge-data/rows/*_v0.jsonl --write \\
        langchain_lookup_knowledge/judgement/judge_model.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from langchain_lookup_knowledge.core.evidence_model import (
    DEFAULT_EVIDENCE_MODEL,
    DEFAULT_RELEVANCE_MODEL,
    EvidenceSignals,
    confidence,
)
from langchain_lookup_knowledge.judgement.features import KbProfile, judgement_features
from langchain_lookup_knowledge.judgement.model import (
    FEATURES,
    JudgeModel,
    fit_group,
    profile_from_rows,
    row_vector,
    thresholds_for,
)

OOS_KINDS = ("near", "unrelated", "cross")
ZH = {"rbzh", "apzh", "tidb"}


def read(paths: list[str]) -> dict[str, list[dict]]:
    by_kb: dict[str, list[dict]] = defaultdict(list)
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            by_kb[row["kb"]].append(row)
    return dict(by_kb)


def label(row: dict) -> dict:
    """in-scope / right at rank 1 / relevant in top 5 of a judged row."""
    firsts = [b["src"] for b in row["blocks"]]
    rel = set(row["rel"])
    return {
        "in": row["kind"] == "in",
        "oos": row["kind"] in OOS_KINDS,
        "right1": row["kind"] == "in" and bool(firsts) and firsts[0] in rel,
        "top5": row["kind"] == "in" and bool(rel & set(firsts[:5])),
    }


def prepared(by_kb: dict[str, list[dict]]) -> list[dict]:
    """Judged rows with their features (read against their own KB's profile)."""
    out = []
    for kb, rows in by_kb.items():
        profile = profile_from_rows(rows)
        for row in rows:
            if row["kind"] in ("probe", "pseudo"):
                continue
            item = {"kb": kb, "row": row} | label(row)
            vector = row_vector(row)
            item["group"] = None if vector is None else vector[0]
            if vector is not None:
                item["x"] = judgement_features(vector[1], row["signals"], profile)
            out.append(item)
    return out


def wilson(k: int, n: int) -> str:
    if n == 0:
        return "-"
    p, z = k / n, 1.96
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{p:.3f} [{c - h:.2f}, {c + h:.2f}] ({k}/{n})"


def auroc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def decide_rows(items: list[dict], decide) -> list[dict]:
    return [it | dict(zip(("score", "found", "level"), decide(it), strict=True)) for it in items]


def rates(items: list[dict]) -> dict:
    inside = [i for i in items if i["top5"]]
    hand = [i for i in items if i["row"]["kind"] in ("near", "unrelated")]
    cross = [i for i in items if i["row"]["kind"] == "cross"]
    right = [i for i in items if i["right1"]]
    high = [i for i in items if i["found"] and i["level"] == "high"]
    oos = hand + cross
    return {
        "in_found": (sum(i["found"] for i in inside), len(inside)),
        "oos_nf": (sum(not i["found"] for i in hand), len(hand)),
        "cross_nf": (sum(not i["found"] for i in cross), len(cross)),
        "right_low": (sum((not i["found"]) or i["level"] == "low" for i in right), len(right)),
        "high_right": (sum(i["right1"] for i in high), len(high)),
        "high_share": (sum(i["found"] and i["level"] == "high" for i in right), len(right)),
        "oos_medhigh": (sum(i["found"] and i["level"] != "low" for i in hand), len(hand)),
        "auroc": auroc([i["score"] for i in right], [i["score"] for i in oos]),
    }


def show(name: str, r: dict) -> str:
    au = "-" if r["auroc"] is None else f"{r['auroc']:.3f}"
    return (
        f"{name:8s} in_found {wilson(*r['in_found'])} | oos_nf {wilson(*r['oos_nf'])} | "
        f"cross_nf {wilson(*r['cross_nf'])} | right1_low {wilson(*r['right_low'])} | "
        f"high_right {wilson(*r['high_right'])} | high_share {wilson(*r['high_share'])} | "
        f"oos_med/high {r['oos_medhigh'][0]}/{r['oos_medhigh'][1]} | auroc {au}"
    )


def table(items: list[dict], title: str) -> dict:
    print(f"== {title}")
    out = {}
    for kb in sorted({i["kb"] for i in items}):
        r = rates([i for i in items if i["kb"] == kb])
        out[kb] = r
        print(show(kb, r))
    for name, keep in (("en", lambda k: k not in ZH), ("zh", lambda k: k in ZH)):
        print(show(name, rates([i for i in items if keep(i["kb"])])))
    out["pooled"] = rates(items)
    print(show("pooled", out["pooled"]))
    return out


def baseline(items: list[dict]) -> None:
    def signals(it: dict) -> EvidenceSignals | None:
        s = it["row"]["signals"]
        return None if s is None else EvidenceSignals(**s)

    def default(it: dict):
        s = signals(it)
        if s is None:
            return 0.0, False, "low"
        c = confidence(s, DEFAULT_RELEVANCE_MODEL)
        return c, True, "high" if c >= 0.7588 else "medium" if c >= 0.3175 else "low"

    def calibrated(it: dict):
        s = signals(it)
        if s is None:
            return 0.0, False, "low"
        f = confidence(s, DEFAULT_EVIDENCE_MODEL)
        found = f >= 0.5 and not (s.family in ("sparse", "lexical") and s.coverage == 0)
        c = confidence(s, DEFAULT_RELEVANCE_MODEL)
        return f, found, "high" if c >= 0.7588 else "medium" if c >= 0.3175 else "low"

    table(decide_rows(items, default), "today's default (similarity found, relevance_model level)")
    table(decide_rows(items, calibrated), "opt-in evidence_decision=calibrated")


def fit(items: list[dict], args: argparse.Namespace) -> JudgeModel:
    groups = {}
    for group in ("dense", "bm25"):
        rows = [i for i in items if i.get("group") == group and (i["in"] or i["oos"])]
        if args.right_only:
            rows = [i for i in rows if i["right1"] or i["oos"]]
        groups[group] = fit_group(rows, args.features, l2=args.l2)
    model = JudgeModel(groups=groups, thresholds={})
    scored = [(i, model.score_features(i["group"], i["x"])) for i in items if "x" in i]
    thresholds = thresholds_for(
        [(s, i["top5"], i["right1"], i["oos"]) for i, s in scored],
        min_found=args.min_found,
        max_right_low=args.max_right_low,
        high_precision=args.high_precision,
    )
    return JudgeModel(groups=groups, thresholds=thresholds)


def typical(profiles: list[KbProfile]) -> KbProfile:
    """The element-wise median of the knowledge bases' profiles (what a lookup of a knowledge
    base without a profile reads)."""
    keys: dict[str, dict[str, list[float]]] = {}
    for key in ("dense", "bm25"):
        for kind in ("probe", "own", "out"):
            lists = [p.keys[key][kind] for p in profiles if kind in p.keys.get(key, {})]
            if lists:
                keys.setdefault(key, {})[kind] = [
                    round(float(np.median(col)), 5) for col in zip(*lists, strict=True)
                ]
    return KbProfile(keys=keys, counts={"knowledge_bases": len(profiles)})


def judged(model: JudgeModel, it: dict):
    if "x" not in it:
        return 0.0, False, "low"
    score = model.score_features(it["group"], it["x"])
    found, level = model.decide(score)
    return score, found, level


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+")
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--min-found", type=float, default=0.98)
    parser.add_argument("--max-right-low", type=float, default=0.03)
    parser.add_argument("--high-precision", type=float, default=0.93)
    parser.add_argument("--right-only", action="store_true")
    parser.add_argument("--write", type=Path)
    parser.add_argument(
        "--features", type=lambda v: tuple(v.split(",")), default=FEATURES, help="comma list"
    )
    parser.add_argument("--drop", default="", help="comma list of features left out")
    parser.add_argument("--json", type=Path, help="write the leave-one-out figures here")
    args = parser.parse_args()
    args.features = tuple(f for f in args.features if f not in args.drop.split(","))
    by_kb = read(args.rows)
    items = prepared(by_kb)
    if args.baseline:
        baseline(items)
    loo = []
    for kb in sorted({i["kb"] for i in items}):
        model = fit([i for i in items if i["kb"] != kb], args)
        loo += decide_rows([i for i in items if i["kb"] == kb], lambda it, m=model: judged(m, it))
        print(kb, "thresholds (fit on the others):", model.thresholds, file=sys.stderr)
    figures = table(loo, "judgement, leave-one-KB-out")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    if args.write:
        model = fit(items, args)
        data = model.to_dict() | {
            "typical_profile": typical([profile_from_rows(r) for r in by_kb.values()]).to_dict(),
            "fitted_on": {kb: len(r) for kb, r in sorted(by_kb.items())},
            "leave_one_out": {
                k: {m: v for m, v in f.items()} for k, f in figures.items() if k == "pooled"
            },
        }
        args.write.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print("thresholds (all KBs):", model.thresholds)


if __name__ == "__main__":
    main()
