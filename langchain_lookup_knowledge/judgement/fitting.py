"""Fit the judgement across knowledge bases, and judge each knowledge base left out.

Rows (one lookup each, written by ``lookup-knowledge judge rows`` or ``benchmarks/judge_rows.py``)
carry a question's kind (``in``: in scope with its documents in ``rel``; ``near``,
``unrelated``, ``cross``: out of scope; ``probe`` and ``pseudo``: the knowledge base's profiling
questions), the lookup's block scores and its evidence signals. Each knowledge base's profile is
made from its own probe and pseudo-question rows, as ``ingest`` makes it; per knowledge base K the
model is fitted on the other knowledge bases' rows (thresholds too) and judges K's.

Example:
    >>> label({"kind": "in", "rel": ["a"], "blocks": [{"src": "b"}, {"src": "a"}]})["top5"]
    True
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from langchain_lookup_knowledge.judgement.features import (
    KbProfile,
    judgement_features,
    profile_from_rows,
    row_vector,
)
from langchain_lookup_knowledge.judgement.model import (
    FEATURES,
    JudgeModel,
    fit_group,
    thresholds_for,
)
from langchain_lookup_knowledge.judgement.questions import PSEUDO_QUESTIONS, profile_questions

__all__ = ["FitOptions", "fit", "leave_one_out", "model_data", "prepared", "read", "table"]


@dataclass(frozen=True)
class FitOptions:
    """How the model is fitted: its features, the L2 penalty, and what the thresholds keep
    (``min_found`` of the in-scope questions with a relevant block in the top 5 found; at most
    ``max_right_low`` of the right answers low or not found; ``high`` right
    ``high_precision`` of the time)."""

    features: tuple[str, ...] = FEATURES
    l2: float = 1.0
    min_found: float = 0.98
    max_right_low: float = 0.03
    high_precision: float = 0.93
    right_only: bool = False
    hand_weight: float = 1.0  # a written out-of-scope question's weight beside a cross one


OOS_KINDS = ("near", "unrelated", "cross")
MIN_GROUP_IN_SCOPE = 30
"""In-scope rows a group needs for thresholds of its own (else it keeps the shared ones)."""


def read(paths: Sequence[str | Path]) -> dict[str, list[dict]]:
    """Rows by knowledge base (each row's ``kb``)."""
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


def profile_rows(rows: list[dict]) -> list[dict]:
    """The probe and pseudo-question rows of the questions ``ingest`` profiles with (the
    harness looks up more)."""
    probes = {q["q"] for q in profile_questions([]) if q["kind"] == "probe"}
    pseudo = [r for r in rows if r["kind"] == "pseudo"][:PSEUDO_QUESTIONS]
    return [r for r in rows if r["kind"] == "probe" and r["q"] in probes] + pseudo


def profile_of(rows: list[dict]) -> KbProfile:
    """A knowledge base's profile: its measured ``profile`` row, else made of its probe and
    pseudo-question lookups."""
    measured = [r["profile"] for r in rows if r["kind"] == "profile"]
    return KbProfile.from_dict(measured[-1]) if measured else profile_from_rows(profile_rows(rows))


def prepared(by_kb: dict[str, list[dict]]) -> list[dict]:
    """Judged rows with their features (read against their own KB's profile)."""
    out = []
    for kb, rows in by_kb.items():
        profile = profile_of(rows)
        for row in rows:
            if row["kind"] in ("probe", "pseudo", "profile"):
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


def decide_rows(items: list[dict], decide: Callable[[dict], tuple[float, bool, str]]) -> list[dict]:
    """``items`` with each one's ``score``, ``found`` and ``level`` by ``decide``."""
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


def table(items: list[dict], title: str, echo: Callable[[str], None] = print) -> dict:
    """Per knowledge base, per language and pooled :func:`rates`, each line echoed."""
    echo(f"== {title}")
    out = {}
    for kb in sorted({i["kb"] for i in items}):
        r = rates([i for i in items if i["kb"] == kb])
        out[kb] = r
        echo(show(kb, r))
    cjk = {
        kb
        for kb in out
        if sum(not i["row"].get("readable", True) for i in items if i["kb"] == kb and i["in"])
        > sum(i["in"] for i in items if i["kb"] == kb) / 2
    }  # knowledge bases whose questions are mostly ones the embedder cannot read
    for name, keep in (("en", lambda k: k not in cjk), ("zh", lambda k: k in cjk)):
        echo(show(name, rates([i for i in items if keep(i["kb"])])))
    out["pooled"] = rates(items)
    echo(show("pooled", out["pooled"]))
    return out


def fit(items: list[dict], args: FitOptions) -> JudgeModel:
    """The model of ``items`` (their groups' logistic models, then the thresholds)."""
    groups = {}
    for group in ("dense", "bm25"):
        rows = [i for i in items if i.get("group") == group and (i["in"] or i["oos"])]
        if args.right_only:
            rows = [i for i in rows if i["right1"] or i["oos"]]
        rows = [
            i | {"weight": args.hand_weight if i["row"]["kind"] in ("near", "unrelated") else 1.0}
            for i in rows
        ]
        groups[group] = fit_group(rows, args.features, l2=args.l2)
    model = JudgeModel(groups=groups, thresholds={})
    scored = [(i, model.score_features(i["group"], i["x"])) for i in items if "x" in i]
    choose = partial(
        thresholds_for,
        min_found=args.min_found,
        max_right_low=args.max_right_low,
        high_precision=args.high_precision,
    )
    thresholds = choose([(s, i["top5"], i["right1"], i["oos"]) for i, s in scored])
    by_group = {}
    for group in groups:
        labelled = [(s, i["top5"], i["right1"], i["oos"]) for i, s in scored if i["group"] == group]
        if sum(top5 for _, top5, _, _ in labelled) >= MIN_GROUP_IN_SCOPE:
            by_group[group] = choose(labelled)
    return JudgeModel(groups=groups, thresholds=thresholds, group_thresholds=by_group)


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


def judged(model: JudgeModel, it: dict) -> tuple[float, bool, str]:
    """``(score, found, level)`` of one prepared row by ``model``."""
    if "x" not in it:
        return 0.0, False, "low"
    score = model.score_features(it["group"], it["x"])
    signals = it["row"]["signals"]
    if signals["family"] == "lexical":  # as a lookup scores it (judgement.decide)
        from langchain_lookup_knowledge.judgement.decide import lexical_score
        from langchain_lookup_knowledge.judgement.signals import EvidenceSignals

        score = lexical_score(EvidenceSignals(**signals), model)
    found, level = model.decide(score, "lexical" if signals["family"] == "lexical" else it["group"])
    return score, found, level


def leave_one_out(
    items: list[dict], options: FitOptions, echo: Callable[[str], None] = print
) -> tuple[dict[str, Any], list[dict]]:
    """Per knowledge base, the model fitted on the others judges it: the figures (per KB,
    per language, pooled) and the judged rows."""
    decided: list[dict] = []
    for kb in sorted({i["kb"] for i in items}):
        model = fit([i for i in items if i["kb"] != kb], options)
        decided += decide_rows([i for i in items if i["kb"] == kb], partial(judged, model))
    return table(decided, "judgement, leave-one-KB-out", echo), decided


def model_data(
    items: list[dict], by_kb: dict[str, list[dict]], options: FitOptions, figures: dict
) -> dict[str, Any]:
    """The model file: fitted on every knowledge base, with the typical profile and the
    leave-one-out figures (rates) per knowledge base and pooled."""
    model = fit(items, options)

    def as_rates(r: dict) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, value in r.items():
            if isinstance(value, tuple):
                out[name] = round(value[0] / value[1], 4) if value[1] else None
            else:
                out[name] = None if value is None else round(float(value), 4)
        return out

    return model.to_dict() | {
        "typical_profile": typical([profile_of(r) for r in by_kb.values()]).to_dict(),
        "fitted_on": {kb: len(r) for kb, r in sorted(by_kb.items())},
        "leave_one_out": {k: as_rates(v) for k, v in figures.items()},
    }
