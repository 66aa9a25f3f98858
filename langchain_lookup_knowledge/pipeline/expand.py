"""Small-to-big: the best block grows to its neighbours in the same section.

Retrieval matches small chunks (they fit the embedder's window); a how-to answer often sits in
the chunk after the one that matched (the step's description matches, its config follows). The
first evidence block therefore reads its section around the match: the chunks before and after
it in the same document under the same top heading (:func:`section_of`), fetched from the store
by evidence key (``<source>#<ordinal>``, one primary-key query per lookup), joined without the
sentences that overlapping chunks repeat, up to ``section_expand_chars`` characters (opt-in:
0 by default); a chunk another block shows is not repeated. The block keeps its
identity, score and reasons; only its content grows. A failed fetch leaves the block as it was.

Example:
    >>> join_chunks("Set the key. Then restart.", "Then restart. Check the log.")
    'Set the key. Then restart. Check the log.'
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.knowledge.chunking import BREADCRUMB_SEPARATOR
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
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


def grow(block: EvidenceBlock, neighbours: Mapping[int, Neighbour], limit: int) -> str:
    """The block's content grown to neighbours of its section, next first, within ``limit``."""
    parsed = split_key(block.evidence_key)
    text = block.content
    if parsed is None or len(text) >= limit:
        return text
    low = high = parsed[1]
    section = section_of(block.breadcrumb)
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
            pair = (text, neighbour.text) if side == 1 else (neighbour.text, text)
            merged = join_chunks(*pair)
            if len(merged) > limit:
                open_sides.discard(side)
                continue
            text = merged
            if side == 1:
                high = ordinal
            else:
                low = ordinal
    return text


def expand_selection(selection: EvidenceSelection, fetch: Fetch, limit: int) -> EvidenceSelection:
    """The selection with its first block grown to its section (see the module docstring)."""
    if limit <= 0 or not selection.blocks:
        return selection
    best = selection.blocks[0]
    keys = neighbour_keys(best.evidence_key)
    if not keys or len(best.content) >= limit:
        return selection
    try:
        rows = fetch(keys)
    except Exception as exc:  # the block as it was: growing is a nicety, never a failure
        log.warning("small-to-big: neighbours of %s not read: %s", best.evidence_key, exc)
        return selection
    shown = {b.evidence_key for b in selection.blocks[1:]}  # already shown: not twice
    by_ordinal = {n.ordinal: n for k, n in rows.items() if k not in shown}
    content = grow(best, by_ordinal, limit)
    if content == best.content:
        return selection
    grown = best.model_copy(update={"content": content})
    return replace(selection, blocks=[grown, *selection.blocks[1:]])


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
        out: dict[str, Neighbour] = {}
        for row in rows:
            key = str(row.get(layout.id_field))
            parsed = split_key(key)
            metadata = row.get(layout.metadata_field) if layout.metadata_field else None
            metadata = metadata if isinstance(metadata, dict) else {}
            if parsed is None:
                continue
            content = str(row.get(layout.content_field) or "")
            offset = metadata.get("body_offset")
            if isinstance(offset, int) and 0 < offset < len(content):
                content = content[offset:]
            out[key] = Neighbour(parsed[1], str(metadata.get("breadcrumb") or ""), content)
        return out

    return fetch
