"""Text rules shared by L0, rerank, BM25 queries, the CJK retrieval rule and chunking.

One definition of each: the comparison form (:func:`fold`), Latin word keys
(:func:`word_keys`), CJK bigrams (:func:`cjk_bigrams`), the English stopwords, and ONE CJK
character class (kana, CJK ideographs incl. extension A, hangul) used everywhere.

Example:
    >>> word_keys("The Nodes are NotReady", significant_only=True)
    ['node', 'notready']
    >>> cjk_count("pod 一直重启"), cjk_bigrams("节点磁盘满了")
    (4, ['节点', '点磁', '磁盘', '盘满'])
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set as AbstractSet

__all__ = [
    "CJK_CHARS",
    "CJK_STOP_CHARS",
    "STOPWORDS",
    "camel_parts",
    "cjk_bigrams",
    "cjk_count",
    "cjk_runs",
    "compact",
    "contains_bounded",
    "fold",
    "has_cjk",
    "holds_word_key",
    "is_cjk_char",
    "is_cjk_corpus",
    "latin_word_count",
    "raw_words",
    "significant",
    "singular",
    "word_key_set",
    "word_keys",
]

CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
"""The CJK character class (a regex character-class body): kana, ideographs, hangul."""

# fmt: off
STOPWORDS: frozenset[str] = frozenset({
    "a", "about", "after", "all", "an", "and", "any", "are", "as", "at", "be", "been", "before",
    "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from", "had", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of",
    "on", "or", "our", "so", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "too", "up", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "why", "will", "with", "would", "you", "your",
})
"""English words that never match or count as significant on their own."""
# fmt: on

CJK_STOP_CHARS: frozenset[str] = frozenset("的了吗呢吧啊是")
"""CJK particles: a query bigram containing one carries no topic."""

_CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD = re.compile(rf"[^\W_{CJK_CHARS}]+")
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+")
_SPACE_NEAR_CJK = re.compile(rf"\s+(?=[{CJK_CHARS}])|(?<=[{CJK_CHARS}])\s+")
_SPACES = re.compile(r"\s+")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
_ASCII_MIXED_CASE = re.compile(r"^(?=.*[a-z])(?=.*[A-Z])[A-Za-z0-9]+$")


def fold(text: str) -> str:
    """NFKC-normalize and casefold ``text`` (the comparison form used throughout L0).

    Example:
        >>> fold("ＤＮＳ Ｒesolution")
        'dns resolution'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def is_cjk_char(char: str) -> bool:
    """Whether ``char`` (one character) is in the CJK class.

    Example:
        >>> is_cjk_char("节"), is_cjk_char("a")
        (True, False)
    """
    return _CJK_CHAR.match(char) is not None


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character."""
    return _CJK_CHAR.search(text) is not None


def cjk_count(text: str) -> int:
    """How many CJK characters ``text`` holds (about one term of a question each)."""
    return len(_CJK_CHAR.findall(text))


def latin_word_count(text: str) -> int:
    """How many ASCII letter/digit runs ``text`` holds (one term of a question each)."""
    return len(_LATIN_WORD.findall(text))


def is_cjk_corpus(sample: str) -> bool:
    """Whether a knowledge base (a sample of its text) is CJK: as many CJK characters as Latin
    words, the question-level CJK rule applied to the documents. Code and config examples are
    Latin, so the share of CJK characters misreads a Chinese manual: APISIX's Chinese docs are
    0.24 CJK by characters (a 0.3 cut-off gave them the ``standard`` analyzer, which cannot
    split Chinese) and 2.3 CJK characters per Latin word.

    Example:
        >>> is_cjk_corpus("配置 `limit-count` 插件限制速率")
        True
        >>> is_cjk_corpus("pod restart loop 重启")
        False
    """
    return cjk_count(sample) >= max(1, latin_word_count(sample))


def raw_words(nfkc_text: str) -> list[str]:
    """The Latin-script words (letter/digit runs, no CJK) of NFKC-normalized text, as written."""
    return _WORD.findall(nfkc_text)


def cjk_runs(folded_text: str) -> list[str]:
    """The maximal runs of CJK characters of ``folded_text``."""
    return _CJK_RUN.findall(folded_text)


def singular(word: str) -> str:
    """A folded word without a simple plural ``s`` (4+ characters, not ``ss``)."""
    if len(word) >= 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def significant(folded_word: str) -> bool:
    """A word of 2+ characters that is not a stopword."""
    return len(folded_word) >= 2 and folded_word not in STOPWORDS


def word_keys(text: str, *, significant_only: bool = False) -> list[str]:
    """The comparison keys of the Latin-script words of ``text`` (CJK characters are skipped).

    Args:
        text: Any text.
        significant_only: Drop stopwords and words shorter than 2 characters.

    Returns:
        Casefolded words with a plural ``s`` removed, in text order.

    Example:
        >>> word_keys("The Nodes are NotReady", significant_only=True)
        ['node', 'notready']
    """
    words = (w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text)))
    return [singular(w) for w in words if not significant_only or significant(w)]


def word_key_set(text: str) -> frozenset[str]:
    """The distinct :func:`word_keys` of ``text`` (each distinct word folded once).

    Example:
        >>> sorted(word_key_set("Nodes, nodes and NODE"))
        ['and', 'node']
    """
    if text.isascii():  # NFKC is the identity and casefold is lower: fold the text once
        folded = set(_WORD.findall(text.lower()))
    else:  # casefold per word: folding the whole text can split a word ("İ" -> "i̇")
        folded = {w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))}
    # singular() inline (a call per word is most of the work on a long chunk)
    return frozenset(
        [w[:-1] if len(w) >= 4 and w[-1] == "s" and w[-2] != "s" else w for w in folded]
    )


def holds_word_key(key: str, words: AbstractSet[str]) -> bool:
    """Whether one of the folded ``words`` has the word key ``key`` (``singular(w) == key``):
    what ``key in word_key_set(text)`` says, given ``words``, the text's folded words,
    without the key of every word (a word's key is itself or itself without a plural ``s``).

    Example:
        >>> holds_word_key("node", {"nodes", "are", "down"}), holds_word_key("node", {"nod"})
        (True, False)
        >>> holds_word_key("bus", {"bus"}), holds_word_key("bu", {"bus"})
        (True, False)
    """
    if key in words and singular(key) == key:
        return True
    plural = key + "s"
    return plural in words and singular(plural) == key


def cjk_bigrams(text: str) -> list[str]:
    """Character bigrams of the CJK runs of ``text``, without particle bigrams, deduplicated.

    Example:
        >>> cjk_bigrams("节点磁盘满了")
        ['节点', '点磁', '磁盘', '盘满']
    """
    grams: dict[str, None] = {}
    for run in _CJK_RUN.findall(fold(text)):
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if not (CJK_STOP_CHARS & set(gram)):
                grams[gram] = None
    return list(grams)


def camel_parts(raw_word: str) -> tuple[str, ...]:
    """``KubePodCrashLooping`` -> ('kube', 'pod', 'crash', 'looping'); () if not CamelCase.

    Example:
        >>> camel_parts("KubePodCrashLooping"), camel_parts("kubernetes")
        (('kube', 'pod', 'crash', 'looping'), ())
    """
    if not _ASCII_MIXED_CASE.match(raw_word):
        return ()
    parts = _CAMEL_PART.findall(raw_word)
    if len(parts) < 2:
        return ()
    return tuple(singular(p.casefold()) for p in parts)


def compact(folded: str) -> str:
    """Whitespace collapsed to one space, and removed next to CJK characters.

    Example:
        >>> compact("dns  解析 失败")
        'dns解析失败'
    """
    return _SPACE_NEAR_CJK.sub("", _SPACES.sub(" ", folded)).strip()


def _is_word_char(char: str) -> bool:
    return char.isalnum() and not is_cjk_char(char)


def contains_bounded(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack``, at word boundaries on its Latin edges.

    Example:
        >>> contains_bounded("pod oom killed", "oom"), contains_bounded("zoom", "oom")
        (True, False)
    """
    check_left = _is_word_char(needle[0])
    check_right = _is_word_char(needle[-1])
    start = haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        left_ok = not check_left or start == 0 or not _is_word_char(haystack[start - 1])
        right_ok = not check_right or end == len(haystack) or not _is_word_char(haystack[end])
        if left_ok and right_ok:
            return True
        start = haystack.find(needle, start + 1)
    return False
