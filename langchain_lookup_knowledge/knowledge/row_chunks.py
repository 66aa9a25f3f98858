"""Table rows as chunks of their own: one small retrievable piece per row of a markdown table.

A chunk sized to the embedder's window holds several rows of a long table (a plugin's
attributes, a command's flags), so its vector is an average of them all and a question about
one row matches it weakly. With ``table_row_chunks`` set, each row of a markdown table outside
code also becomes a chunk of its own, after the document's usual chunks: its table's header row,
a separator row and the row, under the table's section breadcrumb. Its vector and its BM25 text
are then the row's own (behind the same header the dense model reads for any chunk: breadcrumb
and document terms), and when it is found the agent reads the row under its header.

Only rows worth a chunk of their own become one (:func:`worth_a_chunk`): a table of at least
:data:`MIN_TABLE_ROWS` rows (a shorter one fits whole in one chunk anyway), a row with at least
two filled cells and :data:`MIN_ROW_WORDS` words (a bare ``| x | 1 |`` means nothing alone).
A row chunk's metadata holds ``table_row: true``: neighbour growing and the option rows read the
document's usual chunks only, and the evidence drops a row another block of its document shows.

Example:
    >>> from langchain_lookup_knowledge.knowledge.documents import parse_document
    >>> body = (b"# limit-req\\n## Attributes\\n| Name | Type | Description |\\n|---|---|---|\\n"
    ...         b"| rate | integer | Requests per second allowed. |\\n"
    ...         b"| nodelay | boolean | If true, do not delay requests in the burst. |\\n"
    ...         b"| key | string | The key to count requests by. |\\n")
    >>> doc = parse_document(body, "limit-req.md")
    >>> from langchain_lookup_knowledge.knowledge.chunking import chunk_document
    >>> chunks = chunk_document(doc)
    >>> rows = table_row_chunks(doc, chunks)
    >>> [r.evidence_key for r in rows]
    ['limit-req.md#1', 'limit-req.md#2', 'limit-req.md#3']
    >>> print(rows[1].breadcrumb); print(rows[1].text)
    limit-req > Attributes
    | Name | Type | Description |
    |---|---|---|
    | nodelay | boolean | If true, do not delay requests in the burst. |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_lookup_knowledge.knowledge.chunking import (
    Chunk,
    breadcrumb_of,
    evidence_key,
    split_sections,
)
from langchain_lookup_knowledge.knowledge.document_tables import document_tables
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument

__all__ = [
    "MIN_ROW_WORDS",
    "MIN_TABLE_ROWS",
    "ROW_METADATA_KEY",
    "TableRowChunk",
    "is_row_chunk",
    "row_line",
    "row_signature",
    "table_row_chunks",
    "worth_a_chunk",
]

MIN_TABLE_ROWS = 3
"""Rows a table needs for its rows to become chunks (a shorter table is one chunk's worth)."""
MIN_ROW_WORDS = 4
"""Words a row needs to mean something alone (``| x | 1 |`` does not)."""
ROW_METADATA_KEY = "table_row"
"""The chunk metadata key marking a row chunk (its value: ``True``)."""
_SIGNATURE_TAIL = "/rows"


@dataclass(frozen=True)
class TableRowChunk(Chunk):
    """A chunk holding one table row under its table's header row."""


def is_row_chunk(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a stored chunk's metadata marks it as a row chunk."""
    return bool(metadata) and metadata.get(ROW_METADATA_KEY) is True  # type: ignore[union-attr]


def row_signature(signature: str, enabled: bool) -> str:
    """The chunking signature with row chunks on (another signature re-chunks every document).

    Example:
        >>> row_signature("v9/1000/150/hf:minilm/256", True)
        'v9/1000/150/hf:minilm/256/rows'
    """
    return signature + _SIGNATURE_TAIL if enabled else signature


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def worth_a_chunk(row: str) -> bool:
    """Whether ``row`` means something alone: two filled cells and :data:`MIN_ROW_WORDS` words.

    Example:
        >>> worth_a_chunk("| nodelay | boolean | Do not delay requests. |")
        True
        >>> worth_a_chunk("| a | 1 |")
        False
    """
    cells = [c for c in _cells(row) if c]
    return len(cells) >= 2 and sum(len(c.split()) for c in cells) >= MIN_ROW_WORDS


def row_line(text: str) -> str:
    """The row a row chunk's text shows (its last line)."""
    lines = text.strip().splitlines()
    return lines[-1].strip() if lines else ""


def _section_breadcrumbs(doc: KnowledgeDocument) -> list[tuple[str, set[str]]]:
    """Each section of ``doc`` in order: its breadcrumb and its stripped lines."""
    return [
        (breadcrumb_of(s.path), {line.strip() for line in s.text.splitlines()})
        for s in split_sections(doc.body, doc.title)
    ]


def table_row_chunks(doc: KnowledgeDocument, chunks: Sequence[Chunk]) -> list[TableRowChunk]:
    """The row chunks of ``doc`` whose usual chunks are ``chunks`` (in ordinal order): one per
    row worth it (:func:`worth_a_chunk`) of each table of :data:`MIN_TABLE_ROWS` rows or more,
    numbered after the usual chunks, in document order, each under its table's own section."""
    # Read from the chunks rather than the body: the rows are then written exactly as the
    # table chunks show them, and a row cut between two chunks is whole again.
    if not chunks:
        return []
    tables = document_tables([(c.ordinal, c.breadcrumb, c.text) for c in chunks])
    # A chunk packing several sections is named after its first: a table's breadcrumb is that
    # of the section holding its header row and first row (searched in order from the last).
    sections = _section_breadcrumbs(doc)
    cursor = 0
    ordinal = max(c.ordinal for c in chunks) + 1
    out: list[TableRowChunk] = []
    for table in tables:
        breadcrumb = table.breadcrumb
        for index in range(cursor, len(sections)):
            lines = sections[index][1]
            if table.header in lines and (not table.rows or table.rows[0] in lines):
                breadcrumb, cursor = sections[index][0], index
                break
        if len(table.rows) < MIN_TABLE_ROWS:
            continue
        for row in table.rows:
            if not worth_a_chunk(row):
                continue
            out.append(
                TableRowChunk(
                    evidence_key=evidence_key(doc.source, ordinal),
                    source=doc.source,
                    ordinal=ordinal,
                    title=doc.title,
                    breadcrumb=breadcrumb,
                    category=doc.category,
                    text=f"{table.header}\n{table.separator}\n{row}",
                )
            )
            ordinal += 1
    return out
