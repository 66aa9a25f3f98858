"""Fit the calibrated evidence decision on dev-split reports; print the settings defaults.

Input: ``eval queries --json`` reports of dev files (never a test or holdout file: those are
scored blind and carry no signals), run with ``LOOKUP_KNOWLEDGE_EVIDENCE_DECISION=similarity``
so every question that got blocks has its signals. Each report's ``signals`` rows hold the
question's evidence signals, whether it is in scope, and whether its first block is relevant.

The model, per retrieval family (``dense``: dense or hybrid; ``sparse``: BM25 alone), is an
L2-regularised logistic regression of "the question is in scope" on the signals. Thresholds on
its confidence, all chosen on the same dev rows:

* ``found_confidence``: the highest that keeps ``--min-found`` of in-scope questions found;
A second model of the same form, the relevance model, predicts "the first block is a relevant
document"; on its confidence, among the questions found:

* ``high_confidence``: the lowest whose answers are correct at least ``--high-precision`` of
  the time;
* ``medium_confidence``: the same at ``--medium-precision``.

Usage::

    LOOKUP_KNOWLEDGE_EVIDENCE_DECISION=similarity lookup-knowledge eval queries \\
        evals/runbooks_en_symptom_dev.jsonl evals/out_of_scope_dev.jsonl --kb-name runbooks_en \\
        --collection rben --json > /tmp/dev_rben.json      # one per knowledge base
    python evals/fit_decision.py /tmp/dev_*.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

FEATURES = {  # of the found model (is the question in scope?)
    "dense": ("similarity", "coverage", "agreement"),
    "sparse": ("coverage", "bm25_per_term"),
}
LEVEL_FEATURES = {  # of the relevance model (is the first block a relevant document?)
    "dense": ("similarity", "coverage", "agreement"),
    "sparse": ("bm25_per_term",),
}
HELD_OUT = ("test", "holdout")


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        lines = [ln for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln[:1] == "{"]
        report = json.loads(lines[-1])
        files = str(report.get("file", ""))
        if report.get("blind") or any(m in files.lower() for m in HELD_OUT):
            sys.exit(f"{path}: a held-out report ({files}); fit on dev reports only")
        for row in report.get("signals", []):
            rows.append(row | {"report": path})
    return rows


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.1, steps: int = 50) -> np.ndarray:
    """Newton-Raphson (IRLS) with an L2 penalty on the weights (not the bias); the classes are
    weighted to count alike (out-of-scope questions are the rarer class)."""
    positives = max(float(y.sum()), 1.0)
    negatives = max(float(len(y) - y.sum()), 1.0)
    sample = np.where(y > 0, len(y) / (2 * positives), len(y) / (2 * negatives))
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -30, 30)))
        gradient = design.T @ (sample * (p - y)) + penalty @ w
        hessian = design.T @ (design * (sample * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit_families(
    rows: list[dict], features: dict[str, tuple[str, ...]], label: str, l2: float
) -> dict[str, dict[str, float]]:
    model: dict[str, dict[str, float]] = {}
    for family, names in features.items():
        fam = [r for r in rows if r.get("family") == family]
        if len({bool(r[label]) for r in fam}) < 2:
            print(f"{family}: {len(fam)} rows, one class of {label}: not fitted", file=sys.stderr)
            continue
        x = np.array([[float(r.get(n, 0.0)) for n in names] for r in fam])
        y = np.array([1.0 if r[label] else 0.0 for r in fam])
        w = fit_logistic(x, y, l2=l2)
        model[family] = {"bias": round(float(w[0]), 3)} | {
            n: round(float(v), 3) for n, v in zip(names, w[1:], strict=True)
        }
    return model


def confidence(row: dict, model: dict[str, dict[str, float]]) -> float | None:
    if "family" not in row:
        return None  # no block at all: found=false whatever the model
    weights = model[row["family"]]
    z = weights["bias"] + sum(w * float(row.get(f, 0.0)) for f, w in weights.items() if f != "bias")
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def lowest_with_precision(scored: list[tuple[float, bool]], precision: float) -> float:
    """The lowest threshold whose answers at or above it are correct >= ``precision``."""
    best = 1.0
    for t, _ in sorted(scored):
        above = [ok for c, ok in scored if c >= t]
        if above and sum(above) / len(above) >= precision:
            best = t
            break
    return math.floor(best * 10_000) / 10_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--min-found", type=float, default=0.985)
    parser.add_argument("--high-precision", type=float, default=0.95)
    parser.add_argument("--medium-precision", type=float, default=0.75)
    parser.add_argument("--l2", type=float, default=0.1)
    args = parser.parse_args(argv)
    rows = read_rows(args.reports)
    model = fit_families(rows, FEATURES, "in_scope", args.l2)
    levels = fit_families(rows, LEVEL_FEATURES, "correct", args.l2)
    scored = [(confidence(r, model), r) for r in rows if r.get("family") in model]
    inside = [c for c, r in scored if r["in_scope"]]
    n_inside = sum(1 for r in rows if r["in_scope"])
    keep = math.ceil(args.min_found * n_inside)
    found_t = sorted(inside, reverse=True)[keep - 1] if 0 < keep <= len(inside) else 0.0
    found_t = math.floor(found_t * 10_000) / 10_000
    answered = [
        (confidence(r, levels) or 0.0, bool(r["correct"]))
        for c, r in scored
        if c is not None and c >= found_t
    ]
    high_t = lowest_with_precision(answered, args.high_precision)
    medium_t = min(high_t, lowest_with_precision(answered, args.medium_precision))
    outside = [r for r in rows if not r["in_scope"]]
    rejected = sum(
        1
        for r in outside
        if (c := confidence(r, model) if "family" in r else None) is None or c < found_t
    )
    found_in = sum(1 for c in inside if c is not None and c >= found_t)
    summary = {
        "evidence_model": model,
        "relevance_model": levels,
        "found_confidence": found_t,
        "high_confidence": high_t,
        "medium_confidence": medium_t,
        "dev": {
            "rows": len(rows),
            "in_scope": n_inside,
            "out_of_scope": len(outside),
            "in_scope_found": round(found_in / n_inside, 4) if n_inside else None,
            "out_of_scope_no_evidence": round(rejected / len(outside), 4) if outside else None,
            "high": _precision(answered, high_t),
            "medium": _precision([a for a in answered if a[0] < high_t], medium_t),
        },
    }
    print(json.dumps(summary, indent=2))
    return 0


def _precision(answered: list[tuple[float, bool]], threshold: float) -> dict[str, float | int]:
    above = [ok for c, ok in answered if c >= threshold]
    share = round(sum(above) / len(above), 4) if above else 0.0
    return {"count": len(above), "correct_share": share}


if __name__ == "__main__":
    raise SystemExit(main())
