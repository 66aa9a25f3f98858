"""The rules L0 indexes a catalog by: term references, title word rules, the CJK index key.

:class:`~langchain_lookup_knowledge.pipeline.l0.L0Matcher` builds its inverted indexes from these
and reads them per query; the matching rules themselves are stated in ``pipeline/l0.py``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from langchain_lookup_knowledge.core.text import (
    camel_parts,
    cjk_runs,
    has_cjk,
    raw_words,
    significant,
    singular,
)

__all__ = ["TermRef", "TitleRule", "WordGroup", "cjk_index_key"]


def cjk_index_key(term: str) -> str:
    """The index key of a compact CJK term: the bigram at its first CJK character."""
    start = next((i for i, char in enumerate(term) if has_cjk(char)), 0)
    start = min(start, len(term) - 2)
    return term[start : start + 2]


@dataclass(frozen=True)
class TermRef:
    """A catalog term under its index key: whose it is, of which kind, as it was written."""

    entry: int  # index into the matcher's entries; -1 for a category name
    kind: str
    term: str  # original spelling


@dataclass(frozen=True)
class WordGroup:
    """One significant title word: satisfied by the word, or by all of its CamelCase parts."""

    whole: str
    parts: tuple[str, ...] = ()

    def satisfied(self, query_words: set[str]) -> bool:
        if self.whole in query_words:
            return True
        return bool(self.parts) and all(p in query_words for p in self.parts)


@dataclass(frozen=True)
class TitleRule:
    """The all-significant-words title rule of one entry."""

    entry: int
    words: tuple[WordGroup, ...]
    cjk_runs: tuple[str, ...]

    def satisfied(self, query_words: set[str], compact_query: str) -> bool:
        return all(g.satisfied(query_words) for g in self.words) and all(
            run in compact_query for run in self.cjk_runs
        )

    @classmethod
    def of(cls, index: int, title: str) -> TitleRule | None:
        """The rule of a title; ``None`` when it asks for fewer than two words (parts, CJK runs)."""
        nfkc = unicodedata.normalize("NFKC", title)
        groups: dict[WordGroup, None] = {}
        for raw in raw_words(nfkc):
            folded = raw.casefold()
            parts = camel_parts(raw)
            if parts or significant(folded):
                groups[WordGroup(singular(folded), parts)] = None
        runs = tuple(dict.fromkeys(r for r in cjk_runs(nfkc.casefold()) if len(r) >= 2))
        size = sum(max(1, len(g.parts)) for g in groups) + len(runs)
        if size < 2:
            return None
        return cls(index, tuple(groups), runs)
