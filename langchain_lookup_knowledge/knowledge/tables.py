"""Tables read without their alignment padding: markdown tables, and query output in code.

Documentation tables are often written aligned for a text editor: every cell padded with
spaces to its column's width and a delimiter row of dashes as wide as the widest cell. An
APISIX attribute table has rows of 350 characters for 120 of text and a delimiter row of 600
dashes. Rendered, the padding is gone; left in, it fills chunks, the embedder's window (the
bundled model reads every dash as a word piece, so one delimiter row can exceed its 256) and
the agent's message with characters that say nothing, and a chunk can be nothing but dashes.

:func:`compact_tables` writes each delimiter cell as ``---`` (its alignment colons kept) and
removes the padding beside the pipes of a table row. A table renders the same; a line of dashes
without a pipe (a rule, a setext heading) is not a table row.

Code is shown as written, except the output tables of a SQL client in it (mysql style: border
lines ``+----+----+``, rows ``| a  | b  |`` between them). Their borders are padded to the
widest value of a column: a TiDB ``EXPLAIN ANALYZE`` border of 900 dashes is 900 word pieces,
three times the bundled model's window, and a chunker would cut it into chunks of dashes. Every
border cell is written ``---`` and every row cell stripped, in every such table (a border of a
narrow table still spends a word piece per dash). A row is rewritten only when it has the
cells of the border above it; an operator tree's indentation (``│ └─TableScan``) is kept.

Example:
    >>> print(compact_tables("| Name  | Type    |\\n|-------|:-------:|\\n| ttl   | integer |"))
    | Name | Type |
    | --- | :---: |
    | ttl | integer |
    >>> print(compact_tables("```\\n+------+-------+\\n| id   | state |\\n+------+-------+\\n```"))
    ```
    +---+---+
    | id | state |
    +---+---+
    ```
"""

from __future__ import annotations

import re

from langchain_lookup_knowledge.knowledge.markdown_text import fenced_lines

__all__ = ["compact_tables", "is_delimiter_row"]

_DELIMITER_ROW = re.compile(r"^\|?\s*:?-+(?: +-+)*:?\s*(\|\s*:?-+(?: +-+)*:?\s*)*\|?$")
_PADDING_BEFORE_PIPE = re.compile(r"(?<=\S)[ \t]{2,}(?=\|)")
_PADDING_AFTER_PIPE = re.compile(r"(?<!\\)\|[ \t]{2,}(?=\S)")
_QUOTED = r"[ \t]*(?:>[ \t]?)*"  # indentation, and the marks of a block quote
# A border's last cell may end in a pipe or nothing: copies of a console cut or mistyped.
_OUTPUT_BORDER = re.compile(rf"^({_QUOTED})\+(?:-+\+)+(?:-+\|?)?[ \t]*$")
_OUTPUT_ROW = re.compile(rf"^({_QUOTED})\|(.*)\|[ \t]*$")
_TREE = re.compile("^[\u2500-\u257f]")  # box drawing: an EXPLAIN operator tree


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


def _output_cell(cell: str) -> str:
    value = cell.strip()
    if not value:
        return " "
    lead = cell[: len(cell) - len(cell.lstrip())]
    indent = lead[1:] if _TREE.match(value) else ""  # a tree's depth is content, not padding
    return f" {indent}{value} "


def _output_line(text: str, columns: int) -> tuple[str | None, int]:
    """``text`` as an output table's border or row without its padding (None: it is neither,
    or a row without the ``columns`` cells of the border above it), and the table's columns
    from there on (0: no table)."""
    border = _OUTPUT_BORDER.match(text)
    if border is not None:
        cells = len(re.findall("-+", text[border.end(1) :]))
        return border.group(1) + "+" + "---+" * cells, cells
    row = _OUTPUT_ROW.match(text) if columns else None
    if row is None or row.group(2).count("|") != columns - 1:
        return None, 0
    cells_text = "|".join(_output_cell(c) for c in row.group(2).split("|"))
    return row.group(1) + "|" + cells_text + "|", columns


def compact_tables(body: str) -> str:
    """``body`` with its tables' padding removed (see the module docstring).

    Example:
        >>> compact_tables("text  with   spaces\\n```\\n| a    | b |\\n```")
        'text  with   spaces\\n```\\n| a    | b |\\n```'
    """
    if "|" not in body:
        return body
    out: list[str] = []
    columns = 0  # cells of the output table whose border or row came last (0: none)
    for line, code in fenced_lines(body.splitlines(keepends=True)):
        text = line.rstrip("\r\n")
        ending = line[len(text) :]
        written, columns = _output_line(text, columns) if "+" in text or columns else (None, 0)
        if written is not None:
            out.append(written + ending)
        elif code or "|" not in line:
            out.append(line)
        elif is_delimiter_row(stripped := text.strip()):  # with a pipe: no rule, no setext
            out.append(_delimiter(stripped, text[: len(text) - len(text.lstrip())]) + ending)
        elif text.lstrip().startswith("|"):
            out.append(_row(text) + ending)
        else:
            out.append(line)
    return "".join(out)
