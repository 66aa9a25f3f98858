"""Markdown tables read without their alignment padding.

Documentation tables are often written aligned for a text editor: every cell padded with
spaces to its column's width and a delimiter row of dashes as wide as the widest cell. An
APISIX attribute table has rows of 350 characters for 120 of text and a delimiter row of 600
dashes. Rendered, the padding is gone; left in, it fills chunks, the embedder's window (the
bundled model reads every dash as a word piece, so one delimiter row can exceed its 256) and
the agent's message with characters that say nothing, and a chunk can be nothing but dashes.

:func:`compact_tables` writes each delimiter cell as ``---`` (its alignment colons kept) and
removes the padding beside the pipes of a table row. A table renders the same; code fences
are code and stay as they are; a line of dashes without a pipe (a rule, a setext heading) is
not a table row.

Example:
    >>> print(compact_tables("| Name  | Type    |\\n|-------|:-------:|\\n| ttl   | integer |"))
    | Name | Type |
    | --- | :---: |
    | ttl | integer |
"""

from __future__ import annotations

import re

from langchain_lookup_knowledge.knowledge.markdown_text import fenced_lines

__all__ = ["compact_tables", "is_delimiter_row"]

_DELIMITER_ROW = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_PADDING_BEFORE_PIPE = re.compile(r"(?<=\S)[ \t]{2,}(?=\|)")
_PADDING_AFTER_PIPE = re.compile(r"(?<!\\)\|[ \t]{2,}(?=\S)")


def is_delimiter_row(line: str) -> bool:
    """Whether the stripped ``line`` is a table's delimiter row (cells of dashes, alignment
    colons), or a piece of one without its pipes (a long one cut between two chunks).

    Example:
        >>> is_delimiter_row("|:---|----:|"), is_delimiter_row("-----"), is_delimiter_row("| a |")
        (True, True, False)
    """
    return "-" in line and _DELIMITER_ROW.match(line) is not None


def _delimiter(line: str, indent: str) -> str:
    body = line.strip()
    lead, trail = body.startswith("|"), body.endswith("|")
    cells = [c.strip() for c in body.strip("|").split("|")]
    written = [
        (":" if c.startswith(":") else "") + "---" + (":" if c.endswith(":") else "") for c in cells
    ]
    return indent + ("| " if lead else "") + " | ".join(written) + (" |" if trail else "")


def _row(line: str) -> str:
    return _PADDING_AFTER_PIPE.sub("| ", _PADDING_BEFORE_PIPE.sub(" ", line))


def compact_tables(body: str) -> str:
    """``body`` with its markdown tables' padding removed (see the module docstring).

    Example:
        >>> compact_tables("text  with   spaces\\n```\\n| a    | b |\\n```")
        'text  with   spaces\\n```\\n| a    | b |\\n```'
    """
    if "|" not in body:
        return body
    out: list[str] = []
    for line, code in fenced_lines(body.splitlines(keepends=True)):
        if code or "|" not in line:
            out.append(line)
            continue
        text = line.rstrip("\r\n")
        ending = line[len(text) :]
        stripped = text.strip()
        if is_delimiter_row(stripped):  # a row with a pipe: not a rule or a setext heading
            out.append(_delimiter(stripped, text[: len(text) - len(text.lstrip())]) + ending)
        elif text.lstrip().startswith("|"):
            out.append(_row(text) + ending)
        else:
            out.append(line)
    return "".join(out)
