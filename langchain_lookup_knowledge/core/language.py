"""Which language a knowledge base is written in, measured document by document.

The embedder must read the knowledge base: the bundled English model sees Chinese as unknown
word pieces. A document's language is told from its scripts and function words outside code,
cheaply and without a model: CJK (kana, ideographs, hangul) when it holds at least one CJK
character per two Latin words (a Chinese manual names commands and settings in Latin letters,
so the share of characters would misread it); English when its Latin words hold English
function words ("the", "is", "of") well above those of other Latin-script languages; other
(German, French, Cyrillic, ...) otherwise. Too short to tell: not counted. A knowledge base
weighs each document by its words.

Example:
    >>> document_language("The node is out of disk space: free space on the node.")
    'english'
    >>> document_language("节点磁盘空间不足，请清理 `/var/log` 下的日志文件。")
    'cjk'
    >>> document_language("Der Knoten hat keinen Speicherplatz mehr, und die Pods werden von "
    ...                   "dem Kubelet entfernt, bis der Platz wieder frei ist.")
    'other'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from langchain_lookup_knowledge.core.text import CJK_CHARS, cjk_count

Language = Literal["english", "cjk", "other"]

MIN_WORDS = 12
"""Fewer words (Latin words plus CJK characters) than this: too short to tell its language."""
SAMPLE_CHARS = 20_000
"""A document's language is read from its first characters (a long document does not change
language halfway often enough to pay for reading all of it)."""

# fmt: off
_ENGLISH = frozenset({
    "the", "and", "of", "to", "is", "in", "for", "that", "with", "on", "it", "are", "this",
    "be", "as", "you", "if", "by", "or", "not", "can", "from", "when", "an", "which", "will",
})
_OTHER_LATIN = frozenset({
    # German, French, Spanish, Portuguese, Italian, Dutch: their most frequent function words
    # that are not English words too.
    "der", "die", "und", "das", "ist", "nicht", "mit", "den", "von", "zu", "ein", "eine", "auf",
    "le", "la", "les", "et", "des", "est", "une", "pour", "que", "dans", "du", "sur", "pas",
    "el", "los", "las", "y", "es", "para", "por", "con", "del", "una", "se", "lo",
    "o", "os", "da", "em", "um", "não", "com", "uma", "di", "il", "che", "per", "non",
    "het", "een", "van", "niet", "zijn", "voor", "op", "wordt",
})
# fmt: on
_CODE = re.compile(r"^(```|~~~).*?(?:^\1|\Z)|`[^`\n]*`", re.MULTILINE | re.DOTALL)
_WORD = re.compile(rf"[^\W\d_{CJK_CHARS}]+")
# Greek, Cyrillic, Hebrew, Arabic, the Indic scripts, Thai and Lao.
_NON_LATIN_LETTER = re.compile(
    r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0eff]"
)


def _counts(text: str) -> tuple[int, int, int, int, int]:
    """``(latin words, cjk characters, other-script letters, english hits, other hits)`` of
    the text outside code (code and commands are written in no language)."""
    sample = _CODE.sub(" ", text[:SAMPLE_CHARS])
    words = [w.casefold() for w in _WORD.findall(sample)]
    other_script = len(_NON_LATIN_LETTER.findall(sample))
    latin = [w for w in words if w.isascii() or not _NON_LATIN_LETTER.search(w)]
    english = sum(1 for w in latin if w in _ENGLISH)
    other = sum(1 for w in latin if w in _OTHER_LATIN)
    return len(latin), cjk_count(sample), other_script, english, other


def document_language(text: str) -> Language | None:
    """The language of one document's text; None when it is too short to tell.

    Example:
        >>> document_language("kubectl get pods") is None
        True
    """
    return _language_of(*_counts(text))


def _language_of(
    latin: int, cjk: int, other_script: int, english: int, other: int
) -> Language | None:
    """:func:`document_language` from a text's :func:`_counts`."""
    if _words(latin, cjk, other_script) < MIN_WORDS:
        return None
    # Outside code a Chinese document still names commands, products and settings in Latin
    # letters; a Chinese word is about two characters.
    if cjk > 0 and cjk >= latin / 2:
        return "cjk"
    if other_script > latin:
        return "other"
    # English prose: a quarter to a third of its words are these; a German or French text holds
    # a few of them (borrowed terms, code) and many more of its own.
    if english >= 0.06 * latin and english > 2 * other:
        return "english"
    return "other"


def _words(latin: int, cjk: int, other_script: int) -> int:
    """A text's words: Latin words, CJK characters, and other-script letters four to a word."""
    return latin + cjk + other_script // 4


@dataclass
class KnowledgeLanguage:
    """The languages of a knowledge base: documents and words per language.

    Example:
        >>> kb = KnowledgeLanguage.of(["The disk is full on the node: free some space on it, "
        ...                            "then restart the kubelet.",
        ...                            "节点磁盘满了怎么办？请先清理日志，然后重启服务。"])
        >>> kb.documents, round(kb.english_share, 2)
        ({'english': 1, 'cjk': 1}, 0.43)
    """

    documents: dict[str, int] = field(default_factory=dict)
    words: dict[str, int] = field(default_factory=dict)

    def add(self, text: str) -> None:
        """Count one document."""
        counts = _counts(text)  # read once: the language and the words from the same counts
        language = _language_of(*counts)
        if language is None:
            return
        self.documents[language] = self.documents.get(language, 0) + 1
        self.words[language] = self.words.get(language, 0) + _words(*counts[:3])

    @classmethod
    def of(cls, texts: Iterable[str]) -> KnowledgeLanguage:
        """The languages of ``texts`` (one document each)."""
        measured = cls()
        for text in texts:
            measured.add(text)
        return measured

    @property
    def english_share(self) -> float:
        """The share of the knowledge base's words in English documents (1.0 when nothing
        could be told: the English default)."""
        total = sum(self.words.values())
        return 1.0 if total == 0 else self.words.get("english", 0) / total

    def describe(self) -> str:
        """``241 documents: 230 CJK, 11 English (96% of the words CJK)``, for reports.

        Example:
            >>> KnowledgeLanguage({"cjk": 3, "english": 1}, {"cjk": 90, "english": 10}).describe()
            '4 documents: 3 CJK, 1 English (90% of the words CJK)'
        """
        total_docs = sum(self.documents.values())
        if total_docs == 0:
            return "no document long enough to tell its language"
        names = {"english": "English", "cjk": "CJK", "other": "other languages"}
        parts = [
            f"{n} {names[lang]}"
            for lang, n in sorted(self.documents.items(), key=lambda item: -item[1])
        ]
        main = max(self.words, key=lambda lang: self.words[lang])
        share = self.words[main] / sum(self.words.values())
        return (
            f"{total_docs} documents: {', '.join(parts)} "
            f"({share:.0%} of the words {names[main]})"
        )
