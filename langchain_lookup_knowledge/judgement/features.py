"""What the judgement reads of one lookup, relative to the knowledge base's own profile.

A lookup's blocks give its sorted score vectors (:class:`ScoreVector`: the dense similarities,
the fused rank scores, the BM25 score per question term of a BM25-only lookup). The knowledge
base's :class:`KbProfile` holds, per key score, what its off-topic probes, its own
pseudo-questions and those pseudo-questions with their own document left out scored at ingest;
:func:`judgement_features` reads the lookup's key score as a percentile of each (arXiv
2410.08320: the fit of a question's similarity to the knowledge base's own distribution) beside
the vector's shape (arXiv 2402.12997) and the evidence signals (term coverage, the legs'
agreement, the question's terms the knowledge base never names). Pure arithmetic, no I/O.

Example:
    >>> profile = KbProfile(keys={"dense": {"probe": [0.1, 0.2, 0.3], "own": [0.6, 0.7, 0.8],
    ...                                     "out": [0.4, 0.5, 0.6]}})
    >>> round(profile.percentile("dense", "probe", 0.25), 2)
    0.75
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "GROUPS",
    "KbProfile",
    "ScoreVector",
    "group_of",
    "judgement_features",
    "profile_from_rows",
    "quantiles",
    "row_vector",
    "score_vector",
]

GROUPS = {"dense": ("hybrid", "dense"), "bm25": ("sparse", "lexical")}
"""The judgement's two models: a lookup whose dense similarity the embedder can read (hybrid or
dense family), and one judged on BM25 alone (sparse or lexical family)."""

QUANTILES = 21  # points stored per distribution: every 5%
_VECTOR = 5


def quantiles(values: Sequence[float], points: int = QUANTILES) -> list[float]:
    """``points`` evenly spaced quantiles of ``values`` (linear interpolation), rounded.

    Example:
        >>> quantiles([0.0, 1.0], points=3)
        [0.0, 0.5, 1.0]
    """
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return []
    out = []
    for i in range(points):
        pos = i * (len(ordered) - 1) / (points - 1)
        low = math.floor(pos)
        high = min(low + 1, len(ordered) - 1)
        out.append(round(ordered[low] + (ordered[high] - ordered[low]) * (pos - low), 5))
    return out


@dataclass(frozen=True)
class KbProfile:
    """A knowledge base's own score distributions, measured at ingest.

    ``keys`` maps a key score (``dense``: the top dense similarity of a lookup the embedder
    reads; ``bm25``: the top BM25 score per question term of a BM25-only lookup) to its
    quantiles for each kind of profiling question: ``probe`` (off-topic probes), ``own`` (the
    knowledge base's pseudo-questions) and ``out`` (the same, their own document left out).
    """

    keys: Mapping[str, Mapping[str, Sequence[float]]] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)

    def percentile(self, key: str, kind: str, value: float) -> float:
        """Share of ``kind``'s distribution of ``key`` below ``value`` (0.5 when unknown)."""
        points = list(self.keys.get(key, {}).get(kind, ()))
        if not points:
            return 0.5
        if value <= points[0]:
            return 0.0
        if value >= points[-1]:
            return 1.0
        i = bisect.bisect_right(points, value)
        low, high = points[i - 1], points[i]
        frac = 0.0 if high <= low else (value - low) / (high - low)
        return (i - 1 + frac) / (len(points) - 1)

    def median(self, key: str, kind: str) -> float | None:
        points = list(self.keys.get(key, {}).get(kind, ()))
        return points[len(points) // 2] if points else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "keys": {k: {n: list(v) for n, v in d.items()} for k, d in self.keys.items()},
            "counts": dict(self.counts),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KbProfile:
        keys = data.get("keys", {})
        return cls(
            keys={
                str(k): {str(n): [float(x) for x in v] for n, v in d.items()}
                for k, d in keys.items()
            },
            counts={str(k): int(v) for k, v in data.get("counts", {}).items()},
        )


@dataclass(frozen=True)
class ScoreVector:
    """The sorted scores of a lookup's blocks (best first), as the judgement reads them."""

    family: str
    dense: tuple[float, ...] = ()
    fused: tuple[float, ...] = ()
    bm25: tuple[float, ...] = ()  # per question term, BM25-only lookups

    def key(self) -> tuple[str, float]:
        """The key score of the lookup's group (see :data:`GROUPS`) and its value."""
        if group_of(self.family) == "bm25":
            return "bm25", self.bm25[0] if self.bm25 else 0.0
        return "dense", self.dense[0] if self.dense else 0.0


def group_of(family: str) -> str:
    """``dense`` or ``bm25``: which model judges a lookup of ``family``."""
    return "bm25" if family in GROUPS["bm25"] else "dense"


def _finite(value: float | None) -> float:
    return float(value) if value is not None and math.isfinite(value) else 0.0


def score_vector(
    family: str,
    similarities: Sequence[float | None],
    ranks: Sequence[float | None],
    raws: Sequence[float | None],
    terms: int,
) -> ScoreVector:
    """The :class:`ScoreVector` of the first blocks' scores (non-finite ones read as 0).

    Example:
        >>> score_vector("sparse", [0.4], [1.0], [-6.0], terms=3).bm25
        (2.0,)
    """
    dense = tuple(sorted((_finite(s) for s in similarities[:_VECTOR]), reverse=True))
    fused = tuple(sorted((_finite(r) for r in ranks[:_VECTOR]), reverse=True))
    bm25: tuple[float, ...] = ()  # a lexical lookup's raw scores are no BM25 score: none
    if family == "sparse":
        per_term = (abs(_finite(r)) / max(terms, 1) for r in raws[:_VECTOR])
        bm25 = tuple(sorted(per_term, reverse=True))
    return ScoreVector(family=family, dense=dense, fused=fused, bm25=bm25)


def _relative(profile: KbProfile, key: str, value: float) -> float:
    """``value`` on the scale from the probes' median (0) to the pseudo-questions' (1)."""
    low, high = profile.median(key, "probe"), profile.median(key, "own")
    if low is None or high is None or high - low < 1e-6:
        return 0.5
    return max(-2.0, min(3.0, (value - low) / (high - low)))


def judgement_features(
    vector: ScoreVector, signals: Mapping[str, float], profile: KbProfile
) -> dict[str, float]:
    """The features of one lookup for its group's model (names in the model's weights).

    ``signals``: the evidence signals (:meth:`EvidenceSignals.as_dict`): ``coverage``,
    ``title_overlap``, ``agreement``, ``unseen_idf``, ``rare_unseen_idf``,
    ``rare_unseen_latin_idf``.
    """
    key, top = vector.key()
    scores = vector.bm25 if key == "bm25" else vector.dense
    second = scores[1] if len(scores) > 1 else 0.0
    tail = scores[1:] if len(scores) > 1 else (0.0,)
    out = {
        "top": top,
        "gap": (top - second) / top if top > 0 else 0.0,
        "tail_mean": sum(tail) / len(tail) / top if top > 0 else 0.0,
        "rel_top": _relative(profile, key, top),
        "rel_tail": _relative(profile, key, sum(tail) / len(tail)),
        "pct_probe": profile.percentile(key, "probe", top),
        "pct_own": profile.percentile(key, "own", top),
        "pct_out": profile.percentile(key, "out", top),
        "fused_gap": (vector.fused[0] - vector.fused[1]) if len(vector.fused) > 1 else 0.0,
    }
    for name in (
        "coverage",
        "title_overlap",
        "agreement",
        "unseen_idf",
        "rare_unseen_idf",
        "rare_unseen_latin_idf",
    ):
        out[name] = _finite(float(signals.get(name, 0.0) or 0.0))
    return out


def row_vector(
    row: Mapping[str, Any], *, leave_out: str | None = None
) -> tuple[str, ScoreVector] | None:
    """``(group, vector)`` of an evaluation row's blocks (``leave_out``: a source stem whose
    blocks are dropped first); None without blocks or signals."""
    signals = row.get("signals")
    blocks = [b for b in row.get("blocks", []) if b.get("src") != leave_out]
    if not signals or not blocks:
        return None
    family = str(signals["family"])
    vector = score_vector(
        family,
        [b.get("sim") for b in blocks],
        [b.get("rank") for b in blocks],
        [b.get("raw") for b in blocks],
        int(signals.get("terms", 0) or 0),
    )
    return group_of(family), vector


def profile_from_rows(rows: Sequence[Mapping[str, Any]]) -> KbProfile:
    """A :class:`KbProfile` of a knowledge base's ``probe`` and ``pseudo`` rows (a lookup
    without blocks counts as key score 0)."""
    values: dict[str, dict[str, list[float]]] = {"dense": {}, "bm25": {}}
    for row in rows:
        kinds = {"probe": ("probe",), "pseudo": ("own", "out")}.get(str(row.get("kind")), ())
        for kind in kinds:
            leave = row["rel"][0] if kind == "out" else None
            got = row_vector(row, leave_out=leave)
            if got is None:
                group = "dense" if row.get("readable", True) else "bm25"
                values[group].setdefault(kind, []).append(0.0)
                continue
            key, top = got[1].key()
            values[key].setdefault(kind, []).append(top)
    counts = {f"{g}.{k}": len(v) for g, d in values.items() for k, v in d.items()}
    keys = {g: {k: quantiles(v) for k, v in d.items()} for g, d in values.items() if d}
    return KbProfile(keys=keys, counts=counts)
