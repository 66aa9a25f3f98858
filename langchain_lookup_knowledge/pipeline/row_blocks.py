"""A table row's own chunk is no block when a better block of its document already shows it.

With ``table_row_chunks``, a row of a table is indexed twice: inside the table chunk that holds
it and as a chunk of its own (:mod:`..knowledge.row_chunks`). When the table chunk ranks above
the row chunk, the row chunk would show the agent a row it has just read: it is dropped (and
counted), before the per-document cap, so it takes no place of its document's. A row chunk that
ranks first stays: it is what the question matched, and the table chunk after it still shows
the table's other rows.

Example:
    >>> from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
    >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.5, similarity=0.5, formula="")
    >>> head = "| Name | Description |\\n|---|---|\\n"
    >>> table = Candidate(evidence_key="a.md#1", source="a.md", rank=1, score_label=label,
    ...     content=head + "| rate | Per second. |\\n| burst | Extra. |")
    >>> row = Candidate(evidence_key="a.md#7", source="a.md", rank=2, score_label=label,
    ...     content=head + "| burst | Extra. |", metadata={"table_row": True})
    >>> [c.evidence_key for c in without_shown_rows([table, row], lambda c: c)]
    ['a.md#1']
    >>> [c.evidence_key for c in without_shown_rows([row, table], lambda c: c)]
    ['a.md#7', 'a.md#1']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar

from langchain_lookup_knowledge.core.models import Candidate
from langchain_lookup_knowledge.knowledge.row_chunks import is_row_chunk, row_line

__all__ = ["without_shown_rows"]

_T = TypeVar("_T")


def without_shown_rows(items: Sequence[_T], candidate_of: Callable[[_T], Candidate]) -> list[_T]:
    """``items`` (best first) without the row chunks whose row a better item of the same
    document shows (a line of its content). Without any row chunk (``table_row_chunks`` off,
    the default), ``items`` as they are: no content is read."""
    if not any(is_row_chunk(candidate_of(item).metadata) for item in items):
        return list(items)
    shown: dict[str, set[str]] = defaultdict(set)
    kept: list[_T] = []
    for item in items:
        candidate = candidate_of(item)
        row = is_row_chunk(candidate.metadata)
        if row and row_line(candidate.content) in shown[candidate.source]:
            continue
        kept.append(item)
        shown[candidate.source].update(line.strip() for line in candidate.content.splitlines())
    return kept
