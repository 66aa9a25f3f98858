"""The evidence decision measured: found rates in and out of scope, and how right each level is.

* ``in_scope_found``: share of answerable questions that got ``found=true``.
* ``out_of_scope_no_evidence``: share of questions the knowledge base does not answer that got
  ``found=false`` (None without such questions).
* ``right_answers_found``: share of answerable questions whose reranked first block (before
  the decision: ``extra["first"]``, else the ranking) is a relevant document that got
  ``found=true`` (a right answer the decision withheld counts against it;
  a wrong first block it withheld does not).
* per ``relevanceLevel`` (answers with ``found=true`` only): how many, and the share whose first
  block is a relevant document (an out-of-scope answer is never correct).

Example:
    >>> from langchain_lookup_knowledge.evaluation.runner import RunOutput
    >>> run = RunOutput(rankings={"q1": ["a"], "q2": ["b"]},
    ...                 extra={"found": {"q1": True, "q2": False}, "relevance": {"q1": "high"}})
    >>> rates = decision_rates(run, {"q1": {"a": 1.0}, "q2": {}})
    >>> rates["in_scope_found"], rates["out_of_scope_no_evidence"], rates["levels"]["high"]
    (1.0, 1.0, {'count': 1, 'correct': 1, 'correct_share': 1.0})
    >>> rates["right_answers_found"]
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge.evaluation.runner import RunOutput

__all__ = ["LEVELS", "auroc", "decision_rates", "first_is_relevant", "judgement_rates"]

LEVELS = ("high", "medium", "low")


def first_is_relevant(ranking: list[str], judgements: Mapping[str, float]) -> bool:
    """The first document of ``ranking`` is relevant."""
    return bool(ranking) and judgements.get(ranking[0], 0.0) > 0


def decision_rates(run: RunOutput, qrels: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """Found rates and per-level correctness of a pipeline run (see the module docstring)."""
    found: Mapping[str, bool] = run.extra.get("found", {})
    levels: Mapping[str, str] = run.extra.get("relevance", {})
    inside = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    outside = [q for q in qrels if q not in set(inside)]
    firsts: Mapping[str, str] = run.extra.get("first", {})
    right = [
        q
        for q in inside
        if first_is_relevant([firsts[q]] if q in firsts else run.rankings.get(q, []), qrels[q])
    ]
    per_level: dict[str, dict[str, Any]] = {}
    for level in LEVELS:
        answered = [q for q in qrels if found.get(q) and levels.get(q) == level]
        correct = sum(1 for q in answered if first_is_relevant(run.rankings.get(q, []), qrels[q]))
        per_level[level] = {
            "count": len(answered),
            "correct": correct,
            "correct_share": round(correct / len(answered), 4) if answered else 0.0,
        }
    return {
        "in_scope": len(inside),
        "out_of_scope": len(outside),
        "in_scope_found": round(sum(1 for q in inside if found.get(q)) / len(inside), 4)
        if inside
        else None,
        "out_of_scope_no_evidence": round(
            sum(1 for q in outside if not found.get(q)) / len(outside), 4
        )
        if outside
        else None,
        "levels": per_level,
        "right_answers_found": round(sum(1 for q in right if found.get(q)) / len(right), 4)
        if right
        else None,
    }


def auroc(positives: list[float], negatives: list[float]) -> float | None:
    """The chance that a positive scores above a negative (ties count half); None without
    one of them.

    Example:
        >>> auroc([0.9, 0.8], [0.1, 0.8])
        0.875
    """
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 4)


def judgement_rates(
    run: RunOutput, qrels: Mapping[str, Mapping[str, float]], k: int = 5
) -> dict[str, Any]:
    """The judgement against the truth: ``found`` on in-scope questions with a relevant
    document in the first ``k`` and on out-of-scope ones, the levels of the questions answered
    right at rank 1 (``none``: not found), how right ``high`` is, and the AUROC of
    ``relevanceScore`` (no blocks: 0) for right at rank 1 against out of scope.

    Example:
        >>> from langchain_lookup_knowledge.evaluation.runner import RunOutput
        >>> run = RunOutput(rankings={"q1": ["a"], "q2": []}, extra={
        ...     "found": {"q1": True, "q2": False}, "relevance": {"q1": "high"},
        ...     "score": {"q1": 0.9}, "reranked": {"q1": ["a"], "q2": ["b"]}})
        >>> rates = judgement_rates(run, {"q1": {"a": 1.0}, "q2": {}})
        >>> rates["right_at_1_levels"], rates["auroc"]
        ({'high': 1, 'medium': 0, 'low': 0, 'none': 0}, 1.0)
    """
    found: Mapping[str, bool] = run.extra.get("found", {})
    levels: Mapping[str, str] = run.extra.get("relevance", {})
    scores: Mapping[str, float | None] = run.extra.get("score", {})
    reranked: Mapping[str, list[str]] = run.extra.get("reranked", {})
    inside = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    outside = [q for q in qrels if q not in set(inside)]
    # the reranked blocks, also of a lookup the decision withheld (found=false)
    ranked = {q: list(reranked.get(q) or run.rankings.get(q, [])) for q in qrels}
    top = [q for q in inside if any(qrels[q].get(d, 0) > 0 for d in ranked[q][:k])]
    right = [q for q in inside if first_is_relevant(ranked[q], qrels[q])]
    by_level = {lvl: 0 for lvl in (*LEVELS, "none")}
    for q in right:
        by_level[levels.get(q, "low") if found.get(q) else "none"] += 1
    high = [q for q in qrels if found.get(q) and levels.get(q) == "high"]
    hand = [q for q in outside if found.get(q) and levels.get(q) in ("high", "medium")]

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    return {
        "in_scope_top_k": len(top),
        "in_scope_found": share(sum(1 for q in top if found.get(q)), len(top)),
        "out_of_scope": len(outside),
        "out_of_scope_no_evidence": share(
            sum(1 for q in outside if not found.get(q)), len(outside)
        ),
        "out_of_scope_medium_or_high": len(hand),
        "right_at_1": len(right),
        "right_at_1_levels": by_level,
        "high": len(high),
        "high_right": share(sum(1 for q in high if q in set(right)), len(high)),
        "auroc": auroc(
            [float(scores.get(q) or 0.0) for q in right],
            [float(scores.get(q) or 0.0) for q in outside],
        ),
    }
