"""Score semantics made explicit: every L1 score carries its path, metric, raw value and formula.

Normalized similarity (what thresholds compare) is in [0, 1], higher is better:
- COSINE / IP (unit vectors): ``max(0, raw)`` — the cosine itself, clipped at 0.
- L2: Milvus returns the SQUARED euclidean distance d; for unit vectors ``cos = 1 - d/2``, so
  ``similarity = max(0, 1 - d/2)`` (the L2-distance normalization, lower distance = higher).
- Hybrid / sparse: the fused or BM25 score ranks; the similarity is the dense cosine of the same
  chunk (computed from its stored vector), so thresholds mean the same in every mode.
- ``lexical_score`` (hybrid, when the rerank base mixes it in): the chunk's BM25 score over the
  best BM25 score among the candidates, in [0, 1] (:func:`scaled_bm25`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from langchain_lookup_knowledge.core.models import ScoreLabel

DENSE_FORMULAS = {
    "COSINE": "similarity = max(0, cosine)",
    "IP": "similarity = max(0, inner_product)  (unit vectors: = cosine)",
    "L2": "similarity = max(0, 1 - squared_l2/2)  (unit vectors: = cosine)",
}


def dense_similarity(metric: str, raw: float) -> float:
    """Normalize a dense Milvus score to a similarity in [0, 1]."""
    if metric == "L2":
        return float(min(1.0, max(0.0, 1.0 - raw / 2.0)))
    return float(min(1.0, max(0.0, raw)))


def dense_label(path: str, metric: str, raw: float) -> ScoreLabel:
    """The label of a dense hit."""
    return ScoreLabel(
        path=path,
        metric=metric,
        raw=float(raw),
        similarity=dense_similarity(metric, raw),
        formula=DENSE_FORMULAS.get(metric, "similarity = raw"),
        kind="dense",
    )


def fused_label(
    path: str, fusion: str, raw: float, similarity: float, *, lists: int, rrf_k: int
) -> ScoreLabel:
    """The label of a hybrid hit: ``rank_score`` is the fused score scaled to [0, 1]."""
    if fusion == "rrf":
        best = lists / (rrf_k + 1)
        formula = f"rank_score = rrf / {best:.5f} (rrf = sum 1/({rrf_k}+rank)); similarity = cosine"
    else:
        best = 1.0
        formula = "rank_score = weighted fused score; similarity = cosine"
    return ScoreLabel(
        path=path,
        metric=fusion.upper(),
        raw=float(raw),
        similarity=similarity,
        formula=formula,
        kind="hybrid",
        rank_score=float(min(1.0, max(0.0, raw / best))) if best else 0.0,
    )


def sparse_label(path: str, raw: float, rank: int, similarity: float, *, rrf_k: int) -> ScoreLabel:
    """The label of a BM25-only hit (raw sign differs between Milvus Lite and server)."""
    return ScoreLabel(
        path=path,
        metric="BM25",
        raw=float(raw),
        similarity=similarity,
        formula=f"rank_score = ({rrf_k}+1)/({rrf_k}+rank); similarity = cosine",
        kind="sparse",
        rank_score=(rrf_k + 1) / (rrf_k + rank),
    )


def scaled_bm25(keys: Sequence[str], raw: Mapping[str, float]) -> dict[str, float]:
    """Each key's BM25 score over the best of them (a key BM25 did not return: 0).

    The sign of a raw BM25 score differs between Milvus Lite and a server; its size does not.

    Example:
        >>> scaled_bm25(["a", "b", "c"], {"a": -8.0, "b": -2.0})
        {'a': 1.0, 'b': 0.25, 'c': 0.0}
    """
    sizes = {k: abs(v) for k, v in raw.items() if math.isfinite(v)}
    best = max((sizes.get(k, 0.0) for k in keys), default=0.0)
    return {k: sizes.get(k, 0.0) / best if best > 0 else 0.0 for k in keys}


def cosine_to(
    query: Sequence[float], vectors: Sequence[Sequence[float]] | np.ndarray
) -> list[float]:
    """Cosine of each vector to the query (vectors need not be normalized; a float32 matrix of
    them is read as it is)."""
    if len(vectors) == 0:
        return []
    q = np.asarray(query, dtype=np.float32)
    m = np.asarray(vectors, dtype=np.float32)
    denom = np.linalg.norm(m, axis=1) * max(float(np.linalg.norm(q)), 1e-12)
    sims = (m @ q) / np.clip(denom, 1e-12, None)
    return [float(min(1.0, max(0.0, s))) for s in sims.tolist()]
