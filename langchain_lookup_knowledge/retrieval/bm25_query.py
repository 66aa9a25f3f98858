"""The text a BM25 search is given: the question without its English stopwords.

Milvus scores BM25 term by term, and a stopword's posting list holds nearly every chunk: on
SciFact (10,652 chunks, Milvus Lite) a 14-word question took 44 ms, its 10 significant words
14 ms. A stopword's IDF is close to zero, so dropping it barely moves the ranking. Milvus Lite
ignores analyzer stop filters, so the words are dropped here, on the query side only (indexed
text is unchanged). CJK text is left as it is (jieba splits it on the server).

Example:
    >>> bm25_query_text("Why is the pod in CrashLoopBackOff?")
    'pod CrashLoopBackOff?'
    >>> bm25_query_text("what is it")  # nothing but stopwords: searched as asked
    'what is it'
"""

from __future__ import annotations

import re

from langchain_lookup_knowledge.core.text import STOPWORDS
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = ["KEPT_FOR_BM25", "STOPWORD_DROP_MIN_ROWS", "bm25_query_text", "drops_bm25_stopwords"]

KEPT_FOR_BM25: frozenset[str] = frozenset({"up", "no", "not"})
"""Stopwords that still name things in operators' questions ("up == 0", "no route to host")."""

_DROPPED = sorted(STOPWORDS - KEPT_FOR_BM25, key=len, reverse=True)
_STOPWORD = re.compile(
    r"(?<!\w)(?:" + "|".join(map(re.escape, _DROPPED)) + r")(?!\w)", re.IGNORECASE
)
_SPACES = re.compile(r"\s+")


def bm25_query_text(text: str) -> str:
    """``text`` without English stopwords (whole words, any case); ``text`` if none is left."""
    stripped = _SPACES.sub(" ", _STOPWORD.sub(" ", text)).strip()
    return stripped if re.search(r"\w", stripped) else text


STOPWORD_DROP_MIN_ROWS = 5_000
"""``bm25_drop_stopwords=auto`` drops stopwords from BM25 queries from this collection size on."""


def drops_bm25_stopwords(settings: LookupSettings, row_count: int) -> bool:
    """Whether BM25 searches drop stopwords in a collection of ``row_count`` chunks.

    Example:
        >>> settings = LookupSettings()
        >>> drops_bm25_stopwords(settings, 177), drops_bm25_stopwords(settings, 10_652)
        (False, True)
    """
    if settings.bm25_drop_stopwords == "auto":
        return row_count >= STOPWORD_DROP_MIN_ROWS
    return bool(settings.bm25_drop_stopwords)
