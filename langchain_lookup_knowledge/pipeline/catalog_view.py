"""What L0 reads of the catalog for one lookup: the entries in its scope, and their matcher.

Example:
    >>> MATCHER_SCOPES
    32
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.l0 import L0Matcher

if TYPE_CHECKING:
    pass

__all__ = ["MATCHER_SCOPES", "CatalogView"]


MATCHER_SCOPES = 32


class CatalogView:
    """One load of the catalog and the L0 matchers built over it, one per scope (the most
    recent :data:`MATCHER_SCOPES`)."""

    def __init__(self, entries: list[CatalogEntry]) -> None:
        self.entries = entries
        self._matchers: dict[str | None, L0Matcher] = {}  # most recently used last
        self._lock = threading.Lock()
        self._chunk_counts: dict[str, int] | None = None
        self._without_tables: frozenset[str] | None = None

    def chunk_counts(self) -> dict[str, int]:
        """Each document's stored chunks (``<source>#0`` to ``#count - 1``), by source; made
        once per load (two threads may both make it: the same dict)."""
        if self._chunk_counts is None:
            self._chunk_counts = {e.source: e.chunk_count for e in self.entries}
        return self._chunk_counts

    def without_tables(self) -> frozenset[str]:
        """The documents ingest counted no markdown table in (an entry without the count is not
        one of them: its document may hold tables); made once per load."""
        if self._without_tables is None:
            self._without_tables = frozenset(e.source for e in self.entries if e.tables == 0)
        return self._without_tables

    def matcher(self, key: str | None) -> L0Matcher | None:
        """The matcher of scope ``key``, if built."""
        with self._lock:
            found = self._matchers.pop(key, None)
            if found is not None:
                self._matchers[key] = found
            return found

    def keep(self, key: str | None, matcher: L0Matcher) -> L0Matcher:
        """Keep ``matcher`` for scope ``key`` (the least recently used beyond the bound go)."""
        with self._lock:
            self._matchers.pop(key, None)
            self._matchers[key] = matcher
            while len(self._matchers) > MATCHER_SCOPES:
                self._matchers.pop(next(iter(self._matchers)))
        return matcher

    def scopes(self) -> list[str | None]:
        """The scopes with a matcher, least recently used first."""
        with self._lock:
            return list(self._matchers)
