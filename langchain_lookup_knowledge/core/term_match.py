"""The query's significant terms and where they stand in a chunk, memoised per chunk text.

One matcher for the rerank's coverage boosts and the evidence decision's coverage signal, so
both read a term the same way and a chunk's term set is built once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from langchain_lookup_knowledge.core.lexical import identifier_parts, stem
from langchain_lookup_knowledge.core.text import (
    cjk_bigrams,
    fold,
    raw_words,
    word_key_set,
    word_keys,
)

__all__ = ["TEXT_TERMS_CACHE_SIZE", "pool_idf", "query_term_matches", "query_terms"]


def query_terms(query: str) -> list[str]:
    """The significant terms of a query: Latin words minus stopwords, plus CJK bigrams.

    Example:
        >>> query_terms("Why are my Pods pending? 节点磁盘")
        ['pod', 'pending', '节点', '点磁', '磁盘']
    """
    return list(_query_terms(query))


@lru_cache(maxsize=8)
def _query_terms(query: str) -> tuple[str, ...]:
    """:func:`query_terms`, made once per question: a lookup reads them in its rerank, its
    context pack and its evidence decision."""
    return tuple(dict.fromkeys([*word_keys(query, significant_only=True), *cjk_bigrams(query)]))


TEXT_TERMS_CACHE_SIZE = 4096
"""Chunk texts whose term sets are kept (a knowledge base's hot chunks recur in every lookup)."""


@dataclass(frozen=True)
class _TextTerms:
    """A text as the term matcher reads it: its word keys and its folded form (immutable)."""

    words: frozenset[str]
    folded: str

    @classmethod
    def of(cls, text: str) -> _TextTerms:
        """Memoised per text: the same chunk is read once, not once per lookup."""
        return _text_terms(text)

    def has(self, term: str, bigrams: frozenset[str], stems: frozenset[str] | None = None) -> bool:
        """Words match whole words (or, given ``stems``, an identifier part with their
        Snowball stem); CJK ``bigrams`` match as substrings."""
        if term in bigrams:
            return term in self.folded
        return term in self.words or (stems is not None and stem(term) in stems)


@lru_cache(maxsize=TEXT_TERMS_CACHE_SIZE)
def _stem_set(text: str) -> frozenset[str]:
    """The Snowball stems of the parts of a text's CamelCase identifiers (``KubePodCrashLooping``:
    kube, pod, crash, loop); a plain word of prose keeps its whole-word match."""
    return frozenset(stem(p) for raw in raw_words(text) for p in identifier_parts(raw))


@lru_cache(maxsize=TEXT_TERMS_CACHE_SIZE)
def _text_terms(text: str) -> _TextTerms:
    return _TextTerms(word_key_set(text), fold(text))


def _found_in(
    terms: Sequence[str],
    bigrams: frozenset[str],
    heading: _TextTerms,
    content: _TextTerms,
    stems: tuple[frozenset[str], frozenset[str]] | None = None,
) -> tuple[list[str], list[str]]:
    """The ``terms`` found in the heading, and those found in the heading or the content."""
    h_stems, c_stems = stems or (None, None)
    in_heading = [t for t in terms if heading.has(t, bigrams, h_stems)]
    covered = [t for t in terms if t in in_heading or content.has(t, bigrams, c_stems)]
    return in_heading, covered


def query_term_matches(
    terms: Sequence[str],
    bigrams: frozenset[str],
    heading: str,
    content: str,
    *,
    stemmed: bool = False,
) -> tuple[list[str], list[str]]:
    """The ``terms`` found in ``heading``, and those found in ``heading`` or ``content``.

    Words match whole words, CJK ``bigrams`` as substrings; each text's term set is memoised,
    so a chunk read by the rerank and then by the evidence decision is read once.
    ``stemmed``: a word also matches a part of a CamelCase identifier with the same Snowball
    stem (``crashing`` matches ``KubePodCrashLooping``, ``reconciliation`` ``...ReconcileErrors``).

    Example:
        >>> query_term_matches(["disk", "full"], frozenset(), "Disk pressure", "The disk is full.")
        (['disk'], ['disk', 'full'])
    """
    stems = (_stem_set(heading), _stem_set(content)) if stemmed else None
    return _found_in(terms, bigrams, _TextTerms.of(heading), _TextTerms.of(content), stems)


def pool_idf(terms: Sequence[str], matches: Sequence[Sequence[str]]) -> dict[str, float]:
    """How rare each query term is among the candidates: ``log(1 + (n - df + 0.5) / (df + 0.5))``.

    ``matches`` holds, per candidate, the terms it covers. A term every candidate holds
    ("pod" in a Kubernetes knowledge base) separates nothing; one only a few hold does.

    Example:
        >>> idf = pool_idf(["pod", "statefulset"], [["pod"], ["pod", "statefulset"], ["pod"]])
        >>> idf["statefulset"] > idf["pod"]
        True
    """
    n = len(matches)
    df = dict.fromkeys(terms, 0)
    for found in matches:
        for t in set(found):
            if t in df:
                df[t] += 1
    return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
