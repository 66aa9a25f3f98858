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

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_lookup_knowledge.core.common_words import (
    COMMON_CJK_FREQUENCY,
    CommonWords,
    jieba_frequency,
    jieba_module,
)
from langchain_lookup_knowledge.core.kb_vocabulary import (
    MIN_COMPOUND_LENGTH,
    MIN_TYPO_LENGTH,
    MIN_WITHIN_LENGTH,
    KbVocabulary,
    document_terms,
)
from langchain_lookup_knowledge.core.text import (
    camel_parts,
    cjk_runs,
    fold,
    has_cjk,
    raw_words,
    significant,
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
    "jieba_module",
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


def _cjk_words(text: str) -> list[str]:
    """The jieba words of ``text``'s CJK runs (2+ characters, interrogatives dropped); jieba
    is not loaded for a question without CJK text (its import is a fifth of a second)."""
    runs = cjk_runs(fold(text))
    if not runs:
        return []
    jieba: Any = jieba_module()
    words: list[str] = []
    for run in runs:
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
