"""What a record keeps of the user's question: ``record_query_text`` = full | hash | none.

Under ``hash`` and ``none`` the ``query`` column is empty, ``retrieval_details`` loses the question
(``query_transform.query``) and the query-term lists of hit reasons and rerank boosts (they quote
the question's words); ``hash`` keeps a SHA-256 of the normalized question in ``query_hash``, so
repeats of one question still count as one. L0 hints (catalog titles, keywords, domains, entities
the question matched) are the knowledge base's own vocabulary and stay.

Example:
    >>> policy = QueryTextPolicy("hash")
    >>> query, details = policy.apply("Disk  FULL", {"query_transform": {"query": "Disk  FULL"}})
    >>> query, details["query_transform"]["query"]
    ('', None)
    >>> policy.hash("disk full") == query_hash("Disk FULL")
    True
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any, Literal, cast, get_args

QueryTextMode = Literal["full", "hash", "none"]
QUERY_TERM_KINDS = frozenset({"query_term_coverage", "title_term_overlap"})
"""Hit-reason kinds whose detail lists the question's own terms (cut under hash and none)."""


def normalize_query(text: str) -> str:
    """The form a question is hashed in: case-folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def query_hash(text: str) -> str:
    """SHA-256 (hex) of the normalized question: equal for repeats of one question."""
    return hashlib.sha256(normalize_query(text).encode("utf-8")).hexdigest()


def _cut_terms(detail: str) -> str:
    """``"4/8 query terms: disk, full"`` -> ``"4/8 query terms"``."""
    return detail.split(":", 1)[0]


class QueryTextPolicy:
    """Applies one ``record_query_text`` mode to a record before it is written."""

    def __init__(self, mode: str = "full") -> None:
        if mode not in get_args(QueryTextMode):
            raise ValueError(f"record_query_text must be full, hash or none (got {mode!r})")
        self.mode = cast(QueryTextMode, mode)

    def hash(self, text: str) -> str | None:
        """The ``query_hash`` column: None under ``none`` (nothing of the question is kept)."""
        return None if self.mode == "none" else query_hash(text)

    def apply(self, query: str, details: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The ``query`` column and the ``retrieval_details`` to store under this mode."""
        if self.mode == "full":
            return query, details
        scrubbed = copy.deepcopy(details)
        scrubbed["query_text"] = self.mode
        transform = scrubbed.get("query_transform")
        if isinstance(transform, dict) and "query" in transform:
            transform["query"] = None
        for entry in scrubbed.get("rerank_trace") or []:
            for boost in entry.get("boosts") or []:
                if boost.get("kind") in QUERY_TERM_KINDS:
                    boost["detail"] = _cut_terms(str(boost.get("detail", "")))
        for block in scrubbed.get("evidence_blocks") or []:
            reasons = block.get("hit_reasons") or []
            block["hit_reasons"] = [
                _cut_terms(r) if r.split(":", 1)[0] in QUERY_TERM_KINDS else r for r in reasons
            ]
        return "", scrubbed
