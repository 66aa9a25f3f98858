"""Compare the calibrated decision with and without extra signals, cross-validated on dev, paired.

``fit_decision.py --assignments 30`` gives each candidate's mean rates; this script puts a
baseline (the shipped model's signals, refitted) and candidates (the same plus ``--signals``)
through the same fold assignments and reports, for the default path (``mode=hybrid``) and per
language and kind (in scope, near miss, unrelated), each question's share of assignments decided
right, averaged, with a paired bootstrap interval (over questions) of the candidate's difference
from the baseline, and a Wilson interval at the mean rate.

Measured with it (session READER, dev only, default path, the reports of
``benchmarks/reader_signals.py`` over runbooks-en, runbooks-zh, APISIX en and zh, dev + dev2 + dev3,
340 in scope / 118 out): the shipped signals refitted 0.980 / 0.477; with ``reader_sent_max`` +
``reader_tok_idf`` + ``reader_e5`` on every family 0.979 / 0.564, +0.087 [+0.054, +0.121]
(English +0.093, Chinese +0.080; unrelated +0.116, near misses +0.049); leave one knowledge
base out +0.068 [+0.025, +0.119]. Not built: at the bar rather than clearly over it, and the
sentence reader costs 18-58x the lookup's own p50 (see the session's report).

Usage::

    python benchmarks/compare_signals.py /tmp/r/*.reader.json \\
        --candidate 'tok=hybrid=reader_tok_mean,dense=reader_tok_mean' \\
        --candidate 'e5=sparse=reader_e5,lexical=reader_e5,hybrid=reader_e5'
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import fit_decision as fd


def knowledge_base(row: dict) -> str:
    """The row's knowledge base: its report's ``collection`` (read by :func:`read`)."""
    return str(row.get("collection", row["report"]))


def leave_one_kb_out(
    rows: list[dict], args: argparse.Namespace, features: dict
) -> list[tuple[dict, bool, str]]:
    """Every row decided by a decision fitted on the other knowledge bases' rows only."""
    decided: list[tuple[dict, bool, str]] = []
    for kb in sorted({knowledge_base(r) for r in rows}):
        train = [r for r in rows if knowledge_base(r) != kb]
        held = [r for r in rows if knowledge_base(r) == kb]
        decided.extend(fd.outcomes(held, fd.fit_decision(train, args, features)))
    return decided


def per_question(
    rows: list[dict], args: argparse.Namespace, features: dict, assignments: int
) -> dict[str, float]:
    """Question key (report + id + mode) -> share of assignments whose held-out fit decided it
    right (found for an in-scope question, not found for an out-of-scope one); with
    ``--by-kb``, the one decision of a fit on the other knowledge bases."""
    right: dict[str, list[bool]] = {}
    for n in range(1 if args.by_kb else assignments):
        decided = (
            leave_one_kb_out(rows, args, features)
            if args.by_kb
            else fd.cross_validated(rows, args, features, salt="" if n == 0 else str(n))
        )
        for r, found, _ in decided:
            key = f"{r['report']}:{r['id']}:{r['mode']}"
            right.setdefault(key, []).append(found == bool(r["in_scope"]))
    return {k: float(np.mean(v)) for k, v in right.items()}


def read(paths: list[str]) -> list[dict]:
    """``fit_decision.read_rows`` with each row's report ``collection`` (its knowledge base)."""
    collection = {}
    for path in paths:
        lines = [ln for ln in Path(path).read_text(encoding="utf-8").splitlines() if ln[:1] == "{"]
        collection[path] = json.loads(lines[-1]).get("collection", path)
    return [r | {"collection": collection[r["report"]]} for r in fd.read_rows(paths)]


def bootstrap(diff: np.ndarray, draws: int = 4000, seed: int = 20261202) -> list[float]:
    """95% percentile interval of the mean of ``diff`` over resampled questions."""
    if len(diff) == 0:
        return [0.0, 0.0]
    rng = np.random.default_rng(seed)
    means = rng.choice(diff, size=(draws, len(diff)), replace=True).mean(axis=1)
    return [round(float(np.percentile(means, 2.5)), 3), round(float(np.percentile(means, 97.5)), 3)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument(
        "--candidate",
        action="append",
        default=[],
        help="NAME=family=signal+signal,family=signal (fit_decision's --signals form)",
    )
    parser.add_argument("--assignments", type=int, default=30)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--min-found", type=float, default=0.985)
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument(
        "--by-kb",
        action="store_true",
        help="leave one knowledge base out (fit on the others, decide it) instead of folds",
    )
    parser.add_argument(
        "--mode",
        default="hybrid",
        help="the path reported (rows of other modes are fitted on, not reported)",
    )
    args = parser.parse_args(argv)
    args.family_min_found = {}
    args.high_precision, args.medium_precision = 0.95, 0.75
    rows = read(args.reports)
    base_features = fd.with_vocabulary(fd.VOCABULARY_FEATURES)
    systems = {"baseline": base_features}
    for spec in args.candidate:
        name, _, signals = spec.partition("=")
        systems[name] = fd.with_signals(base_features, fd.family_signals(signals))
    outcome = {name: per_question(rows, args, f, args.assignments) for name, f in systems.items()}
    shown = [r for r in rows if r["mode"] == args.mode]
    groups: dict[str, list[dict]] = {"all in": [], "all out": []}
    for r in shown:
        side = "in" if r["in_scope"] else "out"
        groups[f"all {side}"].append(r)
        groups.setdefault(f"{r['lang']} {side}", []).append(r)
        if not r["in_scope"]:
            groups.setdefault(f"{r['kind']}", []).append(r)
            groups.setdefault(f"{r['lang']} {r['kind']}", []).append(r)
    out: dict[str, object] = {"rows": len(rows), "shown_mode": args.mode, "groups": {}}
    for group, members in sorted(groups.items()):
        keys = [f"{r['report']}:{r['id']}:{r['mode']}" for r in members]
        base = np.array([outcome["baseline"].get(k, 0.0) for k in keys])
        entry: dict[str, object] = {
            "n": len(keys),
            "baseline": round(float(base.mean()), 4),
            "baseline_wilson": fd.wilson(float(base.sum()), len(keys)),
        }
        for name in systems:
            if name == "baseline":
                continue
            cand = np.array([outcome[name].get(k, 0.0) for k in keys])
            entry[name] = round(float(cand.mean()), 4)
            entry[f"{name}_diff"] = round(float((cand - base).mean()), 4)
            entry[f"{name}_diff_ci"] = bootstrap(cand - base)
        out["groups"][group] = entry  # type: ignore[index]
    fits = {}
    for name, features in systems.items():
        fits[name] = fd.fit_found(rows, args.min_found, args.l2, features)
    out["fitted_on_all"] = fits
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
