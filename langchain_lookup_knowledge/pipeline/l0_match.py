"""What L0 found for one query (:class:`L0Match`) and the L1 filter it implies.

Example:
    >>> single_domain(L0Hints(domains=["kubernetes"]))
    'kubernetes'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_lookup_knowledge.core.models import L0Hints

__all__ = ["KINDS", "L0Match", "single_domain"]

KINDS: tuple[str, ...] = ("title", "keyword", "alias", "entity", "category")
"""Kinds of L0 match, in the order they are reported."""


@dataclass(frozen=True)
class L0Match:
    """What L0 found for one query.

    Attributes:
        hints: The structured hint data for the result contract and the trace.
        matched: ``source -> [(kind, term), ...]`` for every matched document; kind is one of
            :data:`KINDS`. A ``("category", c)`` pair is added to a matched document when its
            category was also named in the query; a category named alone adds a domain, not
            sources.
        named_domains: Categories named directly in the query (a subset of ``hints.domains``).
    """

    hints: L0Hints = field(default_factory=L0Hints)
    matched: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    named_domains: tuple[str, ...] = ()

    def kinds_for(self, source: str) -> dict[str, list[str]]:
        """``kind -> [terms]`` that matched ``source`` (empty when L0 did not match it)."""
        kinds: dict[str, list[str]] = {}
        for kind, term in self.matched.get(source, ()):
            kinds.setdefault(kind, []).append(term)
        return kinds


def single_domain(hints: L0Hints) -> str | None:
    """The domain to filter L1 on: the only nonblank domain, else ``None`` (0 or 2+ domains).

    Example:
        >>> single_domain(L0Hints(domains=["kubernetes"]))
        'kubernetes'
        >>> single_domain(L0Hints(domains=["kubernetes", "storage"])) is None
        True
    """
    domains = {d for d in hints.domains if d.strip()}
    return domains.pop() if len(domains) == 1 else None
