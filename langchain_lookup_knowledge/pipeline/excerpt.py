"""The part of a block that answers the question, when the whole block does not fit.

A block cut to its share of the context budget keeps its head, which is where a section says what
it is about. A how-to question is often answered further down: one row of an attribute table, one
command of a long example. When a run of lines further down holds more of the question's terms
than the head does, the agent is shown that run instead, between visible markers; otherwise the
head, as before. Lines are never split, so a shown line is a whole line of the document.

Example:
    >>> row = "> | nodelay | boolean | pass burst requests at once |"
    >>> body = "\\n".join(["> intro"] * 40 + [row])
    >>> text = focused_cut(body, room=80, terms=["burst", "nodelay"])
    >>> print(text)
    > …[truncated]
    > intro
    > | nodelay | boolean | pass burst requests at once |
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_lookup_knowledge.core.text import fold, holds_word_key, raw_words, word_key_set

__all__ = ["ELIDED", "focused_cut", "held_terms", "line_hits"]

MARKER = "…[truncated]"
"""The end of a line cut short."""
QUOTE = "> "
ELIDED = "> " + MARKER
"""The quoted line standing for document lines left out before or after the shown run."""


def line_hits(line: str, terms: Sequence[str]) -> int:
    """How many of the question's ``terms`` one line holds: a Latin term as a whole word, a CJK
    term (a bigram) as a substring.

    Example:
        >>> line_hits("> Set `nodelay` to pass burst requests", ["nodelay", "burst", "rate"])
        2
    """
    return len(held_terms(line, terms))


def held_terms(text: str, terms: Sequence[str]) -> list[str]:
    """The ``terms`` a text holds, as :func:`line_hits` counts them (the text read once).

    Example:
        >>> held_terms("Set `nodelay` to pass 突发 requests", ["nodelay", "突发", "rate"])
        ['nodelay', '突发']
    """
    if not terms:
        return []
    if text.isascii():
        # Each word key of an ASCII line is a substring of the lowercased line (a word, or the
        # word without its plural s), and a CJK term is in no ASCII line: the terms that are
        # not substrings cannot match, and a line holding none needs no word keys.
        lowered = text.lower()
        present = [t for t in terms if t in lowered]
        if not present:
            return []
        folded_words = set(raw_words(lowered))  # ASCII: folding is lowercasing
        return [t for t in present if holds_word_key(t, folded_words)]
    # A word key of the text is a substring of its folded form too (casefolding goes character
    # by character): a term that is not one is held neither way, and a text none of whose ASCII
    # terms is one (most lines and chunks of a CJK document) needs no word keys.
    folded = fold(text)
    present = [t for t in terms if t in folded]
    if not any(t.isascii() for t in present):
        return present
    words = word_key_set(text)
    return [t for t in present if not t.isascii() or t in words]


def _best_run(lengths: Sequence[int], hits: Sequence[int], room: int) -> tuple[int, int, int]:
    """The run of whole lines ``[start, end)`` within ``room`` characters (newlines and the
    markers counted) holding the most term hits; the earliest such run on a tie."""
    n = len(lengths)

    def size(start: int, end: int, total: int) -> int:
        markers = (len(ELIDED) + 1 if start > 0 else 0) + (len(ELIDED) + 1 if end < n else 0)
        return total + markers

    suffix = [0] * (n + 1)  # characters of lines[i:], newlines aside
    suffix_hits = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + lengths[i]
        suffix_hits[i] = suffix_hits[i + 1] + hits[i]
    best = (0, 0, -1)  # start, end, hits
    end = total = got = 0  # lines[start:end]: their joined length and their hits
    for start in range(n):
        if end <= start:
            end, total, got = start, 0, 0
        while end < n and size(start, end + 1, total + lengths[end] + (end > start)) <= room:
            total += lengths[end] + (end > start)
            got += hits[end]
            end += 1
        if end < n:  # the rest of the block may fit once its end marker is no longer needed
            rest = suffix[end] + (n - end) - (end == start)
            if size(start, n, total + rest) <= room:
                total, got, end = total + rest, got + suffix_hits[end], n
        while end > start and size(start, end, total) > room:  # the start marker came in
            end -= 1
            total -= lengths[end] + (end > start)
            got -= hits[end]
        if end > start and got > best[2]:
            best = (start, end, got)
        if end > start:
            total -= lengths[start] + (end > start + 1)
            got -= hits[start]
    return best


def focused_cut(body: str, room: int, terms: Sequence[str]) -> str | None:
    """``body`` (quoted lines) cut to at most ``room`` characters around its lines that hold the
    most of ``terms``; None when the head holds as many (the caller keeps the head).

    When no whole line holding a term fits, the line holding the most is shown from its start,
    cut with the truncation marker (a table row names its key first).
    """
    lines = body.split("\n")
    if not terms or len(lines) < 2:
        return None
    hits = [line_hits(line, terms) for line in lines]
    if not any(hits):  # no line holds a term: the head holds as many
        return None
    start, end, got = _best_run([len(line) for line in lines], hits, room)
    if got > 0:
        if start == 0:
            return None
        shown = [ELIDED, *lines[start:end]]
        if end < len(lines):
            shown.append(ELIDED)
        return "\n".join(shown)
    best = max(range(len(lines)), key=lambda i: (hits[i], -i))
    line_room = room - len(ELIDED) - 1 - len(MARKER)
    if best == 0 or hits[best] == 0 or line_room < len(QUOTE) + 1:
        return None
    return f"{ELIDED}\n{lines[best][:line_room].rstrip()}{MARKER}"
