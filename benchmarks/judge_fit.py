"""Fit the evidence judgement across knowledge bases and judge each one left out.

Input: the rows of ``benchmarks/judge_rows.py`` (one file per knowledge base). Each knowledge base's
profile is made from its own probe and pseudo-question rows (what ``ingest`` stores), its
lookups' features are read against it, and per knowledge base K the model is fitted on the
other knowledge bases' rows (thresholds too) and judges K's: every figure is leave-one-KB-out.
``--baseline`` prints the decisions of today's settings on the same rows. ``--write FILE``
fits on every knowledge base and writes the model (the package's ``judge_model.json``).

    python benchmarks/judge_fit.py /tmp/judge-data/rows/*_v0.jsonl --baseline
    python benchmarks/judge_fit.py /tmp/judge-data/rows/*_v0.jsonl --write \\
        langchain_lookup_knowledge/judgement/judge_model.json
"""

from __future__ import annotations

import argparse
import json
import math
from functools import partial
from pathlib import Path

from langchain_lookup_knowledge.judgement.fitting import (
    FitOptions,
    decide_rows,
    fit,
    judged,
    leave_one_out,
    model_data,
    prepared,
    read,
    table,
)
from langchain_lookup_knowledge.judgement.model import (
    FEATURES,
    JudgeModel,
)
from langchain_lookup_knowledge.judgement.signals import EvidenceSignals

# The two decisions the package no longer has (docs/evaluation.md, "Do the alternatives earn a
# place?"), kept here so --baseline reproduces their figures: the calibrated found model (the
# logistic weights fitted on the dev question sets, found at confidence 0.5) and the relevance
# model of their levels (high >= 0.7588, medium >= 0.3175).
CALIBRATED_FOUND_MODEL: dict[str, dict[str, float]] = {
    "hybrid": {
        "bias": 0.785,
        "similarity": 0.577,
        "coverage": 4.373,
        "agreement": 2.933,
        "unseen_idf": -3.545,
        "rare_unseen_latin_idf": -7.201,
    },
    "dense": {
        "bias": 2.98,
        "similarity": 0.844,
        "coverage": 4.933,
        "unseen_idf": -3.723,
        "rare_unseen_latin_idf": -7.209,
    },
    "sparse": {
        "bias": 1.273,
        "coverage": 8.106,
        "unseen_idf": -2.867,
        "rare_unseen_latin_idf": -5.32,
    },
    "lexical": {
        "bias": 2.291,
        "coverage": 4.312,
        "unseen_idf": -2.127,
        "rare_unseen_latin_idf": -6.029,
    },
}
RELEVANCE_MODEL: dict[str, dict[str, float]] = {
    "hybrid": {"bias": -8.021, "similarity": 0.087, "coverage": 4.214, "agreement": 6.666},
    "dense": {"bias": -1.989, "similarity": 0.403, "coverage": 3.742},
    "sparse": {"bias": -0.773, "bm25_per_term": 0.396},
    "lexical": {"bias": -2.199, "coverage": 7.118},
}
_SIGNALS = (
    "similarity",
    "coverage",
    "title_overlap",
    "agreement",
    "l0_match",
    "bm25_per_term",
    "dense_margin",
    "unseen_share",
    "unseen_idf",
    "rarest_idf",
    "rare_unseen_idf",
    "rare_unseen_latin_idf",
)


def confidence(signals: EvidenceSignals, model: dict[str, dict[str, float]]) -> float:
    """The logistic confidence of ``model``'s weights for the signals' family (else dense)."""
    weights = model.get(signals.family) or model["dense"]
    z = float(weights.get("bias", 0.0))
    for name in _SIGNALS:
        if name in weights:
            z += round(weights[name] * float(getattr(signals, name)), 4)
    z = max(-60.0, min(60.0, z))
    return 1.0 / (1.0 + math.exp(-z))


def baseline(items: list[dict]) -> dict:
    def signals(it: dict) -> EvidenceSignals | None:
        s = it["row"]["signals"]
        return None if s is None else EvidenceSignals(**s)

    def default(it: dict):
        s = signals(it)
        if s is None:
            return 0.0, False, "low"
        c = confidence(s, RELEVANCE_MODEL)
        return c, True, "high" if c >= 0.7588 else "medium" if c >= 0.3175 else "low"

    def calibrated(it: dict):
        s = signals(it)
        if s is None:
            return 0.0, False, "low"
        f = confidence(s, CALIBRATED_FOUND_MODEL)
        found = f >= 0.5 and not (s.family in ("sparse", "lexical") and s.coverage == 0)
        c = confidence(s, RELEVANCE_MODEL)
        return f, found, "high" if c >= 0.7588 else "medium" if c >= 0.3175 else "low"

    return {
        "similarity": table(
            decide_rows(items, default),
            "similarity found, relevance model level (removed)",
        ),
        "calibrated": table(decide_rows(items, calibrated), "calibrated (removed)"),
        "shipped": table(
            decide_rows(items, partial(judged, JudgeModel.configured(None))),
            "judgement, the shipped judge_model.json (fitted on all its knowledge bases)",
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+")
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--min-found", type=float, default=0.98)
    parser.add_argument("--max-right-low", type=float, default=0.03)
    parser.add_argument("--high-precision", type=float, default=0.93)
    parser.add_argument("--right-only", action="store_true")
    parser.add_argument("--hand-weight", type=float, default=1.0)
    parser.add_argument("--write", type=Path)
    parser.add_argument(
        "--judge",
        nargs="*",
        default=[],
        help="rows of a knowledge base (e.g. re-ingested with other chunks) judged by the model "
        "fitted on the other knowledge bases' rows",
    )
    parser.add_argument(
        "--features", type=lambda v: tuple(v.split(",")), default=FEATURES, help="comma list"
    )
    parser.add_argument("--drop", default="", help="comma list of features left out")
    parser.add_argument("--json", type=Path, help="write the leave-one-out figures here")
    args = parser.parse_args()
    args.features = tuple(f for f in args.features if f not in args.drop.split(","))
    options = FitOptions(
        features=args.features,
        l2=args.l2,
        min_found=args.min_found,
        max_right_low=args.max_right_low,
        high_precision=args.high_precision,
        right_only=args.right_only,
        hand_weight=args.hand_weight,
    )
    by_kb = read(args.rows)
    items = prepared(by_kb)
    if args.judge:
        judged_items = prepared(read(args.judge))
        decided = []
        for kb in sorted({i["kb"] for i in judged_items}):
            model = fit([i for i in items if i["kb"] != kb], options)
            decided += decide_rows(
                [i for i in judged_items if i["kb"] == kb], partial(judged, model)
            )
        table(decided, "judged rows, model fitted on the other knowledge bases")
        if args.baseline:
            baseline(judged_items)
        return
    baselines = baseline(items) if args.baseline else {}
    figures, _ = leave_one_out(items, options)
    if args.json:
        out = {"profiled": figures, **baselines}
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    if args.write:
        data = model_data(items, by_kb, options, figures)
        # named as question files and `eval queries --kb-name` name them
        labels = {
            "rben": "runbooks_en",
            "rbzh": "runbooks_zh",
            "apen": "apisix_en",
            "apzh": "apisix_zh",
            "tidb": "tidb_zh",
            "sf": "scifact",
        }
        data["leave_one_out"] = {labels.get(k, k): v for k, v in data["leave_one_out"].items()}
        data["fitted_on"] = {labels.get(k, k): v for k, v in data["fitted_on"].items()}
        args.write.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print("thresholds (all KBs):", data["thresholds"])


if __name__ == "__main__":
    main()
