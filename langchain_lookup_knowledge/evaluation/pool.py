"""Pool several ``eval queries --json`` reports: one figure, with its interval, over many sets.

Each report carries its per-question scores (``per_question``), so pooling needs no re-run:

* per set: the pipeline's MRR@5 against the best bare configuration *of that set* (the bare
  side's best case), with its paired interval;
* pooled over every question: the pipeline against the best *single* bare configuration (the
  one a user would have picked for all sets: best pooled MRR@5), against every other single
  configuration run on all sets (``vs_configs``), and against the per-set best, each with a
  stratified bootstrap interval (questions resampled within their own set);
* the evidence decision summed over the sets;
* with a ``variant``: also the variant against the pipeline it was run beside, per set and
  pooled (``vs_pipeline``), with how many questions it moved up and down: what decides whether
  a change is kept.

Example:
    >>> report = {"file": "a.jsonl", "per_question": {"pipeline": {"mrr@5": [1.0, 0.5]},
    ...           "dense": {"mrr@5": [0.5, 0.5]}}, "pipeline": {"decision": {}}}
    >>> pool_reports([report], metric="mrr@5")["pooled"]["vs_best_single"]["delta"]
    0.25
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.stats import paired_bootstrap, pooled_bootstrap

__all__ = ["format_pool", "load_report", "pool_reports"]

PIPELINE = "pipeline"


def load_report(path: str | Path) -> dict[str, Any]:
    """An ``eval queries --json`` report from a file (its last JSON line).

    Raises:
        ConfigurationError: missing file, no JSON line, or a report without per-question scores.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigurationError(f"report not found: {file}")
    lines = [ln for ln in file.read_text(encoding="utf-8").splitlines() if ln.startswith("{")]
    if not lines:
        raise ConfigurationError(f"{file}: no JSON report (run eval queries with --json)")
    try:
        report = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{file}: invalid JSON report: {exc}") from None
    if not isinstance(report, dict) or PIPELINE not in report.get("per_question", {}):
        raise ConfigurationError(f"{file}: not an eval queries report with per-question scores")
    return report


def _with_variant(report: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """The report with the variant's per-question scores as the pipeline's."""
    found = report.get("variants", {}).get(variant)
    if found is None:
        raise ConfigurationError(f"{report.get('file')}: no variant {variant!r} in the report")
    per_question = dict(report["per_question"]) | {PIPELINE: found["per_question"]}
    pipeline = dict(report.get("pipeline", {})) | {"decision": found.get("decision", {})}
    return dict(report) | {"per_question": per_question, "pipeline": pipeline}


def _variant_vs_pipeline(
    reports: Sequence[Mapping[str, Any]], variant: str, metric: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per set and pooled: the variant's ``metric`` minus the pipeline's, question by question."""
    groups: list[tuple[list[float], list[float]]] = []
    rows: list[dict[str, Any]] = []
    for report in reports:
        ours = list(report["per_question"][PIPELINE][metric])
        found = report.get("variants", {}).get(variant) or {}
        theirs = list((found.get("per_question") or {}).get(metric, []))
        if len(theirs) != len(ours):
            raise ConfigurationError(
                f"{report.get('file')}: no per-question {metric} of {variant!r}"
            )
        groups.append((theirs, ours))
        rows.append(
            _moved(theirs, ours) | {"vs_pipeline": paired_bootstrap(theirs, ours).as_dict()}
        )
    pooled_moves = _moved([x for a, _ in groups for x in a], [x for _, b in groups for x in b])
    pooled = {"name": variant, "vs_pipeline": pooled_bootstrap(groups).as_dict()} | pooled_moves
    return rows, pooled


def _moved(theirs: Sequence[float], ours: Sequence[float]) -> dict[str, int]:
    return {
        "up": sum(1 for a, b in zip(theirs, ours, strict=True) if a > b + 1e-9),
        "down": sum(1 for a, b in zip(theirs, ours, strict=True) if a < b - 1e-9),
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _sum_decisions(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    inside = outside = found_in = rejected_out = 0
    levels: dict[str, dict[str, int]] = {}
    for report in reports:
        rates = report[PIPELINE].get("decision") or {}
        n_in, n_out = rates.get("in_scope", 0), rates.get("out_of_scope", 0)
        inside += n_in
        outside += n_out
        found_in += round((rates.get("in_scope_found") or 0.0) * n_in)
        rejected_out += round((rates.get("out_of_scope_no_evidence") or 0.0) * n_out)
        for level, counts in (rates.get("levels") or {}).items():
            acc = levels.setdefault(level, {"count": 0, "correct": 0})
            acc["count"] += counts["count"]
            acc["correct"] += counts["correct"]
    return {
        "in_scope": inside,
        "out_of_scope": outside,
        "in_scope_found": round(found_in / inside, 4) if inside else None,
        "out_of_scope_no_evidence": round(rejected_out / outside, 4) if outside else None,
        "levels": {
            lvl: v | {"correct_share": round(v["correct"] / v["count"], 4) if v["count"] else 0.0}
            for lvl, v in levels.items()
        },
    }


def pool_reports(
    reports: Sequence[Mapping[str, Any]], *, metric: str = "mrr@5", variant: str | None = None
) -> dict[str, Any]:
    """Per-set and pooled comparison of the pipeline with the bare configurations on ``metric``.

    ``variant``: an ``eval queries --variant`` of every report takes the pipeline's place (its
    per-question scores, against the same run's bare configurations).

    Raises:
        ConfigurationError: no report, a report without ``metric`` per question, or without
            the variant.
    """
    if not reports:
        raise ConfigurationError("no reports to pool")
    moves: list[dict[str, Any]] = []
    against_pipeline: dict[str, Any] = {}
    if variant is not None:
        replaced = [_with_variant(report, variant) for report in reports]
        moves, against_pipeline = _variant_vs_pipeline(reports, variant, metric)
        reports = replaced
    sets: list[dict[str, Any]] = []
    ours_groups: list[list[float]] = []
    per_config: dict[str, list[list[float]]] = {}
    best_groups: list[list[float]] = []
    for report in reports:
        per_question = report["per_question"]
        if metric not in per_question[PIPELINE]:
            raise ConfigurationError(f"{report.get('file')}: no per-question {metric}")
        ours = list(per_question[PIPELINE][metric])
        bare = {name: list(v[metric]) for name, v in per_question.items() if name != PIPELINE}
        row: dict[str, Any] = {
            "file": report.get("file"),
            "questions": len(ours),
            PIPELINE: round(_mean(ours), 4),
            "recall@5": round(_mean(per_question[PIPELINE].get("recall@5", [])), 4),
        }
        if bare:
            best = max(bare, key=lambda name: _mean(bare[name]))
            row |= {
                "best_bare": best,
                "best_bare_score": round(_mean(bare[best]), 4),
                "vs_best_bare": paired_bootstrap(ours, bare[best]).as_dict(),
            }
            best_groups.append(bare[best])
        if moves:
            row["variant"] = moves[len(sets)]
        sets.append(row)
        ours_groups.append(ours)
        for name, values in bare.items():
            per_config.setdefault(name, []).append(values)
    total = sum(len(g) for g in ours_groups)
    pooled: dict[str, Any] = {
        "questions": total,
        PIPELINE: round(sum(sum(g) for g in ours_groups) / total, 4) if total else 0.0,
    }
    # A configuration missing from a set cannot be the single configuration for all sets.
    complete = {n: g for n, g in per_config.items() if len(g) == len(reports)}
    if complete:
        means = {n: sum(sum(g) for g in groups) / total for n, groups in complete.items()}
        single = max(means, key=lambda n: means[n])
        pooled["configs"] = {n: round(v, 4) for n, v in means.items()}
        pooled["best_single"] = single
        pooled["vs_configs"] = {
            name: pooled_bootstrap(list(zip(ours_groups, groups, strict=True))).as_dict()
            for name, groups in complete.items()
        }
        pooled["vs_best_single"] = pooled["vs_configs"][single]
    if len(best_groups) == len(reports):
        pooled["vs_best_per_set"] = pooled_bootstrap(
            list(zip(ours_groups, best_groups, strict=True))
        ).as_dict()
        pooled["sets_ahead"] = sum(1 for s in sets if s["vs_best_bare"]["delta"] >= 0)
    if against_pipeline:
        pooled["variant"] = against_pipeline
    return {
        "metric": metric,
        "sets": sets,
        "pooled": pooled,
        "decision": _sum_decisions(reports),
    }


def _iv(interval: Mapping[str, Any]) -> str:
    return f"{interval['delta']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def format_pool(pool: Mapping[str, Any]) -> str:
    """A readable table of :func:`pool_reports`."""
    metric = pool["metric"]
    lines = [f"{'set':<48}{'n':>5}{'R@5':>8}{metric:>8}  best bare ({metric})  delta, 95% CI"]
    for row in pool["sets"]:
        best = (
            f"{row['best_bare']} {row['best_bare_score']:.3f}  {_iv(row['vs_best_bare'])}"
            if "best_bare" in row
            else "-"
        )
        lines.append(
            f"{str(row['file'])[-48:]:<48}{row['questions']:>5}{row['recall@5']:>8.3f}"
            f"{row[PIPELINE]:>8.3f}  {best}"
        )
    pooled = pool["pooled"]
    lines.append(
        f"pooled: {pooled['questions']} questions, pipeline {metric} {pooled[PIPELINE]:.3f}"
    )
    if "best_single" in pooled:
        single = pooled["best_single"]
        lines.append(
            f"  vs best single bare ({single} {pooled['configs'][single]:.3f}): "
            f"{_iv(pooled['vs_best_single'])}"
        )
        for name, interval in pooled["vs_configs"].items():
            if name != single:
                lines.append(f"  vs bare {name} ({pooled['configs'][name]:.3f}): {_iv(interval)}")
    if "vs_best_per_set" in pooled:
        lines.append(
            f"  vs best bare of each set: {_iv(pooled['vs_best_per_set'])}; ahead on "
            f"{pooled['sets_ahead']} of {len(pool['sets'])}"
        )
    if "variant" in pooled:
        v = pooled["variant"]
        changed = [
            f"{Path(str(row['file'])).name} +{row['variant']['up']}/-{row['variant']['down']}"
            for row in pool["sets"]
            if row["variant"]["up"] or row["variant"]["down"]
        ]
        lines.append(
            f"  variant {v['name']} against the pipeline beside it: {_iv(v['vs_pipeline'])}, "
            f"{v['up']} questions up, {v['down']} down"
            + (f" ({', '.join(changed)})" if changed else "")
        )
    decision = pool["decision"]
    if decision["in_scope"]:
        from langchain_lookup_knowledge.evaluation.queries import format_decision

        lines.append("evidence decision: " + format_decision(decision))
    return "\n".join(lines)
