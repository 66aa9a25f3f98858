"""Small-to-big: the best block grows to more of its document.

Retrieval matches small chunks (they fit the embedder's window); a how-to answer often sits
elsewhere in the document than the chunk that matched best: in the chunk after it (the step's
description matches, its config follows), or in another chunk the search also found (the
attribute table under the examples) that the per-document cap kept from being a block of its own.
The first evidence block therefore grows (opt-in: ``section_expand_chars``, 0 by default), up to
that many characters as the model reads them (quoted lines) and never past what the context pack
can show of it (the budget less the other shown blocks' headers and content floors:
:func:`.knee.agent_first_block_room`, so the pack never cuts what was grown), in this order:

1. its document's other matches (:attr:`.EvidenceSelection.also_matched`, best first) whose score
   is at least ``min_share`` of the block's (the relevance knee: what is shown as a block of its
   own must score that much too);
2. the chunks before and after the matched one in the same document under the same top heading
   (:func:`section_of`), nearest first, the next one before the previous one, fetched from the
   store by evidence key (``<source>#<ordinal>``, one primary-key query per lookup).

The parts are shown in document order; adjacent chunks are joined without the sentences that
overlapping chunks repeat, and a ``…[truncated]`` line stands for the document text between
parts that are not adjacent. A chunk another block shows is not repeated. The block keeps its
identity, score and reasons; only its content grows. The evidence decision still reads the
matched chunk (:attr:`.EvidenceSelection.matched_blocks`): more text to read is no stronger
match. A failed fetch leaves the neighbours out.

Example:
    >>> join_chunks("Set the key. Then restart.", "Then restart. Check the log.")
    'Set the key. Then restart. Check the log.'
    >>> print(compose({4: "the attribute table", 1: "the example", 2: "its config"}))
    the example
    <BLANKLINE>
    its config
    <BLANKLINE>
    …[truncated]
    <BLANKLINE>
    the attribute table
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.knowledge.chunking import BREADCRUMB_SEPARATOR
from langchain_lookup_knowledge.knowledge.row_chunks import is_row_chunk
from langchain_lookup_knowledge.pipeline.context_pack import PackMeasure
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.excerpt import MARKER
from langchain_lookup_knowledge.pipeline.knee import agent_first_block_room
from langchain_lookup_knowledge.pipeline.message import quote_text
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import chunk_ordinal, source_of_chunk_key

log = logging.getLogger(__name__)

MAX_REACH = 4
"""Neighbours fetched on each side of the best chunk (a section rarely spans more)."""
_MIN_OVERLAP = 12


@dataclass(frozen=True)
class Neighbour:
    """A stored chunk next to the best one."""

    ordinal: int
    breadcrumb: str
    text: str


Fetch = Callable[[Sequence[str]], Mapping[str, Neighbour]]


def split_key(evidence_key: str) -> tuple[str, int] | None:
    """``("a/b.md", 3)`` for ``"a/b.md#3"``; None when the key has no ordinal."""
    ordinal = chunk_ordinal(evidence_key)
    return None if ordinal < 0 else (source_of_chunk_key(evidence_key), ordinal)


def neighbour_keys(evidence_key: str, reach: int = MAX_REACH) -> list[str]:
    """The evidence keys ``reach`` ordinals before and after ``evidence_key``.

    Example:
        >>> neighbour_keys("k8s/node.md#1", 2)
        ['k8s/node.md#0', 'k8s/node.md#2', 'k8s/node.md#3']
    """
    parsed = split_key(evidence_key)
    if parsed is None:
        return []
    source, ordinal = parsed
    return [
        f"{source}#{o}" for o in range(max(0, ordinal - reach), ordinal + reach + 1) if o != ordinal
    ]


def section_of(breadcrumb: str) -> tuple[str, ...]:
    """The section a chunk belongs to: its document title and top heading (subsections of one
    section are one section).

    Example:
        >>> section_of("limit-req > Examples > Rate limit by IP")
        ('limit-req', 'Examples')
    """
    return tuple(breadcrumb.split(BREADCRUMB_SEPARATOR)[:2])


def join_chunks(first: str, second: str) -> str:
    """``first`` then ``second`` without what ``second`` repeats of ``first``'s end."""
    a, b = first.rstrip(), second.lstrip()
    longest = min(len(a), len(b))
    for size in range(longest, _MIN_OVERLAP - 1, -1):
        if a.endswith(b[:size]):
            return a + b[size:]
    return f"{a}\n\n{b}"


def shown_size(text: str) -> int:
    """Characters of ``text`` as the model reads it (every line quoted)."""
    return len(quote_text(text))


def compose(parts: Mapping[int, str]) -> str:
    """Chunks by ordinal as one text, in document order: adjacent chunks joined
    (:func:`join_chunks`), a ``…[truncated]`` line between chunks that are not adjacent."""
    text, last = "", None
    for ordinal in sorted(parts):
        chunk = parts[ordinal]
        if last is None:
            text = chunk
        elif ordinal == last + 1:
            text = join_chunks(text, chunk)
        else:
            text = f"{text.rstrip()}\n\n{MARKER}\n\n{chunk.lstrip()}"
        last = ordinal
    return text


def _grow_parts(
    parts: dict[int, str],
    start: int,
    section: tuple[str, ...],
    neighbours: Mapping[int, Neighbour],
    limit: int,
) -> dict[int, str]:
    """``parts`` grown by the neighbours of ``start`` in ``section``, nearest first, next first,
    while the whole fits ``limit``; a side stops at the first chunk it cannot take."""
    low = high = start
    open_sides = {1, -1}
    while open_sides:
        for side in (1, -1):
            if side not in open_sides:
                continue
            ordinal = high + 1 if side == 1 else low - 1
            neighbour = neighbours.get(ordinal)
            if neighbour is None or section_of(neighbour.breadcrumb) != section:
                open_sides.discard(side)
                continue
            if ordinal not in parts:
                grown = {**parts, ordinal: neighbour.text}
                if shown_size(compose(grown)) > limit:
                    open_sides.discard(side)
                    continue
                parts = grown
            if side == 1:
                high = ordinal
            else:
                low = ordinal
    return parts


def grow(block: EvidenceBlock, neighbours: Mapping[int, Neighbour], limit: int) -> str:
    """The block's content grown to neighbours of its section, next first, within ``limit``."""
    parsed = split_key(block.evidence_key)
    if parsed is None or shown_size(block.content) >= limit:
        return block.content
    parts = {parsed[1]: block.content}
    return compose(_grow_parts(parts, parsed[1], section_of(block.breadcrumb), neighbours, limit))


def _with_other_matches(
    best: EvidenceBlock, others: Sequence[EvidenceBlock], min_score: float, limit: int
) -> dict[int, str]:
    """The best block's chunk and its document's other matches (best first, at least
    ``min_score``) that fit ``limit``, by ordinal."""
    parsed = split_key(best.evidence_key)
    if parsed is None:
        return {}
    parts = {parsed[1]: best.content}
    for other in others:
        key = split_key(other.evidence_key)
        if key is None or key[0] != parsed[0] or key[1] in parts or other.score < min_score:
            continue
        grown = {**parts, key[1]: other.content}
        if shown_size(compose(grown)) <= limit:
            parts = grown
    return parts


def expand_selection(
    selection: EvidenceSelection, fetch: Fetch, limit: int, *, min_share: float = 0.0
) -> EvidenceSelection:
    """The selection with its first block grown (see the module docstring); ``min_share``: the
    share of the block's score another match of its document needs to be shown in it."""
    if limit <= 0 or not selection.blocks:
        return selection
    best = selection.blocks[0]
    parsed = split_key(best.evidence_key)
    if parsed is None or shown_size(best.content) >= limit:
        return selection
    parts = _with_other_matches(best, selection.also_matched, min_share * best.score, limit)
    keys = neighbour_keys(best.evidence_key)
    if shown_size(compose(parts)) < limit and keys:
        try:
            rows = fetch(keys)
        except Exception as exc:  # growing is a nicety, never a failure: no neighbours then
            log.warning("small-to-big: neighbours of %s not read: %s", best.evidence_key, exc)
            rows = {}
        shown = {b.evidence_key for b in selection.blocks[1:]}  # already shown: not twice
        by_ordinal = {n.ordinal: n for k, n in rows.items() if k not in shown}
        parts = _grow_parts(parts, parsed[1], section_of(best.breadcrumb), by_ordinal, limit)
    content = compose(parts)
    if content == best.content:
        return selection
    grown = best.model_copy(update={"content": content})
    return replace(selection, blocks=[grown, *selection.blocks[1:]], matched_first=best)


def expand_for_agent(
    selection: EvidenceSelection,
    fetch: Fetch,
    settings: LookupSettings,
    reserve: int = 0,
    measure: PackMeasure | None = None,
) -> EvidenceSelection:
    """:func:`expand_selection` with the lookup's settings: up to ``section_expand_chars``, never
    past the room the context pack has for the first block less ``reserve`` (what is to be
    added after it: :mod:`.table_rows`), other matches down to the relevance knee."""
    if settings.section_expand_chars <= 0 or not selection.blocks:
        return selection
    room = agent_first_block_room(selection.blocks, settings, measure) - reserve
    limit = min(settings.section_expand_chars, room)
    return expand_selection(selection, fetch, limit, min_share=settings.relevance_knee)


def stored_chunks(rows: Iterable[Mapping[str, Any]], layout: Any) -> dict[str, Neighbour]:
    """Rows of a Milvus chunk collection (key, content, metadata) by evidence key: each chunk's
    ordinal, breadcrumb and text without its header (``body_offset``); a row whose key is not
    ``source#ordinal``, and a table row's own chunk (:mod:`.row_chunks`), are left out."""
    out: dict[str, Neighbour] = {}
    for row in rows:
        key = str(row.get(layout.id_field))
        parsed = split_key(key)
        if parsed is None:
            continue
        metadata = row.get(layout.metadata_field) if layout.metadata_field else None
        metadata = metadata if isinstance(metadata, dict) else {}
        if is_row_chunk(metadata):  # a table's row again, not the document's text
            continue
        content = str(row.get(layout.content_field) or "")
        offset = metadata.get("body_offset")
        if isinstance(offset, int) and 0 < offset < len(content):
            content = content[offset:]
        out[key] = Neighbour(parsed[1], str(metadata.get("breadcrumb") or ""), content)
    return out


def store_fetch(client: Any, layout: Any, timeout: float | None) -> Fetch:
    """A :data:`Fetch` over a Milvus chunk collection (one query by primary keys)."""

    def fetch(keys: Sequence[str]) -> dict[str, Neighbour]:
        fields = [layout.id_field, layout.content_field]
        if layout.metadata_field:
            fields.append(layout.metadata_field)
        rows = client.query(
            layout.name,
            filter=condition(layout.id_field, list(keys)),
            output_fields=fields,
            timeout=timeout,
        )
        return stored_chunks(rows, layout)

    return fetch
