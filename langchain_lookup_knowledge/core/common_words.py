"""The everyday words of a question's languages (Latin-script words, frequent Chinese words).

Example:
    >>> COMMON_CJK_FREQUENCY > 0
    True
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from langchain_lookup_knowledge.core.text import (
    has_cjk,
)

__all__ = ["COMMON_CJK_FREQUENCY", "CommonWords", "jieba_frequency", "jieba_module"]


def jieba_module() -> object:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


COMMON_CJK_FREQUENCY = 1000
"""A Chinese word jieba's dictionary counts at least this often (of its ~60 million words) is
an everyday word: "一直" 18,596, "之后" 20,879; "积压" 151, "物化" 180 are not."""


def jieba_frequency(word: str) -> int:
    """How often jieba's dictionary counts ``word`` (0: not a dictionary word).

    Example:
        >>> jieba_frequency("一直") > COMMON_CJK_FREQUENCY > jieba_frequency("积压")
        True
    """
    jieba: Any = jieba_module()
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
