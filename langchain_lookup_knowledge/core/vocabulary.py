"""The knowledge base's own vocabulary: which terms its documents use, and how many of them.

A question the knowledge base does not answer, asked in its own domain (a near miss), usually
names a thing the documents never mention: "rotate the Kafka client certificate" of runbooks
that never say Kafka. The dense similarity of such a question stays high (the rest of it is
on topic), but its distinctive term is one the knowledge base has never seen. This module
holds the terms (the package's shared rules, :mod:`.text`: Latin word keys plus the words of
CamelCase identifiers, CJK bigrams) with their document frequencies, and what a question's
terms look like against them (:class:`VocabularySignals`).

Not every unseen term names a thing: a small knowledge base never says "keep" or "一直" either.
:class:`CommonWords` tells the everyday words of the language apart (a whole word of the bundled
embedder's WordPiece vocabulary; a Chinese word jieba's dictionary counts often), so
``rare_unseen_idf`` weighs only the unseen terms that are not: "kafka", "spnego", "HNSW".

Example:
    >>> vocabulary = KbVocabulary.build([("a.md", "Kafka broker disk full"), ("b.md", "disk")])
    >>> vocabulary.documents, vocabulary.df("disk"), vocabulary.df("kafka"), vocabulary.df("x")
    (2, 2, 1, 0)
    >>> vocabulary_signals("rotate the zookeeper disk", vocabulary).unseen_share
    0.6667
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from langchain_lookup_knowledge.core.text import (
    camel_parts,
    cjk_bigrams,
    cjk_runs,
    fold,
    has_cjk,
    raw_words,
    significant,
    word_key_set,
    word_keys,
)

__all__ = [
    "CJK_QUESTION_WORDS",
    "COMMON_CJK_FREQUENCY",
    "MIN_COMPOUND_LENGTH",
    "MIN_TYPO_LENGTH",
    "MIN_WITHIN_LENGTH",
    "VOCABULARY_FEATURES",
    "CommonWords",
    "KbVocabulary",
    "VocabularySignals",
    "camel_case_words",
    "document_terms",
    "jieba_frequency",
    "question_terms",
    "vocabulary_signals",
]

VOCABULARY_FEATURES = (
    "unseen_share",
    "unseen_idf",
    "rarest_idf",
    "rare_unseen_idf",
    "rare_unseen_latin_idf",
)
"""The signals :func:`vocabulary_signals` derives (names a decision model may weigh)."""


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


CJK_QUESTION_WORDS = frozenset(
    [
        "怎么",
        "怎么办",
        "怎样",
        "如何",
        "为什么",
        "为何",
        "什么",
        "哪些",
        "哪个",
        "哪里",
        "是否",
        "能否",
        "多少",
    ]
)
"""Chinese interrogatives: how a question is asked, never what it is about."""


def _jieba() -> object:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _cjk_words(text: str) -> list[str]:
    """The jieba words of ``text``'s CJK runs (2+ characters, interrogatives dropped)."""
    jieba: Any = _jieba()
    words: list[str] = []
    for run in cjk_runs(fold(text)):
        words.extend(w for w in jieba.lcut(run) if len(w) >= 2 and w not in CJK_QUESTION_WORDS)
    return words


@lru_cache(maxsize=1024)
def _question_terms(query: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*word_keys(query, significant_only=True), *_cjk_words(query)]))


def question_terms(query: str) -> list[str]:
    """A question's terms as the vocabulary weighs them: significant word keys, then the
    jieba words of its CJK text (a word, not the bigrams across two words: "量检" of "向量检索"
    names nothing).

    Example:
        >>> question_terms("Why are my Pods pending? 节点磁盘满了怎么办")
        ['pod', 'pending', '节点', '磁盘']
    """
    return list(_question_terms(query))


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
    def build(cls, texts: Iterable[tuple[str, str]]) -> KbVocabulary:
        """The vocabulary of ``(source, text)`` pairs; a source's texts (its chunks) count
        once per term."""
        by_source: dict[str, set[str]] = {}
        for source, text in texts:
            by_source.setdefault(source, set()).update(document_terms(text))
        counts: Counter[str] = Counter()
        for terms in by_source.values():
            counts.update(terms)
        return cls(documents=len(by_source), frequencies=dict(counts))

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

COMMON_CJK_FREQUENCY = 1000
"""A Chinese word jieba's dictionary counts at least this often (of its ~60 million words) is
an everyday word: "一直" 18,596, "之后" 20,879; "积压" 151, "物化" 180 are not."""


def jieba_frequency(word: str) -> int:
    """How often jieba's dictionary counts ``word`` (0: not a dictionary word).

    Example:
        >>> jieba_frequency("一直") > COMMON_CJK_FREQUENCY > jieba_frequency("积压")
        True
    """
    jieba: Any = _jieba()
    jieba.dt.check_initialized()
    return int(jieba.dt.FREQ.get(word, 0))


@dataclass(frozen=True)
class CommonWords:
    """The everyday words of the question's languages: an unseen one names nothing specific.

    Attributes:
        latin: Latin-script words known as common (folded; e.g. the whole words of the bundled
            embedder's WordPiece vocabulary). A word key matches itself or itself plus ``s``
            (keys drop a plural ``s``: ``statu`` of "status").
        cjk_frequency: A Chinese word is common when jieba's dictionary counts it at least
            this often (:data:`COMMON_CJK_FREQUENCY`).

    Example:
        >>> common = CommonWords(latin=frozenset({"keep", "status"}))
        >>> common.holds("keep"), common.holds("statu"), common.holds("kafka")
        (True, True, False)
        >>> common.holds("一直"), common.holds("物化")
        (True, False)
    """

    latin: Collection[str] = frozenset()
    cjk_frequency: int = COMMON_CJK_FREQUENCY

    def holds(self, term: str) -> bool:
        """Whether ``term`` (a :func:`question_terms` term) is an everyday word."""
        if has_cjk(term):
            return jieba_frequency(term) >= self.cjk_frequency
        return term in self.latin or f"{term}s" in self.latin


@dataclass(frozen=True)
class VocabularySignals:
    """A question's terms against the knowledge base's vocabulary.

    Attributes:
        unseen_share: Share of the question's terms no document holds.
        unseen_idf: Their share of the question's IDF mass (an unseen term weighs the most).
        rarest_idf: The IDF of the rarest term the knowledge base does hold, over the IDF of
            an unseen term (1.0: a term one document holds; 0.0: none seen).
        rare_unseen_idf: The share of the IDF mass in unseen terms that are not everyday
            words (:class:`CommonWords`): what a near miss names and the KB never does.
        rare_unseen_latin_idf: The part of ``rare_unseen_idf`` in Latin-script terms: a
            product, protocol or tool name ("postgresql", "ntlm", "tispark"), which an
            answerable question rarely holds unseen even on a small KB, where an unseen
            Chinese word ("时钟") often is just the KB's other wording.
        unseen: The unseen terms (for the trace).
        rare_unseen: Those of them that are not everyday words (for the trace).
    """

    unseen_share: float = 0.0
    unseen_idf: float = 0.0
    rarest_idf: float = 0.0
    rare_unseen_idf: float = 0.0
    rare_unseen_latin_idf: float = 0.0
    unseen: tuple[str, ...] = ()
    rare_unseen: tuple[str, ...] = ()


def camel_case_words(query: str) -> dict[str, tuple[str, ...]]:
    """The question's CamelCase words: word key -> its significant parts (a word with a
    separator, ``proxy_cache``, is several word keys already, so it is not one of them; an
    identifier's parts in general: :func:`.lexical.identifier_parts`).

    Example:
        >>> camel_case_words("pods sit in ContainerCreating")
        {'containercreating': ('container', 'creating')}
    """
    out: dict[str, tuple[str, ...]] = {}
    for word in raw_words(unicodedata.normalize("NFKC", query)):
        parts = tuple(p for p in camel_parts(word) if significant(p))
        keys = word_keys(word, significant_only=True)
        if len(parts) > 1 and len(keys) == 1:
            out[keys[0]] = parts
    return out


def vocabulary_signals(
    query: str,
    vocabulary: KbVocabulary,
    common: CommonWords | None = None,
    *,
    typos: bool = False,
    identifiers: bool = False,
    compounds: bool = False,
    values: bool = False,
) -> VocabularySignals:
    """What ``query``'s terms (:func:`question_terms`) look like against ``vocabulary``.

    A question without terms has nothing unseen. ``common``: the everyday words; None: no
    unseen term is one (``rare_unseen_idf`` equals ``unseen_idf``). A term that is part of a
    longer KB term is seen (:meth:`KbVocabulary.df_within`); ``typos``: so is one an edit
    from a KB term (:meth:`KbVocabulary.df_typo`); ``identifiers``: so is a CamelCase word
    whose every part the KB holds ("ContainerCreating": "container" and "creating"), at the
    fewest documents of any part; ``compounds``: so is one that is two KB terms run together
    (:meth:`KbVocabulary.df_compound`); ``values``: an unseen term with a digit is no rare
    name (a host "node7", a port "10250", an interface "eth0", a status code "429": a value
    the operator pasted, which no runbook holds).

    Example:
        >>> vocabulary = KbVocabulary.build([("a.md", "etcd disk"), ("b.md", "disk")])
        >>> signals = vocabulary_signals("etcd kafka disk", vocabulary)
        >>> signals.unseen, signals.unseen_share, signals.unseen_idf > signals.unseen_share
        (('kafka',), 0.3333, True)
        >>> everyday = CommonWords(latin=frozenset({"keep"}))
        >>> vocabulary_signals("keep etcd disk", vocabulary, everyday).rare_unseen_idf
        0.0
    """
    terms = question_terms(query)
    if not terms:
        return VocabularySignals()
    # each term's df, read once; an identifier's words run together count as seen
    frequencies = {t: vocabulary.df(t) or vocabulary.df_within(t) for t in terms}
    if identifiers:
        for term, parts in camel_case_words(query).items():
            if frequencies.get(term) == 0:
                frequencies[term] = min(vocabulary.df(p) for p in parts)
    if compounds:
        for term, df in frequencies.items():
            if df == 0:
                frequencies[term] = vocabulary.df_compound(term)
    if typos:
        for term, df in frequencies.items():
            if df == 0:
                frequencies[term] = vocabulary.df_typo(term)
    unseen = tuple(t for t in terms if frequencies[t] == 0)
    weights = {t: vocabulary.idf_of(frequencies[t]) for t in terms}
    mass = sum(weights.values())
    ceiling = vocabulary.idf_of(0)
    seen = [weights[t] for t in terms if frequencies[t] > 0]
    rare = tuple(
        t
        for t in unseen
        if (common is None or not common.holds(t)) and not (values and any(c.isdigit() for c in t))
    )

    def share(group: tuple[str, ...]) -> float:
        return round(sum(weights[t] for t in group) / mass, 4) if mass > 0 else 0.0

    return VocabularySignals(
        unseen_share=round(len(unseen) / len(terms), 4),
        unseen_idf=share(unseen),
        rarest_idf=round(max(seen) / ceiling, 4) if seen and ceiling > 0 else 0.0,
        rare_unseen_idf=share(rare),
        rare_unseen_latin_idf=share(tuple(t for t in rare if not has_cjk(t))),
        unseen=unseen,
        rare_unseen=rare,
    )
