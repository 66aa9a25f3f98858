"""Context pack: the evidence blocks as the text the agent reads, within a character budget.

Each block is a header (rank, title/breadcrumb, source, evidenceKey, score, hit reasons whose
contributions add up to the score) and its content. Headers are never truncated; only content
is, with a visible ``…[truncated]`` marker.

Budget policy:

1. Blocks are taken in rank order while their headers plus a content floor still fit. From the
   2nd block on the floor is ``min(len(content), max(min_content_chars, len(marker)))``, so
   more headers do not starve every block of content; for the 1st block it is only room for
   the marker, so the best block is there whenever its header fits. The first block that does
   not fit, and every later block, is omitted whole: a lower-ranked block never displaces a
   higher-ranked one.
2. The characters left after the included headers are shared max-min fairly among the included
   blocks' contents: each gets up to an equal share, what short contents leave unused is
   shared among the longer ones, and rounding remainders go to higher-ranked blocks.
3. ``len(text) <= budget`` always holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_lookup_knowledge.core.checks import require_at_least
from langchain_lookup_knowledge.core.models import ContextPack, EvidenceBlock, HitReason, ScoreLabel

__all__ = ["DEFAULT_MIN_CONTENT_CHARS", "TRUNCATION_MARKER", "block_header", "pack_context"]

TRUNCATION_MARKER = "…[truncated]"
DEFAULT_MIN_CONTENT_CHARS = 120
_SOFT_CUT_SHARE = 0.8  # cut at a space/newline when it keeps at least this share of the room


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _retrieval_part(contribution: float, label: ScoreLabel | None) -> str:
    """The L1 reason as the agent reads it: its contribution to the score, first.

    A dense hit's contribution is its similarity (``similarity 0.71``). A fused or BM25 hit's
    rerank base mixes in its rank score, so the part shows the base and what it mixes:
    ``retrieval 0.76 (similarity 0.59, rank 0.92)``; the formula is in the reason's detail.
    """
    similarity = label.similarity if label is not None else None
    if similarity is None or not math.isfinite(similarity) or abs(contribution - similarity) < 5e-3:
        return f"similarity {contribution:.2f}"
    mixed = [f"similarity {similarity:.2f}"]
    if label is not None and label.rank_score is not None and math.isfinite(label.rank_score):
        mixed.append(f"rank {label.rank_score:.2f}")
    return f"retrieval {contribution:.2f} ({', '.join(mixed)})"


def _why(reasons: Sequence[HitReason], label: ScoreLabel | None = None) -> str:
    """Short hit reasons whose leading numbers add up to the block's score (to rounding):
    ``similarity 0.71, l0_title +0.08, first_chunk +0.01``, or for a fused hit
    ``retrieval 0.76 (similarity 0.59, rank 0.92), query_term_coverage +0.05``.
    """
    best: dict[str, float] = {}
    for reason in reasons:
        best[reason.kind] = max(best.get(reason.kind, reason.contribution), reason.contribution)
    parts = []
    for kind, contribution in best.items():
        if kind == "l1_similarity":
            parts.append(_retrieval_part(contribution, label))
        else:
            parts.append(f"{_one_line(kind)} {contribution:+.2f}")
    return ", ".join(parts) or "none recorded"


def block_header(rank: int, block: EvidenceBlock) -> str:
    """The never-truncated header of a block (two lines, newline-terminated).

    Example:
        >>> block = EvidenceBlock(evidence_key="k8s/node.md#2", source="k8s/node.md",
        ...     title="Node NotReady", breadcrumb="Node NotReady > Fix", content="...", score=0.8)
        >>> print(block_header(1, block), end="")
        [1] Node NotReady > Fix
        source: k8s/node.md (evidenceKey k8s/node.md#2; score 0.80; why: none recorded)
    """
    title, breadcrumb = _one_line(block.title), _one_line(block.breadcrumb)
    if title and breadcrumb and breadcrumb != title and not breadcrumb.startswith(title):
        heading = f"{title} — {breadcrumb}"
    else:
        heading = breadcrumb or title or _one_line(block.source)
    return (
        f"[{rank}] {heading}\n"
        f"source: {_one_line(block.source)} (evidenceKey {_one_line(block.evidence_key)}; "
        f"score {block.score:.2f}; why: {_why(block.hit_reasons, block.score_label)})\n"
    )


def _body(content: str) -> str:
    return content.rstrip().lstrip("\n")


def _fair_shares(demands: Sequence[int], capacity: int) -> list[int]:
    """Max-min fair split of ``capacity``; remainders go to the lowest indexes (best ranks)."""
    shares = [0] * len(demands)
    remaining = capacity
    by_demand = sorted(range(len(demands)), key=lambda i: (demands[i], i))
    for position, index in enumerate(by_demand):
        if demands[index] > remaining // (len(demands) - position):
            unsatisfied = sorted(by_demand[position:])
            level, extra = divmod(remaining, len(unsatisfied))
            for order, i in enumerate(unsatisfied):
                shares[i] = level + (1 if order < extra else 0)
            return shares
        shares[index] = demands[index]
        remaining -= demands[index]
    return shares


def _cut(body: str, room: int) -> str:
    """``body`` shortened to ``room`` characters, marker included."""
    keep = body[: max(0, room - len(TRUNCATION_MARKER))]
    soft = max(keep.rfind(" "), keep.rfind("\n"))
    if soft >= len(keep) * _SOFT_CUT_SHARE:
        keep = keep[:soft]
    return keep.rstrip() + TRUNCATION_MARKER


def pack_context(
    blocks: Sequence[EvidenceBlock],
    budget_chars: int,
    *,
    min_content_chars: int = DEFAULT_MIN_CONTENT_CHARS,
) -> ContextPack:
    """Pack ranked evidence blocks into at most ``budget_chars`` characters of text.

    Args:
        blocks: Final evidence blocks, best first.
        budget_chars: The character budget of the whole text.
        min_content_chars: Content room a block must get to be included (less when its content
            is shorter); 0 packs as many headers as fit.

    Returns:
        The text, included/omitted sources, budget, characters used, and whether anything was
        cut. A source with one block included and another omitted counts as included only.

    Raises:
        ValueError: ``budget_chars`` or ``min_content_chars`` is negative.

    Example:
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", title="A",
        ...                       content="word " * 100, score=0.5)
        >>> pack = pack_context([block], budget_chars=120)
        >>> pack.truncated, pack.used <= 120, pack.text.endswith("…[truncated]\\n")
        (True, True, True)
    """
    require_at_least(0, budget_chars=budget_chars, min_content_chars=min_content_chars)
    floor = max(min_content_chars, len(TRUNCATION_MARKER))

    headers = [block_header(rank, block) for rank, block in enumerate(blocks, start=1)]
    bodies = [_body(block.content) for block in blocks]
    fixed = 0  # headers, trailing newlines and separators of the included blocks
    reserved = 0  # content room the included blocks need at least
    included = 0
    for header, body in zip(headers, bodies, strict=True):
        need = (1 if included else 0) + len(header) + 1
        minimum = min(len(body), floor if included else len(TRUNCATION_MARKER))
        if fixed + need + reserved + minimum > budget_chars:
            break
        fixed += need
        reserved += minimum
        included += 1

    shares = _fair_shares([len(b) for b in bodies[:included]], budget_chars - fixed)
    parts: list[str] = []
    cut_any = False
    for header, body, share in zip(headers, bodies, shares, strict=False):
        if len(body) > share:
            body = _cut(body, share)
            cut_any = True
        parts.append(f"{header}{body}\n")
    text = "\n".join(parts)

    included_sources = list(dict.fromkeys(b.source for b in blocks[:included]))
    omitted_sources = [
        s for s in dict.fromkeys(b.source for b in blocks[included:]) if s not in included_sources
    ]
    return ContextPack(
        text=text,
        included_sources=included_sources,
        omitted_sources=omitted_sources,
        budget=budget_chars,
        used=len(text),
        truncated=cut_any or included < len(blocks),
    )
