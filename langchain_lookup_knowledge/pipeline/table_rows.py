"""Option rows: the first block also shows the table rows of its document that answer a question.

A how-to question is often answered by one row of a table of options (a configuration key, a
command-line flag, an API parameter), and a chunk sized to the embedder's window holds a few
rows of a long table. The best block is then the example that uses the options or the rows next
to the one asked about. With ``table_rows`` set, the first evidence block gets up to that many
more rows of its document's markdown tables:

* the rows holding the most of the question's terms, each term weighted by how few of the
  document's rows hold it (a term in every row, such as the document's own name, tells no row
  apart), a shorter row before a longer one holding the same terms (BM25's length
  normalisation); a row holding none is never added, nor one the block already shows;
* each added row under its table's header row (unless the block shows that header), the tables
  in document order and each table's rows in its order, after a ``…[truncated]`` line;
* only as many as fit the room the context pack has for the first block (:func:`.knee.
  agent_first_block_room`), so the pack never cuts them.

The document's chunks are read from the store by source (one query per lookup); a failed read
leaves the block as it was. The block keeps its identity, score and reasons; the evidence
decision still reads the matched chunk (:attr:`.EvidenceSelection.matched_blocks`).

Example:
    >>> first = "| Name | Type | Description |\\n|---|---|---|\\n| rate | number | Per second. |"
    >>> later = "| key | string | Count by. |\\n| nodelay | boolean | Do not delay a burst. |"
    >>> chunks = [(0, "limit-req > Attributes", first), (1, "limit-req > Attributes", later)]
    >>> tables = document_tables(chunks)
    >>> [len(t.rows) for t in tables], tables[0].header
    ([3], '| Name | Type | Description |')
    >>> print(rows_for("| rate | number | Per second. |", tables, ["burst", "delay"], 2))
    …[truncated]
    <BLANKLINE>
    | Name | Type | Description |
    |---|---|---|
    | nodelay | boolean | Do not delay a burst. |
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.term_match import query_terms
from langchain_lookup_knowledge.knowledge.document_tables import (
    DocumentChunk,
    Table,
    document_tables,
)
from langchain_lookup_knowledge.pipeline.context_pack import PackMeasure
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.excerpt import MARKER, held_terms
from langchain_lookup_knowledge.pipeline.expand import shown_size, split_key, stored_chunks
from langchain_lookup_knowledge.pipeline.knee import agent_first_block_room
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "DocumentChunk",
    "DocumentReads",
    "Table",
    "add_table_rows",
    "document_tables",
    "rows_for",
    "rows_room",
    "store_documents_fetch",
    "term_scores",
]

log = logging.getLogger(__name__)

FetchDocument = Callable[[str], Sequence[DocumentChunk]]
FetchDocuments = Callable[[Sequence[str]], Mapping[str, Sequence[DocumentChunk]]]
"""The stored chunks of each of the given sources (ordinal, breadcrumb, text without header)."""

MIN_TERMS = 2
"""The question's terms a row must hold to be added (one term alone is often a common word)."""
_MAX_CHUNKS = 2000
"""Chunks of one document read at most (a document longer than that shows its first tables)."""
_QUERY_LIMIT = 16_384
"""The most rows one Milvus query returns."""


ROW_LENGTH_K1 = 1.2
ROW_LENGTH_B = 0.75
"""BM25's usual ``k1`` / ``b``: how much a row's length beyond the average lowers its score."""


def term_scores(
    rows: Sequence[str], terms: Sequence[str], *, by_length: bool = False
) -> list[float]:
    """Each row's (or any text's) score: the sum, over the question's terms it holds, of the
    term's weight ``log((n + 1) / (rows holding it + 0.5))`` among the ``n`` rows; 0 for a row
    holding fewer than :data:`MIN_TERMS` of them (all of them, for a shorter question).

    ``by_length``: the sum scaled as BM25 scales a term held once, ``(k1 + 1) / (1 + k1 (1 - b
    + b len / mean len))``: of two rows holding the same terms the shorter one, whose subject
    they are, ranks first (an option's own row before a long row that mentions it).
    """
    held = [held_terms(row, terms) for row in rows]
    counts: dict[str, int] = {}
    for found in held:
        for term in found:
            counts[term] = counts.get(term, 0) + 1
    n = len(rows)
    weight = {t: math.log((n + 1) / (c + 0.5)) for t, c in counts.items()}
    least = min(MIN_TERMS, len(terms))
    scores = [sum(weight[t] for t in found) if len(found) >= least else 0.0 for found in held]
    if not by_length or not rows:
        return scores
    mean = sum(len(row) for row in rows) / n or 1.0
    k1, b = ROW_LENGTH_K1, ROW_LENGTH_B
    return [
        s * (k1 + 1) / (1 + k1 * (1 - b + b * len(row) / mean))
        for s, row in zip(scores, rows, strict=True)
    ]


def rows_for(
    content: str, tables: Sequence[Table], terms: Sequence[str], count: int, room: int | None = None
) -> str:
    """The text to append to a block showing ``content``: up to ``count`` rows of ``tables``
    that hold the most of ``terms`` and that ``content`` does not show, each table's part under
    its header, the whole at most ``room`` characters as the model reads it (quoted); "" when
    no row is added."""
    if count <= 0 or not terms:
        return ""
    shown = {line.strip() for line in content.splitlines()}
    places = [(t, r) for t, table in enumerate(tables) for r in range(len(table.rows))]
    scores = term_scores([tables[t].rows[r] for t, r in places], terms, by_length=True)
    ranked = sorted(
        (
            i
            for i, s in enumerate(scores)
            if s > 0 and tables[places[i][0]].rows[places[i][1]] not in shown
        ),
        key=lambda i: (-scores[i], i),
    )
    chosen: list[int] = []
    text = ""
    for index in ranked:
        if len(chosen) == count:
            break
        trial = _render(
            content, tables, sorted([*chosen, index], key=lambda i: places[i]), places, shown
        )
        if room is None or shown_size(f"{content.rstrip()}\n\n{trial}") <= room:
            chosen.append(index)
            text = trial
    return text


def _render(
    content: str,
    tables: Sequence[Table],
    chosen: Sequence[int],
    places: Sequence[tuple[int, int]],
    shown: set[str],
) -> str:
    parts: list[str] = [MARKER, ""]
    last_table = None
    for index in chosen:
        t, r = places[index]
        table = tables[t]
        if t != last_table:
            if last_table is not None:
                parts.append("")
            if table.header not in shown:
                parts += [table.header, table.separator]
            last_table = t
        parts.append(table.rows[r])
    return "\n".join(parts)


def add_table_rows(
    selection: EvidenceSelection,
    fetch: FetchDocument,
    count: int,
    room: int,
    query: str,
    without_tables: AbstractSet[str] = frozenset(),
) -> EvidenceSelection:
    """The selection with its first block showing up to ``count`` more table rows of its
    document (see the module docstring), within ``room`` characters as the model reads them.
    A document of ``without_tables`` (the catalog's: :meth:`.CatalogView.without_tables`) is
    not read: it has no row to add."""
    if count <= 0 or not selection.blocks:
        return selection
    best = selection.blocks[0]
    terms = query_terms(query)
    parsed = split_key(best.evidence_key)
    if not terms or parsed is None or parsed[0] in without_tables:
        return selection
    if shown_size(best.content) >= room:
        return selection
    try:
        chunks = fetch(parsed[0])
    except Exception as exc:  # more rows are a nicety, never a failure
        log.warning("table rows: %s not read: %s", parsed[0], exc)
        return selection
    tables = document_tables(chunks)
    if not tables:
        return selection
    added = rows_for(best.content, tables, terms, count, room)
    if not added:
        return selection
    grown = best.model_copy(update={"content": f"{best.content.rstrip()}\n\n{added}"})
    matched = selection.matched_first if selection.matched_first is not None else best
    return replace(selection, blocks=[grown, *selection.blocks[1:]], matched_first=matched)


def add_rows_for_agent(
    selection: EvidenceSelection,
    fetch: FetchDocument,
    settings: LookupSettings,
    query: str,
    without_tables: AbstractSet[str] = frozenset(),
    measure: PackMeasure | None = None,
) -> EvidenceSelection:
    """:func:`add_table_rows` with the lookup's settings: ``table_rows`` rows at most, within
    the room the context pack has for the first block (``measure``: the lookup's measured
    budget, :func:`.knee.agent_measure`; None: measured here)."""
    if settings.table_rows <= 0 or not selection.blocks:
        return selection
    room = agent_first_block_room(selection.blocks, settings, measure)
    return add_table_rows(selection, fetch, settings.table_rows, room, query, without_tables)


def rows_room(
    selection: EvidenceSelection,
    fetch: FetchDocument,
    settings: LookupSettings,
    query: str,
    without_tables: AbstractSet[str] = frozenset(),
    measure: PackMeasure | None = None,
) -> int:
    """The characters (as the model reads them) the rows add to the first block as matched:
    the room small-to-big leaves them when both are on (0: no row to add)."""
    grown = add_rows_for_agent(selection, fetch, settings, query, without_tables, measure)
    if grown is selection:
        return 0
    return shown_size(grown.blocks[0].content) - shown_size(selection.blocks[0].content)


def store_documents_fetch(
    client: Any, layout: Any, timeout: float | None, chunk_counts: Mapping[str, int] | None = None
) -> FetchDocuments:
    """A :data:`FetchDocuments` over a Milvus chunk collection, one query for all sources: by
    primary key when ``chunk_counts`` (the catalog's) knows every source's chunks (a key lookup,
    several times faster than a scan of the source field in Milvus Lite), else by source."""

    def fetch(sources: Sequence[str]) -> dict[str, list[DocumentChunk]]:
        fields = [layout.id_field, layout.content_field]
        if layout.metadata_field:
            fields.append(layout.metadata_field)
        counts = [min((chunk_counts or {}).get(s, 0), _MAX_CHUNKS) for s in sources]
        if all(counts):
            keys = [f"{s}#{i}" for s, n in zip(sources, counts, strict=True) for i in range(n)]
            where = condition(layout.id_field, keys)
        elif layout.source_field:
            where = condition(layout.source_field, list(sources))
        else:
            where = " or ".join(f'{layout.id_field} like "{_like(s)}#%"' for s in sources)
        limit = min(_QUERY_LIMIT, _MAX_CHUNKS * len(sources))
        rows = client.query(
            layout.name, filter=where, output_fields=fields, limit=limit, timeout=timeout
        )
        wanted = set(sources)
        out: dict[str, list[DocumentChunk]] = {}
        for key, chunk in stored_chunks(rows, layout).items():
            parsed = split_key(key)
            if parsed is not None and parsed[0] in wanted:
                out.setdefault(parsed[0], []).append((chunk.ordinal, chunk.breadcrumb, chunk.text))
        return out

    return fetch


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "\\%")


class DocumentReads:
    """One lookup's reads of whole documents: each document read from the store once, whichever
    step asks for it first (the option rows of the first block's document, the best chunks of
    the shown documents).

    Example:
        >>> calls = []
        >>> def fetch(sources):
        ...     calls.append(list(sources))
        ...     return {s: [(0, s, "text")] for s in sources if s != "gone.md"}
        >>> reads = DocumentReads(fetch)
        >>> reads.one("a.md"), sorted(reads.many(["a.md", "b.md", "gone.md"]))
        ([(0, 'a.md', 'text')], ['a.md', 'b.md', 'gone.md'])
        >>> calls
        [['a.md'], ['b.md', 'gone.md']]
    """

    def __init__(self, fetch: FetchDocuments) -> None:
        self._fetch = fetch
        self._read: dict[str, Sequence[DocumentChunk]] = {}

    def many(self, sources: Sequence[str]) -> dict[str, Sequence[DocumentChunk]]:
        """The stored chunks of each source (none for a source the store does not hold)."""
        missing = [s for s in dict.fromkeys(sources) if s not in self._read]
        if missing:
            found = self._fetch(missing)
            self._read |= {s: found.get(s, []) for s in missing}
        return {s: self._read[s] for s in sources}

    def one(self, source: str) -> Sequence[DocumentChunk]:
        """The stored chunks of ``source``."""
        return self.many([source])[source]
