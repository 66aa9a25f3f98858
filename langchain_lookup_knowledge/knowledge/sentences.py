"""Where prose may be cut: sentence ends (English and Chinese) and word starts.

A rule, not a model: Chinese sentences end at 。！？ (closing quotes and brackets stay with
them); English ones at ``.``, ``!`` or ``?`` followed by a space and a capital, a digit or
markup, unless the word before is a known abbreviation or a single letter. Nothing here cuts
inside a word: :func:`cut_points` lists only positions between words (and around CJK
characters, each of which reads as a word of its own).

Example:
    >>> text = "Set the key. Restart it, e.g. with systemctl. 然后检查日志。再试一次！"
    >>> [text[s:e] for s, e in sentence_spans(text)]
    ['Set the key. ', 'Restart it, e.g. with systemctl. ', '然后检查日志。', '再试一次！']
"""

from __future__ import annotations

import re

from langchain_lookup_knowledge.core.text import CJK_CHARS

_CLOSERS = "\"'”’」』）)】]"
_CJK_END = re.compile(f"(?:[。！？]|(?<=[{CJK_CHARS}])[!?])+[{re.escape(_CLOSERS)}]*")
_LATIN_END = re.compile(
    r"[.!?]+[" + re.escape(_CLOSERS) + r"]*(\s+)(?=[A-Z0-9`*\[(\"'“" + CJK_CHARS + r"])"
)
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx fig no mr mrs ms dr st jr sr inc ltd co al eq sec resp".split()  # noqa: SIM905
)
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_CJK_CLASS = f"{CJK_CHARS}，、；：。！？（）《》“”「」"
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")
_CUT = re.compile(f"(?<=\\s)(?=\\S)|(?<=[{_CJK_CLASS}])(?=\\S)|(?<=\\S)(?=[{_CJK_CLASS}])")


def _latin_end_ok(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` ends a sentence (not ``e.g.``, ``Dr.``, an initial ``A.``)."""
    if text[dot] != ".":
        return True
    match = _WORD_BEFORE.search(text, 0, dot)
    if match is None:
        return True
    word = match.group(1).lower().rstrip(".")
    if word in _ABBREVIATIONS:
        return False
    return not (len(word) == 1 and word.isalpha())


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Contiguous ``(start, end)`` spans of ``text[start:end]``, one per sentence.

    The whitespace after a sentence belongs to it, so the spans cover the text exactly.
    """
    stop = len(text) if end is None else end
    cuts: set[int] = set()
    for match in _CJK_END.finditer(text, start, stop):
        cuts.add(match.end())
    for match in _LATIN_END.finditer(text, start, stop):
        if _latin_end_ok(text, match.start()):
            cuts.add(match.end())
    spans = []
    begin = start
    for cut in sorted(cuts):
        if begin < cut < stop:
            spans.append((begin, cut))
            begin = cut
    if begin < stop:
        spans.append((begin, stop))
    return spans


def cut_points(text: str, start: int, end: int) -> list[int]:
    """Positions in ``(start, end)`` where a cut falls between words, ascending.

    A position qualifies after whitespace before a non-space character, or next to a CJK
    character or CJK punctuation (a CJK run has no spaces between its words).

    Example:
        >>> cut_points("ab cd磁盘", 0, 7)
        [3, 5, 6]
    """
    return [m.start() for m in _CUT.finditer(text, start + 1, end) if m.start() < end]


def inside_word(text: str, position: int) -> bool:
    """Whether a cut at ``position`` splits a Latin word or number (word characters both sides).

    Example:
        >>> inside_word("john-key", 2), inside_word("john key", 5)
        (True, False)
    """
    if position <= 0 or position >= len(text):
        return False
    before, after = text[position - 1], text[position]
    return _is_word_char(before) and _is_word_char(after)


def _is_word_char(char: str) -> bool:
    return (char.isalnum() or char == "_") and _CJK_CHAR.match(char) is None
