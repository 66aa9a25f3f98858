"""The sibling tie-break: two near-tied documents of one family, told apart by the question's
words that one document's name holds and the other's does not.

Sibling runbooks (``KubeHpaReplicasMismatch`` and ``KubeHpaMaxedOut``) share most of their
words, so their rerank bases come within a few thousandths of each other and the order between
them is noise. What tells them apart is the part of the name they do not share: a question
about an autoscaler "at max replicas" names ``maxed`` (``max``), and ``replica`` is in half the
family.

A document's *profile* is its title, breadcrumb, aliases, keywords and entities: what it says it
is about, read word by word, each word and each part of an identifier (``KubeHpaMaxedOut``:
kube, hpa, maxed, out) also by its Snowball stem. Two documents are *siblings* when their
profiles share at least two significant words. Walking the ranking from the top, each pair of
neighbouring documents (their best candidates) whose bases lie within ``margin`` and who are
siblings is compared by the question terms only one of their profiles holds, each weighed by
its rarity among the candidates' documents (IDF); the lower one with the larger such weight
moves just above the other (reason ``sibling_tie_break``: the contribution that lifts it, the
terms, the rival). Nothing else moves.

Example:
    >>> profile_terms(["max", "replica"], frozenset(), "Kube HPA Maxed Out")
    ['max']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from langchain_lookup_knowledge.core.lexical import identifier_parts, stem
from langchain_lookup_knowledge.core.models import Candidate
from langchain_lookup_knowledge.core.term_match import pool_idf
from langchain_lookup_knowledge.core.text import fold, raw_words, significant, singular

__all__ = ["TieBreak", "document_profile", "profile_terms", "sibling_tie_breaks", "siblings"]

LIFT = 1e-4
"""How far above its rival a tie-break puts the lifted candidate."""
SIBLING_SHARED_WORDS = 2
"""Significant profile words two documents must share to be siblings."""
_MAX_SHOWN = 3


def document_profile(candidate: Candidate) -> str:
    """The text a document says it is about: title, breadcrumb, aliases, keywords, entities.

    Example:
        >>> from langchain_lookup_knowledge.core.models import ScoreLabel
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.5, similarity=0.75, formula="")
        >>> hit = Candidate(evidence_key="k/a.md#0", source="k/a.md", title="Disk full",
        ...                 content="...", rank=1, score_label=label,
        ...                 metadata={"aliases": ["NodeDiskFull"]})
        >>> document_profile(hit)
        'Disk full\\n\\nNodeDiskFull'
    """
    meta = candidate.metadata
    terms = [
        t
        for key in ("aliases", "keywords", "entities")
        for t in (meta.get(key) or ())
        if isinstance(t, str)
    ]
    return "\n".join([candidate.title, candidate.breadcrumb, *terms])


@dataclass(frozen=True)
class _Profile:
    words: frozenset[str]  # folded words and identifier parts, plural s removed
    stems: frozenset[str]
    folded: str


@lru_cache(maxsize=4096)
def _profile(text: str) -> _Profile:
    raws = raw_words(text)
    parts = [p for raw in raws for p in identifier_parts(raw)]
    words = {singular(w) for w in [*(r.casefold() for r in raws), *parts]}
    stems = frozenset(stem(w) for w in words)
    return _Profile(frozenset(words), stems, fold(text))


def profile_terms(terms: Sequence[str], bigrams: frozenset[str], profile: str) -> list[str]:
    """The ``terms`` a profile holds: a word as a word, an identifier part, or by its stem; a
    CJK bigram as a substring.

    Example:
        >>> profile_terms(["crashing", "pod", "disk"], frozenset(), "KubePodCrashLooping")
        ['crashing', 'pod']
    """
    p = _profile(profile)
    return [
        t for t in terms if (t in p.folded if t in bigrams else t in p.words or stem(t) in p.stems)
    ]


def siblings(a: str, b: str) -> bool:
    """Two profiles that share at least :data:`SIBLING_SHARED_WORDS` significant words.

    Example:
        >>> siblings("KubeHpaMaxedOut", "KubeHpaReplicasMismatch")
        True
        >>> siblings("TargetDown", "KubeHpaMaxedOut")
        False
    """
    shared = {w for w in _profile(a).words & _profile(b).words if significant(w)}
    return len(shared) >= SIBLING_SHARED_WORDS


@dataclass(frozen=True)
class TieBreak:
    """A lifted candidate: its index, the contribution that puts it above its rival, and why."""

    index: int
    contribution: float
    detail: str


def _named(terms: Sequence[str], idf: Mapping[str, float]) -> str:
    if not terms:
        return "none"
    shown = ", ".join(f"{t} ({idf[t]:.2f})" for t in terms[:_MAX_SHOWN])
    return shown + (", …" if len(terms) > _MAX_SHOWN else "")


def sibling_tie_breaks(
    candidates: Sequence[Candidate],
    bases: Sequence[float],
    finals: Sequence[float],
    terms: Sequence[str],
    bigrams: frozenset[str],
    *,
    margin: float,
    depth: int = 5,
) -> list[TieBreak]:
    """The candidates a sibling tie-break lifts, among the first ``depth`` documents.

    Args:
        candidates: The rerank's candidates, best first (by ``finals``).
        bases: Their rerank bases, same order.
        finals: Their final scores before any tie-break, same order.
        terms: The question's significant terms (:func:`query_terms`).
        bigrams: Those of them that are CJK bigrams.
        margin: How close two bases must be for their order to be a tie.
        depth: How many documents from the top are compared.

    Example:
        >>> from langchain_lookup_knowledge.core.models import ScoreLabel
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.5, similarity=0.7, formula="")
        >>> def hit(name):
        ...     return Candidate(evidence_key=f"{name}.md#0", source=f"{name}.md", title=name,
        ...                      content="", rank=1, score_label=label)
        >>> hits = [hit("KubeHpaReplicasMismatch"), hit("KubeHpaMaxedOut"),
        ...         hit("KubeDeploymentReplicasMismatch")]
        >>> [(b.index, round(b.contribution, 4)) for b in sibling_tie_breaks(
        ...     hits, [0.74, 0.73, 0.6], [0.80, 0.78, 0.62], ["max", "replica"], frozenset(),
        ...     margin=0.015)]
        [(1, 0.0201)]
    """
    if margin <= 0 or not terms:
        return []
    leaders: list[int] = []  # each document's best candidate, in order
    seen: set[str] = set()
    for i, c in enumerate(candidates):
        if c.source not in seen:
            seen.add(c.source)
            leaders.append(i)
    profiles = {c.source: document_profile(c) for c in candidates}
    held = {s: profile_terms(terms, bigrams, p) for s, p in profiles.items()}
    idf = pool_idf(terms, list(held.values()))
    order = leaders[:depth]
    lifted: list[TieBreak] = []
    score = {i: finals[i] for i in order}
    k = 0
    while k + 1 < len(order):
        upper, lower = order[k], order[k + 1]
        a, b = candidates[upper].source, candidates[lower].source
        if abs(bases[upper] - bases[lower]) <= margin and siblings(profiles[a], profiles[b]):
            only_a = [t for t in held[a] if t not in held[b]]
            only_b = [t for t in held[b] if t not in held[a]]
            weight_a = sum(idf[t] for t in only_a)
            weight_b = sum(idf[t] for t in only_b)
            if weight_b > weight_a:
                contribution = score[upper] - score[lower] + LIFT
                detail = (
                    f"near-tie with sibling {a.rsplit('/', 1)[-1]} (bases "
                    f"{abs(bases[upper] - bases[lower]):.4f} apart, within {margin:g}): question "
                    f"terms only this one names: {_named(only_b, idf)}; only it: "
                    f"{_named(only_a, idf)}"
                )
                lifted.append(TieBreak(lower, contribution, detail))
                score[lower] = score[upper] + LIFT
                order[k], order[k + 1] = lower, upper
        k += 1
    return lifted
