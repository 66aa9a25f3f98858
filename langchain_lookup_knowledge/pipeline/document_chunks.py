"""Best chunks of the first document: the message's spare room shows, of the document of its first
block, the chunks that hold the most of the question.

The hybrid search ranks chunks across the knowledge base, and of a document the message shows
the one or two chunks that ranked: often its introduction, an FAQ entry or a heading that says
"do as follows", while the line that answers a how-to question (a system variable, a statement,
a command) is in another chunk of the same document. With ``best_document_chunks`` set, the
first block's document gets up to that many more of its chunks (:func:`add_document_chunks`
can serve more documents; a lookup serves one: :data:`AGENT_DOCUMENTS`):

* the document's chunks are read from the store (one query, by primary key when the catalog
  knows how many chunks it has; the option rows of :mod:`.table_rows` read the same document:
  once for both); each is scored by the question's terms its heading path and text hold, each
  term weighted by how few of the document's chunks hold it (:func:`.table_rows.term_scores`:
  a term every chunk holds, such as the document's own name, tells none apart); a chunk
  holding fewer than two of them is never added, nor one a shown block is or already shows;
* of each document served (in the order of its first shown block), its best
  ``best_document_chunks`` chunks best first, each added to that block when it fits, in
  document order (adjacent chunks joined, a ``…[truncated]`` line between others:
  :func:`.expand.compose`);
* only in the room the context budget has left once every shown block is shown whole
  (:func:`.knee.agent_spare_room`): the message shows everything it showed without them, uncut.
  A chunk that does not fit whole shows the run of its lines holding the most of the question's
  terms that fits (:func:`excerpt`, :data:`MIN_EXCERPT` characters at least), between
  ``…[truncated]`` lines; one that does not fit so either is left out.

The dense cosine of a chunk to the question is no part of the score: on the how-to dev sets it
ranked the answering chunk of its document lower than the weighted terms did (the answering
chunk is mostly code, a command or a table, far from the question's wording).

A block keeps its identity, score and reasons; the evidence decision still reads the matched
chunks (:attr:`.EvidenceSelection.matched_blocks`). A failed read adds nothing.

Example:
    >>> chunks = [(0, "Follower Read", "Follower Read spreads the read load of the leader."),
    ...           (1, "Follower Read > Usage", "Set `tidb_replica_read` to read followers."),
    ...           (2, "Follower Read > Usage", "Follower Read needs no restart.")]
    >>> best_chunks(chunks, ["follower", "read", "set"], exclude={0}, count=1)
    [(1, 'Set `tidb_replica_read` to read followers.')]
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.core.term_match import query_terms
from langchain_lookup_knowledge.knowledge.document_tables import DocumentChunk
from langchain_lookup_knowledge.pipeline.context_pack import PackMeasure
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.excerpt import MARKER, held_terms
from langchain_lookup_knowledge.pipeline.expand import compose, shown_size, split_key
from langchain_lookup_knowledge.pipeline.knee import agent_spare_room, knee_count
from langchain_lookup_knowledge.pipeline.table_rows import (
    FetchDocuments,
    store_documents_fetch,
    term_scores,
)
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "add_document_chunks",
    "best_chunks",
    "document_chunks_for_agent",
    "store_documents_fetch",
]

log = logging.getLogger(__name__)

AGENT_DOCUMENTS = 1
"""How many of the shown documents a lookup adds best chunks to: the first block's. Measured on
the how-to sets (APISIX en and TiDB zh, dev and test, 80 questions), both with ``table_rows=3``:
the first block's document only and every shown document show the same 9 answers more than
neither, none lost; a TiDB dev lookup's p50 is 5 ms over neither with the first block's
document, 18 ms with every shown document read and scored."""

MIN_EXCERPT = 120
"""The least room worth an excerpt of a chunk that does not fit whole (a block's floor)."""


def best_chunks(
    chunks: Sequence[DocumentChunk], terms: Sequence[str], exclude: Collection[int], count: int
) -> list[tuple[int, str]]:
    """The ``count`` chunks of one document (ordinal and text) that hold the most of ``terms``,
    weighted among all its chunks, best first (the earlier chunk on a tie), none of ``exclude``
    (ordinals) and none holding fewer than two of the terms."""
    if count <= 0 or not terms or not chunks:
        return []
    scores = term_scores([f"{breadcrumb}\n{text}" for _, breadcrumb, text in chunks], terms)
    ranked = sorted(
        (i for i, score in enumerate(scores) if score > 0 and chunks[i][0] not in exclude),
        key=lambda i: (-scores[i], chunks[i][0]),
    )
    return [(chunks[i][0], chunks[i][2]) for i in ranked[:count]]


def _compose(parts: Mapping[int, str]) -> str:
    """:func:`.expand.compose`, one marker line where a cut chunk's own marker meets its."""
    return compose(parts).replace(f"{MARKER}\n\n{MARKER}", MARKER)


def excerpt(text: str, terms: Sequence[str], room: int) -> str | None:
    """The run of ``text``'s lines holding the most of ``terms`` (the earliest on a tie) that
    fits ``room`` characters as the model reads it, a ``…[truncated]`` line for the lines left
    out before and after it; None when no line holding a term fits.

    Example:
        >>> text = "Intro line one.\\nAnother line.\\nSet `tidb_replica_read` for follower reads."
        >>> print(excerpt(text, ["follower", "read"], 64))
        …[truncated]
        Set `tidb_replica_read` for follower reads.
    """
    lines = text.split("\n")
    hits = [len(held_terms(line, terms)) for line in lines]
    sizes = [shown_size(line) + 1 for line in lines]  # quoted, with its newline
    marker = shown_size(MARKER) + 1
    best: tuple[int, int, int] | None = None  # hits, start, end
    for start in range(len(lines)):
        total = (marker if start > 0 else 0) + marker
        got = 0
        for end in range(start + 1, len(lines) + 1):
            total += sizes[end - 1]
            used = total - (marker if end == len(lines) else 0)
            if used > room:
                break
            got += hits[end - 1]
            if got > 0 and (best is None or got > best[0]):
                best = (got, start, end)
    if best is None:
        return None
    _, start, end = best
    shown = ([MARKER] if start > 0 else []) + lines[start:end]
    return "\n".join(shown + ([MARKER] if end < len(lines) else []))


def _fitted(
    parts: Mapping[int, str], ordinal: int, text: str, terms: Sequence[str], left: int, size: int
) -> dict[int, str] | None:
    """``parts`` with the :func:`excerpt` of the chunk at ``ordinal`` that adds at most ``left``
    characters to the block's ``size`` (None: none does)."""
    room = left
    for _ in range(3):  # the joins and markers around it: measured, then the room shrunk
        if room < MIN_EXCERPT:
            return None
        cut = excerpt(text, terms, room)
        if cut is None:
            return None
        trial = {**parts, ordinal: cut}
        over = shown_size(_compose(trial)) - size - left
        if over <= 0:
            return trial
        room -= over
    return None


def _first_blocks(blocks: Sequence[EvidenceBlock]) -> dict[str, int]:
    """Each shown document's source and the index of its first block."""
    first: dict[str, int] = {}
    for index, block in enumerate(blocks):
        parsed = split_key(block.evidence_key)
        if parsed is not None:
            first.setdefault(parsed[0], index)
    return first


def add_document_chunks(
    selection: EvidenceSelection,
    fetch: FetchDocuments,
    count: int,
    room: int,
    query: str,
    shown: int | None = None,
    documents: int | None = None,
) -> EvidenceSelection:
    """The selection with the first block of each of its first ``shown`` blocks' documents (the
    first ``documents`` of them, in the order of their first block) showing up to ``count``
    more chunks of it (see the module docstring), all of them adding at most ``room``
    characters as the model reads them."""
    blocks = selection.blocks[: len(selection.blocks) if shown is None else shown]
    terms = query_terms(query)
    if count <= 0 or room <= 0 or not blocks or not terms:
        return selection
    first = _first_blocks(blocks)
    if documents is not None:
        first = dict(list(first.items())[:documents])
    if not first:
        return selection
    try:
        read = fetch(list(first))
    except Exception as exc:  # more chunks are a nicety, never a failure
        log.warning("best document chunks: %s not read: %s", list(first), exc)
        return selection
    shown_ordinals: dict[str, set[int]] = {}
    for block in blocks:
        parsed = split_key(block.evidence_key)
        if parsed is not None:
            shown_ordinals.setdefault(parsed[0], set()).add(parsed[1])
    grown = list(selection.blocks)
    matched = {i: selection.blocks[i] for i in first.values()}
    left = room
    for source, index in first.items():
        block = grown[index]
        parsed = split_key(block.evidence_key)
        chunks = read.get(source) or []
        if parsed is None or not chunks:
            continue
        parts = {parsed[1]: block.content}
        size = shown_size(block.content)
        for ordinal, text in best_chunks(chunks, terms, shown_ordinals[source], count):
            if not text.strip() or any(text.strip() in b.content for b in grown[: len(blocks)]):
                continue  # a block shows it already (grown by small-to-big, say)
            whole = {**parts, ordinal: text}
            trial = whole if shown_size(_compose(whole)) - size <= left else None
            if trial is None:  # too long whole: the run of its lines holding the question
                trial = _fitted(parts, ordinal, text, terms, left, size)
            if trial is not None:
                added = shown_size(_compose(trial)) - size
                parts, left, size = trial, left - added, size + added
        if len(parts) > 1:
            grown[index] = block.model_copy(update={"content": _compose(parts)})
    changed = [i for i in first.values() if grown[i] is not selection.blocks[i]]
    if not changed:
        return selection
    matched_first = selection.matched_first
    if 0 in changed and matched_first is None:
        matched_first = matched[0]
    later = dict(selection.matched_later)
    for i in changed:
        if i > 0:
            later.setdefault(i, matched[i])
    return replace(selection, blocks=grown, matched_first=matched_first, matched_later=later)


def document_chunks_for_agent(
    selection: EvidenceSelection,
    fetch: FetchDocuments,
    settings: LookupSettings,
    query: str,
    measure: PackMeasure | None = None,
) -> EvidenceSelection:
    """:func:`add_document_chunks` with the lookup's settings: ``best_document_chunks`` chunks
    of the first block's document at most (:data:`AGENT_DOCUMENTS`), the blocks above the
    relevance knee counted as shown, within the room the context pack leaves when it shows them
    all whole."""
    if settings.best_document_chunks <= 0 or not selection.blocks:
        return selection
    room = agent_spare_room(selection.blocks, settings, measure)
    shown = knee_count([b.score for b in selection.blocks], settings.relevance_knee)
    return add_document_chunks(
        selection,
        fetch,
        settings.best_document_chunks,
        room,
        query,
        shown=shown,
        documents=AGENT_DOCUMENTS,
    )
