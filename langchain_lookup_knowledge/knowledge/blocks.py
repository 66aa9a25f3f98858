"""A section's markdown as blocks: headings, paragraphs, list items, tables and code fences.

Blocks are ``(start, end, kind)`` spans of the section text, in order; the chunker packs whole
blocks and splits only a block too long for a chunk (prose at sentences, code and tables at
line ends, a table line too long for a chunk at its cells' boundaries).

Example:
    >>> text = "## Fix\\n\\nRun it:\\n\\n- one\\n- two\\n\\n```sh\\necho a\\n\\necho b\\n```"
    >>> [(text[s:e], k) for s, e, k in markdown_blocks(text)][:3]
    [('## Fix', 'heading'), ('Run it:', 'paragraph'), ('- one', 'item')]
    >>> markdown_blocks(text)[-1][2]
    'code'
"""

from __future__ import annotations

import re
from typing import Literal

from langchain_lookup_knowledge.knowledge.markdown_text import MARKDOWN_HEADING, is_fence

BlockKind = Literal["heading", "paragraph", "item", "table", "code"]
Block = tuple[int, int, BlockKind]

_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+\S")
_TABLE = re.compile(r"^\s*\|")
# An output table's border, or a piece of one: "+", then "+"s up to its first "-", then any
# of "-+|". Written so that one way to match exists: a long line of dashes that is no border
# fails in linear time.
_BORDER = re.compile(r"\+\+*-[-+|]*\s*$")
_CELL_PIPE = re.compile(r"(?<!\\)\|")
_BORDER_PLUS = re.compile(r"\+")


def _lines(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every line, without its newline."""
    spans = []
    begin = 0
    while begin <= len(text):
        newline = text.find("\n", begin)
        if newline < 0:
            spans.append((begin, len(text)))
            break
        spans.append((begin, newline))
        begin = newline + 1
    return spans


def markdown_blocks(text: str) -> list[Block]:
    """The blocks of ``text``; blank lines, which separate them, belong to none."""
    blocks: list[Block] = []
    current: list[int] = []  # [start, end] of the open block
    kind: BlockKind = "paragraph"
    fence_open = False

    def close() -> None:
        if current:
            blocks.append((current[0], current[1], kind))
            current.clear()

    for start, end in _lines(text):
        line = text[start:end]
        if fence_open:
            current[1] = end
            if is_fence(line):
                fence_open = False
                close()
            continue
        if is_fence(line):
            close()
            current[:] = [start, end]
            kind, fence_open = "code", True
            continue
        if not line.strip():
            close()
            continue
        if MARKDOWN_HEADING.match(line):
            close()
            blocks.append((start, end, "heading"))
            continue
        line_kind: BlockKind | None = None
        if _TABLE.match(line):
            line_kind = "table"
        elif _ITEM.match(line):
            line_kind = "item"
        if current and (line_kind == "item" or (line_kind == "table") != (kind == "table")):
            close()
        if current:
            current[1] = end
        else:
            current[:] = [start, end]
            kind = line_kind or "paragraph"
    close()
    return blocks


def line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Contiguous spans of ``text[start:end]`` ending after each newline (code, tables)."""
    spans = []
    begin = start
    while begin < end:
        newline = text.find("\n", begin, end)
        stop = end if newline < 0 else newline + 1
        spans.append((begin, stop))
        begin = stop
    return spans


def cell_boundaries(text: str, start: int, end: int) -> list[int]:
    """Where one table line, ``text[start:end]``, may be cut between two cells: before each
    ``|`` of a row or ``+`` of a border, but one that begins or ends the line; none when it
    is no table line or more than one line.

    Example:
        >>> row = "| name | type | the description |"
        >>> [row[:i] for i in cell_boundaries(row, 0, len(row))]
        ['| name ', '| name | type ']
    """
    line = text[start:end]
    body = start + len(line) - len(line.lstrip(" \t>"))  # after indentation and quote marks
    last = start + len(line.rstrip()) - 1
    if text.find("\n", body, last) >= 0:
        return []  # lines: cut at their ends
    if _BORDER.match(text, body, end):
        separator = _BORDER_PLUS
    elif text.startswith("|", body):
        separator = _CELL_PIPE
    else:
        return []
    return [m.start() for m in separator.finditer(text, body + 1, last)]
