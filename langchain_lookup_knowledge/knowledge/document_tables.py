"""The markdown tables of a document read from its chunks: header, separator and rows.

A long table is cut between chunks (a row even in the middle): read in ordinal order, the
chunks give each table once, each row once, under its header. The option rows
(:mod:`..pipeline.table_rows`) and the row chunks (:mod:`.row_chunks`) read tables this way.

Example:
    >>> first = "| Name | Type | Description |\\n|---|---|---|\\n| rate | number | Per second. |"
    >>> later = "| key | string | Count by. |\\n| nodelay | boolean | Do not delay a burst. |"
    >>> tables = document_tables([(0, "a > Attributes", first), (1, "a > Attributes", later)])
    >>> [len(t.rows) for t in tables], tables[0].separator
    ([3], '|---|---|---|')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_lookup_knowledge.knowledge.markdown_text import is_fence
from langchain_lookup_knowledge.knowledge.tables import is_delimiter_row

__all__ = ["DocumentChunk", "Table", "document_tables", "table_count"]

DocumentChunk = tuple[int, str, str]
"""A stored chunk of a document: its ordinal, breadcrumb and text (without its header)."""


@dataclass
class Table:
    """A markdown table of a document: its header row, its separator row and its rows."""

    header: str
    separator: str
    breadcrumb: str
    rows: list[str] = field(default_factory=list)


def _is_row(line: str) -> bool:
    return line.startswith("|") and len(line) > 1


def _is_cut_row(line: str) -> bool:
    return _is_row(line) and not line.endswith("|")


def _is_row_tail(line: str) -> bool:
    """The rest of a row cut between chunks: it ends the row, it does not start one."""
    return not line.startswith("|") and line.endswith("|")


def _document_lines(chunks: Sequence[DocumentChunk]) -> list[tuple[str, str]]:
    """The lines of a document's chunks in ordinal order, each with its chunk's breadcrumb; a
    table row cut between two chunks of one section is joined again, and an empty line stands
    between chunks of different sections."""
    lines: list[tuple[str, str]] = []
    last_breadcrumb = None
    for _, breadcrumb, text in sorted(chunks, key=lambda chunk: chunk[0]):
        own = [line.strip() for line in text.strip().splitlines()]
        if last_breadcrumb is not None and breadcrumb != last_breadcrumb:
            lines.append((breadcrumb, ""))
        elif lines and own and _is_cut_row(lines[-1][1]) and _is_row_tail(own[0]):
            lines[-1] = (breadcrumb, lines[-1][1] + own.pop(0))
        lines += [(breadcrumb, line) for line in own]
        last_breadcrumb = breadcrumb
    return lines


def document_tables(chunks: Sequence[DocumentChunk]) -> list[Table]:
    """The markdown tables of a document's chunks, each row once.

    A table starts at a header row followed by a separator row and runs to the first line that
    is not a row, within one section (chunks with the same breadcrumb, in ordinal order); rows
    whose header was never seen, and anything inside a code block, are not table rows.
    """
    lines = _document_lines(chunks)
    tables: list[Table] = []
    current: Table | None = None
    fenced = False
    for index, (breadcrumb, line) in enumerate(lines):
        if is_fence(line):
            fenced, current = not fenced, None
            continue
        if is_delimiter_row(line):  # a piece of one too
            continue
        if fenced or not _is_row(line):
            current = None
            continue
        following = lines[index + 1][1] if index + 1 < len(lines) else ""
        if is_delimiter_row(following) and following.startswith("|"):
            current = Table(header=line, separator=_separator_for(line), breadcrumb=breadcrumb)
            tables.append(current)
        elif current is not None and line not in current.rows:
            current.rows.append(line)
    return tables


def _separator_for(header: str) -> str:
    """A short separator row for ``header`` (the document's may be cut between chunks)."""
    cells = header.strip("|").count("|") + 1
    return "|" + "---|" * cells


def table_count(chunks: Sequence[DocumentChunk]) -> int:
    """How many markdown tables a document's chunks hold, as :func:`document_tables` reads them
    (what ingest keeps in the catalog, so a lookup never reads a document without tables for
    its rows).

    Example:
        >>> table_count([(0, "a", "| k | v |\\n|---|---|\\n| x | 1 |"), (1, "a", "no table")])
        1
    """
    return len(document_tables(chunks))
