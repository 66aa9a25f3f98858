"""The human-readable form of an ``eval queries`` report, with a legend for every figure.

Example:
    >>> print(format_queries(report))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge.evaluation.runner import systems_table

__all__ = ["format_decision", "format_judgement", "format_queries", "interval_text"]


def interval_text(interval: Mapping[str, Any]) -> str:
    return f"{interval['delta']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def format_decision(rates: Mapping[str, Any]) -> str:
    """One line of evidence-decision rates."""
    levels = ", ".join(
        f"{lvl} {v['count']} ({v['correct_share']:.0%} correct)"
        for lvl, v in rates["levels"].items()
        if v["count"]
    )
    oos = rates["out_of_scope_no_evidence"]
    return (
        f"found on in-scope {rates['in_scope_found']:.3f}; found=false on out-of-scope "
        + ("n/a" if oos is None else f"{oos:.3f}")
        + f"; levels: {levels or 'none'}"
    )


def format_judgement(rates: Mapping[str, Any], kb_name: str | None = None) -> list[str]:
    """The judgement table: this run (the shipped model on this knowledge base) and, from the
    shipped model's file, its leave-one-knowledge-base-out figures (``kb_name``'s when it was
    one of them, and pooled)."""
    from langchain_lookup_knowledge.judgement.model import leave_one_out_figures

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    levels = rates["right_at_1_levels"]
    rows = [
        (
            "this run",
            pct(rates["in_scope_found"]),
            pct(rates["out_of_scope_no_evidence"]),
            f"{levels['high']}/{levels['medium']}/{levels['low']}/{levels['none']}",
            pct(rates["high_right"]),
            str(rates["out_of_scope_medium_or_high"]),
            pct(rates["auroc"]),
        )
    ]
    for name, fig in leave_one_out_figures(kb_name).items():
        rows.append(
            (
                f"left out: {name}",
                pct(fig.get("in_found")),
                pct(fig.get("oos_nf")),
                "-",
                pct(fig.get("high_right")),
                "-",
                pct(fig.get("auroc")),
            )
        )
    head = (
        "judgement",
        "in found",
        "out found=false",
        "right@1 h/m/l/none",
        "high right",
        "out med/high",
        "AUROC",
    )
    width = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, width, strict=True))
        for row in (head, *rows)
    ]


def format_queries(report: dict[str, Any]) -> str:
    """A readable table of a :func:`run_queries` report."""
    lines = [
        f"{report['questions']} questions ({report['in_scope']} in scope, "
        f"{report['out_of_scope']} out of scope) from {report['file']} on "
        f"{report['collection']!r}" + (" [blind]" if report.get("blind") else ""),
        *systems_table(report, ("recall@5", "mrr@5", "mrr@10", "ndcg@10", "p50_ms"), name_width=20),
    ]
    for name, scores in report["baselines"].items():
        iv = scores["vs_pipeline"]
        lines.append(
            f"pipeline - bare {name}: MRR@5 {interval_text(iv['mrr@5'])}, "
            f"nDCG@10 {interval_text(iv['ndcg@10'])}"
        )
    if report["baselines"]:
        lines.append(
            "  (difference of the means on the same questions, [95% bootstrap interval]: "
            "above 0, the pipeline ranks better)"
        )
    pipeline = report["pipeline"]
    lines.append("evidence decision: " + format_decision(pipeline["decision"]))
    if "judgement" in pipeline:
        lines += format_judgement(pipeline["judgement"], report.get("kb_name"))
    lines.append(
        "  (found: the lookup returned evidence; levels: how many answers got each "
        "relevanceLevel, and how many of those were right)"
    )
    lines.append(
        f"unfiltered retries (fallbacks): {pipeline['fallbacks']} of {report['questions']} "
        "questions (the search within the category the question names found nothing or too "
        "little, so the whole collection was searched)"
    )
    for name, ablation in report.get("ablations", {}).items():
        gain = ablation["gain"]
        lines.append(
            f"ablate {name} ({ablation['off']} off): MRR@5 {ablation['mrr@5']:.4f}, gain of the "
            f"component MRR@5 {interval_text(gain['mrr@5'])}, nDCG@10 "
            f"{interval_text(gain['ndcg@10'])}"
        )
    for name, variant in report.get("variants", {}).items():
        iv = variant["vs_pipeline"]
        lines.append(
            f"variant {name} {json.dumps(variant['overrides'])}: MRR@5 {variant['mrr@5']:.4f}, "
            f"variant - pipeline MRR@5 {interval_text(iv['mrr@5'])}, "
            f"nDCG@10 {interval_text(iv['ndcg@10'])}"
        )
    for skipped in report.get("not_indexed", []):
        lines.append(
            f"  not scored (document not in the collection): {skipped['q']!r} rel={skipped['rel']}"
        )
    misses = pipeline["misses@5"]
    if isinstance(misses, list):
        for miss in misses:
            lines.append(f"  miss@5: {miss['q']!r} rel={miss['rel']} got={miss['got']}")
        if misses:
            lines.append("  (miss@5: no relevant document in the first 5; rel: the relevant ones)")
    else:
        lines.append(
            f"misses@5 (no relevant document in the first 5): {misses} (blind: questions not shown)"
        )
    return "\n".join(lines)
