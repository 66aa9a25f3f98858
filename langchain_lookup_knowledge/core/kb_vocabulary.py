"""A knowledge base's own vocabulary: every term its documents use, counted, built at ingest.

Example:
    >>> vocabulary = KbVocabulary.build([("a.md", "KubePodCrashLooping fires"), ("b.md", "pod")])
    >>> vocabulary.df("pod")
    2
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from langchain_lookup_knowledge.core.text import (
    camel_parts,
    cjk_bigrams,
    has_cjk,
    raw_words,
    significant,
    word_key_set,
)

__all__ = [
    "MIN_COMPOUND_LENGTH",
    "MIN_TYPO_LENGTH",
    "MIN_WITHIN_LENGTH",
    "KbVocabulary",
    "document_terms",
]


def document_terms(text: str) -> frozenset[str]:
    """The distinct terms of a document's text: significant word keys, the words of its
    CamelCase identifiers, and its CJK bigrams.

    Example:
        >>> sorted(document_terms("KubeNodeNotReady: the node 节点磁盘"))
        ['kube', 'kubenodenotready', 'node', 'ready', '点磁', '磁盘', '节点']
    """
    terms = {w for w in word_key_set(text) if significant(w)}
    for word in raw_words(unicodedata.normalize("NFKC", text)):
        terms.update(p for p in camel_parts(word) if significant(p))
    terms.update(cjk_bigrams(text))
    return frozenset(terms)


@dataclass(frozen=True)
class KbVocabulary:
    """Document frequencies of a knowledge base's terms.

    Attributes:
        documents: How many documents the frequencies were counted over.
        frequencies: Term -> the number of documents that hold it (>= 1).
    """

    documents: int
    frequencies: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        texts: Iterable[tuple[str, str]],
        chunks_per_source: Mapping[str, int] | None = None,
    ) -> KbVocabulary:
        """The vocabulary of ``(source, text)`` pairs; a source's texts (its chunks) count
        once per term.

        With ``chunks_per_source`` (how many texts each source has), a source is counted as
        soon as its last text has passed, so the fold holds the terms of the sources still
        being read, not of every source: a store read a page at a time in any order.

        Example:
            >>> pairs = [("a.md", "disk full"), ("b.md", "disk"), ("a.md", "disk again")]
            >>> KbVocabulary.build(pairs, {"a.md": 2, "b.md": 1}).df("disk")
            2
        """
        counts: Counter[str] = Counter()
        open_sources: dict[str, set[str]] = {}
        texts_seen: Counter[str] = Counter()
        counted: set[str] = set()
        for source, text in texts:
            if source in counted:  # more texts than announced: counted once already
                continue
            open_sources.setdefault(source, set()).update(document_terms(text))
            texts_seen[source] += 1
            expected = chunks_per_source.get(source) if chunks_per_source else None
            if expected is not None and texts_seen[source] >= expected:
                counts.update(open_sources.pop(source))
                del texts_seen[source]
                counted.add(source)
        for terms in open_sources.values():
            counts.update(terms)
        return cls(documents=len(counted) + len(open_sources), frequencies=dict(counts))

    def df(self, term: str) -> int:
        """How many documents hold ``term`` (0: never seen). A CJK word of more than two
        characters is held as its bigrams: by at most the fewest documents of any of them.

        Example:
            >>> KbVocabulary.build([("a.md", "向量检索"), ("b.md", "向量")]).df("向量检索")
            1
        """
        if len(term) > 2 and has_cjk(term):
            grams = cjk_bigrams(term)
            return min((self.frequencies.get(g, 0) for g in grams), default=0)
        return self.frequencies.get(term, 0)

    @cached_property
    def _latin_terms(self) -> str:
        """Every Latin-script term, one a line (what :meth:`df_within` searches)."""
        latin = (t for t in self.frequencies if not has_cjk(t))
        return "\n" + "\n".join(latin) + "\n"

    def df_within(self, term: str) -> int:
        """1 when a Latin ``term`` of :data:`MIN_WITHIN_LENGTH`+ characters that no document
        holds as a word is part of a longer term one does, else 0: the question writes an
        identifier's words run together ("notready", "crashloop") where the documents have
        the whole identifier ("KubeNodeNotReady"). The term is then no unseen name.

        Example:
            >>> vocabulary = KbVocabulary.build([("a.md", "KubeNodeNotReady fires")])
            >>> vocabulary.df("notready"), vocabulary.df_within("notready")
            (0, 1)
            >>> vocabulary.df_within("kafka"), vocabulary.df_within("ready")
            (0, 0)
        """
        if len(term) < MIN_WITHIN_LENGTH or has_cjk(term) or self.df(term):
            return 0
        return 1 if term in self._latin_terms else 0

    def df_typo(self, term: str) -> int:
        """The document frequency of the KB's term one edit away from a Latin ``term`` of
        :data:`MIN_TYPO_LENGTH`+ letters that no document holds (an operator's typo: "seperate"
        of "separate"; the edit of Damerau: one letter deleted, inserted, replaced, or two
        adjacent ones swapped), the most frequent when several are; 0 when none is (or the term
        is short, not all letters, or held as it is).

        Example:
            >>> vocabulary = KbVocabulary.build([("a.md", "separate the planes"), ("b.md", "x")])
            >>> vocabulary.df_typo("seperate"), vocabulary.df_typo("sepraate")
            (1, 1)
            >>> [vocabulary.df_typo(t) for t in ("separate", "seprte", "plane")]
            [0, 0, 0]
        """
        if len(term) < MIN_TYPO_LENGTH or not (term.isascii() and term.isalpha()):
            return 0
        if self.df(term):
            return 0
        best = 0
        for variant in _one_edit(term):
            best = max(best, self.frequencies.get(variant, 0))
        return best

    def df_compound(self, term: str) -> int:
        """The document frequency of a Latin ``term`` of :data:`MIN_COMPOUND_LENGTH`+ letters
        that no document holds but that is two KB terms of 3+ letters written together (the
        question runs a two-word name together: "resourcequota" of "resource quota"): the
        fewer documents of the two, the split with the most; 0 when there is none.

        Example:
            >>> vocabulary = KbVocabulary.build([("a.md", "the resource quota is full")])
            >>> vocabulary.df_compound("resourcequota"), vocabulary.df_compound("quotafull")
            (1, 0)
        """
        if len(term) < MIN_COMPOUND_LENGTH or not (term.isascii() and term.isalpha()):
            return 0
        if self.df(term):
            return 0
        best = 0
        for i in range(3, len(term) - 2):
            head, tail = self.df(term[:i]), self.df(term[i:])
            if head and tail:
                best = max(best, min(head, tail))
        return best

    def idf(self, term: str) -> float:
        """``ln((N + 1) / (df + 0.5))``: an unseen term has the largest."""
        return self.idf_of(self.df(term))

    def idf_of(self, df: int) -> float:
        """The IDF of a term held by ``df`` documents (:meth:`idf` without the lookup)."""
        return math.log((self.documents + 1) / (df + 0.5))


def _one_edit(word: str) -> set[str]:
    """Every lower-case Latin string one Damerau edit from ``word`` (a letter deleted,
    inserted or replaced, or two adjacent letters swapped)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deleted = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaced = {a + c + b[1:] for a, b in splits if b for c in letters}
    inserted = {a + c + b for a, b in splits for c in letters}
    return (deleted | swapped | replaced | inserted) - {word}


MIN_TYPO_LENGTH = 6
"""The shortest unseen Latin word :meth:`KbVocabulary.df_typo` reads as a typo of a KB term (a
shorter one is one edit from too many other words: "nodes" of "notes", "redis" of "remis")."""


MIN_COMPOUND_LENGTH = 10
"""The shortest unseen Latin word :meth:`KbVocabulary.df_compound` splits into two KB terms."""


MIN_WITHIN_LENGTH = 5
"""The shortest unseen Latin term :meth:`KbVocabulary.df_within` looks for inside longer
terms (a shorter one is inside many by chance: "ready", "node")."""
