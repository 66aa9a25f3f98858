"""``completenessHint``: how complete and trustworthy the evidence looks, in one sentence for
the agent, from the decision's ``relevanceLevel`` and what the context pack shows."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.core.models import (
    ContextPack,
    EvidenceBlock,
    L0Hints,
    RelevanceLevel,
)

__all__ = ["completeness_hint"]

_MAX_NAMED_SOURCES = 3


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _named(sources: Sequence[str]) -> str:
    shown = ", ".join(safe_name(s) for s in sources[:_MAX_NAMED_SOURCES])
    more = len(sources) - _MAX_NAMED_SOURCES
    return shown + (f" and {more} more" if more > 0 else "")


def completeness_hint(
    blocks: Sequence[EvidenceBlock],
    *,
    relevance: RelevanceLevel,
    l0_hints: L0Hints | None = None,
    context_pack: ContextPack | None = None,
) -> str:
    """One sentence telling the agent how complete and trustworthy the evidence looks.

    Args:
        blocks: The final evidence blocks.
        relevance: The decision's ``relevanceLevel`` of the evidence.
        l0_hints: The L0 hints of the query, to say whether evidence agrees with the catalog.
        context_pack: The packed context, to say whether content was cut or sources omitted.

    Example:
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", content="x")
        >>> completeness_hint([block], relevance="high")
        '1 block from 1 document; evidence is strong.'
    """
    if not blocks:
        message = "No knowledge evidence found; do not answer from the knowledge base"
        if l0_hints is not None and l0_hints.matched_sources:
            related = _named(l0_hints.matched_sources)
            message += f"; the catalog lists related documents ({related}), but as hints only"
        return message + "."

    sources = list(dict.fromkeys(b.source for b in blocks))
    shown, shown_sources, weaker, budget_omitted = len(blocks), sources, 0, []
    if context_pack is not None:
        budget_omitted = context_pack.omitted_sources
        if context_pack.blocks or context_pack.left_out:  # what the text shows, block by block
            shown = len(context_pack.blocks)
            shown_sources = list(dict.fromkeys(b.source for b in context_pack.blocks))
            weaker = sum(1 for b in context_pack.left_out if b.reason == "relevance")
            cut = dict.fromkeys(b.source for b in context_pack.left_out if b.reason == "budget")
            budget_omitted = [s for s in cut if s not in shown_sources]
    parts = [f"{_plural(shown, 'block')} from {_plural(len(shown_sources), 'document')}"]
    parts.append(
        {
            "high": "evidence is strong",
            "medium": "evidence is partial: cross-check before acting",
            "low": "weak match: verify before acting",
        }[relevance]
    )
    if weaker:
        parts.append(f"{_plural(weaker, 'more block')} left out, far less relevant than the first")
    if context_pack is not None:
        if budget_omitted:
            parts.append(
                f"context truncated: {_plural(len(budget_omitted), 'source')} "
                f"omitted ({_named(budget_omitted)})"
            )
        elif context_pack.truncated:
            parts.append("context truncated: some content was cut")
    if l0_hints is not None and l0_hints.matched_sources:
        hinted = [s for s in l0_hints.matched_sources if s not in sources]
        if len(hinted) == len(l0_hints.matched_sources):
            parts.append(
                f"the catalog also points to {_named(hinted)}, which retrieval did not return; "
                "consider a more specific query"
            )
    return "; ".join(parts) + "."
