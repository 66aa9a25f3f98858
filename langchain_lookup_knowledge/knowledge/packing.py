"""Pack a document's sections into chunks that fit the embedder's window, cut where the text is.

Units are whole blocks (:mod:`blocks`); a block too long for a chunk is split, prose at sentence
ends, code and tables at line ends, a table line still too long at the last boundary between two
of its cells that fits, and a piece still too long at the last word start that fits.
A section that does not fit in what is left of a chunk starts the next one; small sections share
a chunk. When prose continues into the next chunk, that chunk repeats whole sentences of the
previous one (at most ``overlap`` characters). A piece without a word (a closing fence or
``:::``, a table border) is never a chunk of its own (:func:`_join_wordless`). Every chunk, behind
the header the embedder reads with it, is counted with the embedder's tokenizer and fits its
window.

Example:
    >>> from langchain_lookup_knowledge.embeddings.window import EstimatedWindow
    >>> sections = [(("Doc",), "Intro. " * 200)]
    >>> packed = pack_sections(sections, EstimatedWindow(128), lambda path, n: "Doc", 1000, 100)
    >>> len(packed) > 1 and all(text.startswith("Intro.") for _, text in packed)
    True
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_lookup_knowledge.embeddings.window import TokenWindow
from langchain_lookup_knowledge.knowledge.blocks import cell_boundaries, line_spans, markdown_blocks
from langchain_lookup_knowledge.knowledge.sentences import cut_points, sentence_spans

Path = tuple[str, ...]
_MARK = re.compile(r"(?<=\w)(?=[^\w\s])|(?<=[^\w\s])(?=\w)")
_WORD = re.compile(r"[^\W_]{2,}")  # two letters or digits: something a question can match
HeaderOf = Callable[[Path, int], str]
CHARS_PER_TOKEN_CAP = 16
"""No tokenizer reads more characters than this per token on average: a longer unit is split
without counting it whole (a 2 MB line is never tokenized at once)."""


SURE_MARGIN = 8
"""A chunk whose parts, counted apart, leave this many tokens free is not counted whole."""


@dataclass
class _Unit:
    section: int
    start: int
    end: int
    tokens: int
    prose: bool  # a piece of a split paragraph or list item: overlap repeats these


def split_span(
    text: str, start: int, end: int, budget: int, char_cap: int, window: TokenWindow, base: int
) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _ in split_counted(text, start, end, budget, char_cap, window, base)]


def split_counted(
    text: str, start: int, end: int, budget: int, char_cap: int, window: TokenWindow, base: int
) -> list[tuple[int, int, int]]:
    """Cut ``text[start:end]`` into contiguous pieces of at most ``budget`` tokens and
    ``char_cap`` characters, each ending between two cells of a table line (:func:`cell_boundaries`)
    or else at a word start (inside a word only when a single word is longer than that).

    Example:
        >>> from langchain_lookup_knowledge.embeddings.window import EstimatedWindow
        >>> text = "alpha beta gamma delta"
        >>> [text[s:e] for s, e in split_span(text, 0, len(text), 4, 100, EstimatedWindow(9), 2)]
        ['alpha beta ', 'gamma delta']
    """
    """:func:`split_span` with each piece's token count (special tokens excluded)."""
    cells = cell_boundaries(text, start, end)
    cuts = cut_points(text, start, end)
    marks: list[int] | None = None  # between a word and punctuation: when a "word" is too long
    sample = text[start : min(end, start + 2000)]
    ratio = max(0.25, len(sample) / max(1, window.count([sample])[0] - base))
    pieces = []
    pos = start
    while pos < end:
        limit = min(end, pos + min(char_cap, max(1, int(budget * ratio))))
        while True:
            index = bisect.bisect_right(cells, limit) - 1
            if index >= 0 and cells[index] > pos:
                cut = cells[index]
            else:
                index = bisect.bisect_right(cuts, limit) - 1
                cut = cuts[index] if index >= 0 and cuts[index] > pos else limit
                if cut == limit and limit < end:
                    marks = (
                        [m.start() for m in _MARK.finditer(text, start + 1, end)]
                        if marks is None
                        else marks
                    )
                    index = bisect.bisect_right(marks, limit) - 1
                    cut = marks[index] if index >= 0 and marks[index] > pos else limit
            if limit == end:
                cut = end
            tokens = window.count([text[pos:cut]])[0] - base
            if tokens <= budget or cut - pos <= 1:
                break
            limit = pos + max(1, int((cut - pos) * budget / tokens * 0.9))
        pieces.append((pos, cut, tokens))
        pos = cut
    return pieces


def _units(
    index: int, text: str, budget: int, chunk_size: int, window: TokenWindow, base: int
) -> list[_Unit]:
    """The units of one section: whole blocks, or the pieces of a block too long for a chunk."""
    hard_cap = max(chunk_size, budget * 4)
    blocks = markdown_blocks(text)
    countable = [text[s:e] if e - s <= CHARS_PER_TOKEN_CAP * budget else "" for s, e, _ in blocks]
    counts = window.count(countable)
    units: list[_Unit] = []
    for (start, end, kind), counted, tokens in zip(blocks, countable, counts, strict=True):
        code = kind in ("code", "table")
        cap = hard_cap if code else chunk_size
        if counted and tokens - base <= budget and end - start <= cap:
            units.append(_Unit(index, start, end, tokens - base, False))
            continue
        first = line_spans(text, start, end) if code else sentence_spans(text, start, end)
        for s, e in first:
            for ps, pe, tokens in split_counted(text, s, e, budget, cap, window, base):
                if text[ps:pe].strip():
                    units.append(_Unit(index, ps, pe, tokens, not code))
    return units


def _text(units: Sequence[_Unit], sections: Sequence[tuple[Path, str]]) -> str:
    """Units of one section are contiguous in it; sections are joined by a blank line."""
    parts: list[str] = []
    group: list[_Unit] = []
    for unit in [*units, None]:
        if group and (unit is None or unit.section != group[0].section):
            body = sections[group[0].section][1]
            parts.append(body[group[0].start : group[-1].end].strip())
            group = []
        if unit is not None:
            group.append(unit)
    return "\n\n".join(p for p in parts if p)


def pack_sections(
    sections: Sequence[tuple[Path, str]],
    window: TokenWindow,
    header_of: HeaderOf,
    chunk_size: int,
    overlap: int,
) -> list[tuple[Path, str]]:
    """``(breadcrumb path, text)`` per chunk, in document order."""
    base = window.count([""])[0]
    limit = window.max_tokens
    header_cache: dict[tuple[Path, int], int] = {}

    def header_tokens(path: Path, ordinal: int) -> int:
        key = (path, min(ordinal, 1))
        if key not in header_cache:
            header_cache[key] = window.count([header_of(path, ordinal) + "\n\n"])[0]
        return header_cache[key]

    queue: deque[_Unit] = deque()
    for index, (path, text) in enumerate(sections):
        budget = max(8, limit - header_tokens(path, 0 if index == 0 else 1) - 2)
        queue.extend(_units(index, text, budget, chunk_size, window, base))

    chunks: list[list[_Unit]] = []
    current: list[_Unit] = []
    carried = 0  # how many units at the head of ``current`` repeat the previous chunk

    def chars(units: Sequence[_Unit]) -> int:
        return len(_text(units, sections))

    def flush() -> None:
        nonlocal current, carried
        while current:
            path = sections[current[0].section][0]
            text = _text(current, sections)
            estimate = header_tokens(path, len(chunks)) + sum(u.tokens + 1 for u in current)
            if estimate <= limit - SURE_MARGIN:
                break  # counted in parts with room to spare: no need to count the whole
            embedded = header_of(path, len(chunks)) + "\n\n" + text
            if window.count([embedded])[0] <= limit:
                break
            if len(current) > 1:
                queue.appendleft(current.pop())  # counted parts fit, the whole does not
                continue
            only = current[0]  # one unit, counted apart, does not fit with its header
            budget = limit - window.count([embedded[: len(embedded) - len(text)]])[0] - 4
            body = sections[only.section][1]
            pieces = split_counted(
                body, only.start, only.end, max(8, budget), chunk_size, window, base
            )
            if len(pieces) == 1:
                break
            for ps, pe, tokens in reversed(pieces):
                queue.appendleft(_Unit(only.section, ps, pe, tokens, only.prose))
            current, carried = [], 0
            return
        if not current or len(current) == carried:
            current, carried = [], 0
            return
        chunks.append(current)
        last = current[-1]
        keep: list[_Unit] = []
        if overlap and queue and queue[0].section == last.section and queue[0].prose:
            # Whole sentences up to ``overlap`` characters, or the one last sentence when it is
            # longer: a sentence past the overlap is still carried while the carried text stays
            # within half a chunk (scientific prose has few sentences under 150 characters).
            for unit in reversed(current[carried:]):
                if not unit.prose or unit.section != last.section:
                    break
                size = sum(u.end - u.start for u in keep)
                grown = size + unit.end - unit.start
                if grown > overlap and (keep or grown > chunk_size // 2):
                    break
                keep.insert(0, unit)
        current, carried = keep, len(keep)

    while queue:
        unit = queue.popleft()
        if current:
            path = sections[current[0].section][0]
            budget = limit - header_tokens(path, len(chunks)) - 2
            used = sum(u.tokens + 1 for u in current)
            new_section = unit.section != current[-1].section
            whole = [u for u in queue if u.section == unit.section] if new_section else []
            need = unit.tokens + 1 + sum(u.tokens + 1 for u in whole)
            grown = chars([*current, unit, *whole])
            if used + need > budget or grown > chunk_size:
                if carried == len(current):
                    current, carried = [], 0  # the overlap leaves no room: drop it
                else:
                    queue.appendleft(unit)
                    flush()
                    continue
        current.append(unit)
    flush()

    def fits(units: list[_Unit], ordinal: int) -> bool:
        path = sections[units[0].section][0]
        embedded = header_of(path, ordinal) + "\n\n" + _text(units, sections)
        return window.count([embedded])[0] <= limit

    return [
        (sections[units[0].section][0], _text(units, sections))
        for units in _join_wordless(chunks, sections, fits)
    ]


def _join_wordless(
    chunks: list[list[_Unit]],
    sections: Sequence[tuple[Path, str]],
    fits: Callable[[list[_Unit], int], bool],
) -> list[list[_Unit]]:
    """``chunks`` (their units) where a chunk without a word joins the chunk before it, or when
    that has no room in the window, takes the last units of it until it holds a word (the
    chunk before keeping a word of its own): a closing fence stays behind the code it closes.
    A first chunk, or one that neither way fits behind the chunk before, does the same with the
    chunk after it. ``fits(units, ordinal)``: whether units fit the window as the chunk at
    ``ordinal`` (the first chunk's header is longer)."""

    def has_word(units: list[_Unit]) -> bool:
        return _WORD.search(_text(units, sections)) is not None

    def joined(first: list[_Unit], second: list[_Unit]) -> list[_Unit]:
        return [*first, *(u for u in second if u not in first)]  # without repeated overlap

    def lent(
        alone: list[_Unit], other: list[_Unit], before: bool, ordinal: int
    ) -> list[list[_Unit]] | None:
        """``[other, alone]`` (``before``) or ``[alone, other]`` with units of ``other`` moved
        to the side of ``alone`` until it holds a word; None when ``alone`` then does not fit
        as the chunk at ``ordinal`` or ``other`` would hold no word."""
        kept, moved = list(other), list(alone)
        while len(kept) > 1 and not has_word(moved):
            moved = [kept.pop(), *moved] if before else [*moved, kept.pop(0)]
        if not (has_word(kept) and has_word(moved) and fits(moved, ordinal)):
            return None
        return [kept, moved] if before else [moved, kept]

    out = list(chunks)
    index = 0
    while index < len(out):
        units = out[index]
        if has_word(units):
            index += 1
            continue
        if index:
            before = joined(out[index - 1], units)
            if fits(before, index - 1):
                out[index - 1 : index + 1] = [before]
                continue
            pair = lent(units, out[index - 1], True, index)
            if pair is not None:
                out[index - 1 : index + 1] = pair
                index += 1
                continue
        if index + 1 < len(out):
            after = joined(units, out[index + 1])
            pair = [after] if fits(after, index) else lent(units, out[index + 1], False, index)
            if pair is not None:
                out[index : index + 2] = pair
        index += 1
    return out
