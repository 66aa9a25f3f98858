"""Ranking metrics as BEIR / trec_eval compute them: nDCG@k, Recall@k, MRR@k.

A ranking is a list of document ids, best first. The cut ``@k`` applies to the ranking's first
``k`` entries (evidence blocks or chunks); a document seen again among them counts once, at its
first place. Relevance judgements map a document id to a grade; grades <= 0 are not relevant.

Example:
    >>> ndcg_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 3)
    0.9197207891481876
    >>> recall_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 2), mrr_at_k(["x", "a"], {"a": 1}, 10)
    (0.5, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = [
    "aggregate",
    "dedupe",
    "mrr_at_k",
    "ndcg_at_k",
    "per_query",
    "percentile",
    "recall_at_k",
]


def dedupe(ranking: Iterable[str]) -> list[str]:
    """The ranking with later duplicates removed (chunks -> their documents, first place wins)."""
    return list(dict.fromkeys(ranking))


def _relevant(qrels: Mapping[str, float]) -> dict[str, float]:
    return {doc: float(grade) for doc, grade in qrels.items() if grade > 0}


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Normalized DCG at ``k``, linear gains (trec_eval ``ndcg_cut``); 0.0 without judgements."""
    relevant = _relevant(qrels)
    if not relevant:
        return 0.0
    ranked = dedupe(ranking[:k])
    dcg = sum(relevant.get(doc, 0.0) / math.log2(i + 2) for i, doc in enumerate(ranked))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(grade / math.log2(i + 2) for i, grade in enumerate(ideal))
    return dcg / idcg


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Share of the relevant documents found in the first ``k`` (0.0 without judgements)."""
    relevant = _relevant(qrels)
    if not relevant:
        return 0.0
    return len(set(dedupe(ranking[:k])) & relevant.keys()) / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Reciprocal rank of the first relevant document within the first ``k``, else 0.0."""
    relevant = _relevant(qrels)
    for i, doc in enumerate(dedupe(ranking[:k])):
        if doc in relevant:
            return 1.0 / (i + 1)
    return 0.0


METRICS = {
    "ndcg": ndcg_at_k,
    "recall": recall_at_k,
    "mrr": mrr_at_k,
}


def _metric(name: str) -> tuple[Callable[[Sequence[str], Mapping[str, float], int], float], int]:
    metric, _, cut = name.partition("@")
    if metric not in METRICS or not cut.isdigit():
        msg = f"unknown metric {name!r}: use ndcg@K, recall@K or mrr@K"
        raise ValueError(msg)
    return METRICS[metric], int(cut)


def per_query(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    name: str,
) -> dict[str, float]:
    """One metric's value per judged query (queries without a relevant document are left out).

    Example:
        >>> per_query({"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 1}, "q2": {"c": 1}, "q3": {}},
        ...           "mrr@5")
        {'q1': 1.0, 'q2': 0.0}
    """
    fn, k = _metric(name)
    return {
        q: fn(rankings.get(q, []), judgements, k)
        for q, judgements in qrels.items()
        if _relevant(judgements)
    }


def aggregate(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    names: Sequence[str],
) -> dict[str, float]:
    """Mean of each metric (``"ndcg@10"``, ``"recall@5"``, ...) over the judged queries.

    A judged query with no ranking (nothing retrieved) counts as 0.

    Example:
        >>> aggregate({"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 1}, "q2": {"c": 1}}, ["recall@1"])
        {'recall@1': 0.5}
    """
    out: dict[str, float] = {}
    for name in names:
        values = list(per_query(rankings, qrels, name).values())
        out[name] = sum(values) / len(values) if values else 0.0
    return out


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (0-100) with linear interpolation; 0.0 for no values.

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
        2.5
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100.0
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
