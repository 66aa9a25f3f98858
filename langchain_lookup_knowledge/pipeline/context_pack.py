"""Context pack: the evidence blocks as the text the agent reads, within a character budget.

Each block is a header (rank, title/breadcrumb, source: :func:`.message.block_header`) and its
document text, every line quoted (:func:`.message.quote_text`), so no document can pose as a
header. Headers are never truncated; only content is, with a visible ``…[truncated]`` marker.
What the text does not show of a block (its evidence key, score and the ``why`` whose numbers
add up to it) is kept beside it, in ``ContextPack.blocks``.

Budget policy:

0. Blocks past ``shown`` (the relevance knee, :mod:`.knee`) are left out whole, recorded in
   ``left_out`` with reason ``relevance``.
1. Blocks are taken in rank order while their headers plus a content floor still fit. From the
   2nd block on the floor is ``min(len(content), max(min_content_chars, len(marker)))``, so
   more headers do not starve every block of content; for the 1st block it is only room for
   the marker, so the best block is there whenever its header fits. The first block that does
   not fit, and every later block, is omitted whole (reason ``budget``): a lower-ranked block
   never displaces a higher-ranked one.
2. The characters left after the included headers go to the included blocks' contents best
   rank first: each block gets all it needs while the later blocks keep their floors, so the
   best block is shown whole whenever it fits and the cuts fall on the lower-ranked ones.
   A block that is cut keeps its head, or, when a later run of its lines holds more of the
   question's terms, that run between ``…[truncated]`` lines (:mod:`.excerpt`).
3. ``len(text) <= budget`` always holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_lookup_knowledge.core.checks import require_at_least
from langchain_lookup_knowledge.core.models import (
    ContextPack,
    EvidenceBlock,
    HitReason,
    LeftOutBlock,
    LeftOutReason,
    PackedBlock,
    ScoreLabel,
)
from langchain_lookup_knowledge.pipeline.excerpt import focused_cut
from langchain_lookup_knowledge.pipeline.message import block_header, quote_text

__all__ = [
    "DEFAULT_MIN_CONTENT_CHARS",
    "TRUNCATION_MARKER",
    "PackMeasure",
    "block_header",
    "block_why",
    "first_block_room",
    "pack_context",
    "spare_room",
]

TRUNCATION_MARKER = "…[truncated]"
DEFAULT_MIN_CONTENT_CHARS = 120
_QUOTED_MARKER = "> " + TRUNCATION_MARKER
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


def block_why(block: EvidenceBlock) -> str:
    """The block's hit reasons, their leading numbers adding up to its score (to rounding).

    Example:
        >>> block_why(EvidenceBlock(evidence_key="a.md#0", source="a.md", content="x"))
        'none recorded'
    """
    return _why(block.hit_reasons, block.score_label)


def _body(content: str) -> str:
    return quote_text(content)


def _best_first_shares(demands: Sequence[int], floors: Sequence[int], capacity: int) -> list[int]:
    """Content room per block, best rank first: each block takes what it needs, leaving the
    later blocks their floors (the inclusion loop made sure the floors fit)."""
    shares: list[int] = []
    remaining = capacity
    for index, demand in enumerate(demands):
        later = sum(floors[index + 1 :])
        share = min(demand, max(floors[index], remaining - later))
        shares.append(share)
        remaining -= share
    return shares


def _cut(body: str, room: int) -> str:
    """``body`` shortened to ``room`` characters, marker included."""
    keep = body[: max(0, room - len(TRUNCATION_MARKER))]
    soft = max(keep.rfind(" "), keep.rfind("\n"))
    if soft >= len(keep) * _SOFT_CUT_SHARE:
        keep = keep[:soft]
    keep = keep.rstrip()
    if not keep:  # the marker on a line of its own is still a quoted document line
        return _QUOTED_MARKER
    return keep + TRUNCATION_MARKER


def pack_context(
    blocks: Sequence[EvidenceBlock],
    budget_chars: int,
    *,
    min_content_chars: int = DEFAULT_MIN_CONTENT_CHARS,
    shown: int | None = None,
    knee: float | None = None,
    header: Callable[[int, EvidenceBlock], str] = block_header,
    body: Callable[[str], str] = _body,
    focus_terms: Sequence[str] = (),
    measure: PackMeasure | None = None,
) -> ContextPack:
    """Pack ranked evidence blocks into at most ``budget_chars`` characters of text.

    Args:
        blocks: Final evidence blocks, best first.
        budget_chars: The character budget of the whole text.
        min_content_chars: Content room a block must get to be included (less when its content
            is shorter); 0 packs as many headers as fit.
        shown: How many of the first blocks are relevant enough to show (the relevance knee);
            the others are left out whole. None: all of them.
        knee: The score the knee cut at, recorded in the pack (None: no cut).
        header: A block's header lines (rank, block) -> text ending in a newline.
        body: A block's document text as shown (quoted lines).
        focus_terms: The question's terms: a block that must be cut shows the run of its lines
            holding the most of them when that is not its head (:mod:`.excerpt`).
        measure: The budget as already measured for these blocks (:class:`PackMeasure`, of
            the same budget, floor and ``shown``, with the default header and body): packed
            with it rather than measured again.

    Returns:
        The text, included/omitted sources, budget, characters used, whether anything was cut
        for the budget, each shown block's metadata and each left-out block with its reason.
        A source with one block included and another omitted counts as included only.

    Raises:
        ValueError: ``budget_chars``, ``min_content_chars`` or ``shown`` is negative.

    Example:
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", title="A",
        ...                       content="word " * 100, score=0.5)
        >>> pack = pack_context([block], budget_chars=120)
        >>> pack.truncated, pack.used <= 120, pack.text.endswith("…[truncated]\\n")
        (True, True, True)
    """
    require_at_least(0, budget_chars=budget_chars, min_content_chars=min_content_chars)
    shown = len(blocks) if shown is None else shown
    require_at_least(0, shown=shown)

    candidates = blocks[:shown]
    if measure is None:
        headers = [header(rank, block) for rank, block in enumerate(candidates, start=1)]
        bodies = [body(block.content) for block in candidates]
        fixed, floors = _included(headers, bodies, budget_chars, min_content_chars)
    else:
        if (measure.budget_chars, measure.min_content_chars, measure.shown) != (
            budget_chars,
            min_content_chars,
            shown,
        ):
            msg = "pack_context: the measure is of another budget, floor or shown count"
            raise ValueError(msg)
        measure = measure.updated(blocks)
        headers, bodies = list(measure.headers), list(measure.bodies)
        fixed, floors = measure.fixed, list(measure.floors)
    included = len(floors)

    shares = _best_first_shares([len(b) for b in bodies[:included]], floors, budget_chars - fixed)
    parts: list[str] = []
    packed: list[PackedBlock] = []
    for rank, (block, head, text_body, share) in enumerate(
        zip(candidates, headers, bodies, shares, strict=False), start=1
    ):
        cut = len(text_body) > share
        if cut:
            text_body = focused_cut(text_body, share, focus_terms) or _cut(text_body, share)
        parts.append(f"{head}{text_body}\n")
        packed.append(_packed(rank, block, len(text_body), cut))
    text = "\n".join(parts)

    left_out = [_left_out(b, "budget") for b in candidates[included:]]
    left_out += [_left_out(b, "relevance") for b in blocks[shown:]]
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
        truncated=any(p.truncated for p in packed) or included < len(candidates),
        blocks=packed,
        left_out=left_out,
        knee=knee if shown < len(blocks) else None,
    )


def _included(
    headers: Sequence[str], bodies: Sequence[str], budget_chars: int, min_content_chars: int
) -> tuple[int, list[int]]:
    """Step 1 of the policy: the characters of the included blocks' headers, trailing newlines
    and separators, and the content floor of each included block (their count: how many are
    included)."""
    floor = max(min_content_chars, len(_QUOTED_MARKER))
    fixed = 0
    floors: list[int] = []
    for head, text_body in zip(headers, bodies, strict=True):
        need = (1 if floors else 0) + len(head) + 1
        minimum = min(len(text_body), floor if floors else len(_QUOTED_MARKER))
        if fixed + need + sum(floors) + minimum > budget_chars:
            break
        fixed += need
        floors.append(minimum)
    return fixed, floors


@dataclass(frozen=True)
class PackMeasure:
    """The budget measured once for a lookup: the first ``shown`` blocks' headers and bodies as
    shown, and :func:`_included` of them (the characters of the included headers, each included
    block's content floor). The steps that grow blocks read their room from it, and
    :func:`pack_context` packs with it; :meth:`updated` carries it to grown blocks, quoting only
    a block whose content changed.

    Example:
        >>> blocks = [EvidenceBlock(evidence_key=f"a.md#{i}", source="a.md", title="A",
        ...                         content="word " * 100) for i in range(2)]
        >>> measure = PackMeasure.of(blocks, 600)
        >>> measure.first_block_room(), measure.spare_room()
        (439, 0)
    """

    budget_chars: int
    min_content_chars: int
    shown: int
    contents: tuple[str, ...]  # the measured blocks' contents, to tell a grown one
    headers: tuple[str, ...]
    bodies: tuple[str, ...]
    fixed: int
    floors: tuple[int, ...]

    @classmethod
    def of(
        cls,
        blocks: Sequence[EvidenceBlock],
        budget_chars: int,
        *,
        min_content_chars: int = DEFAULT_MIN_CONTENT_CHARS,
        shown: int | None = None,
    ) -> PackMeasure:
        """Measure the first ``shown`` of ``blocks`` (None: all) within ``budget_chars``."""
        require_at_least(0, budget_chars=budget_chars, min_content_chars=min_content_chars)
        shown = len(blocks) if shown is None else shown
        require_at_least(0, shown=shown)
        candidates = blocks[:shown]
        headers = [block_header(rank, block) for rank, block in enumerate(candidates, start=1)]
        bodies = [_body(block.content) for block in candidates]
        return cls._of(budget_chars, min_content_chars, shown, candidates, headers, bodies)

    @classmethod
    def _of(
        cls,
        budget_chars: int,
        min_content_chars: int,
        shown: int,
        candidates: Sequence[EvidenceBlock],
        headers: Sequence[str],
        bodies: Sequence[str],
    ) -> PackMeasure:
        fixed, floors = _included(headers, bodies, budget_chars, min_content_chars)
        return cls(
            budget_chars,
            min_content_chars,
            shown,
            tuple(b.content for b in candidates),
            tuple(headers),
            tuple(bodies),
            fixed,
            tuple(floors),
        )

    def updated(self, blocks: Sequence[EvidenceBlock]) -> PackMeasure:
        """The measure of ``blocks``: the measured blocks, some of them grown (content only:
        small-to-big, table rows, a document's best chunks). Only a grown block is quoted
        again; the same blocks give this measure itself."""
        candidates = blocks[: self.shown]
        if len(candidates) != len(self.contents):
            msg = f"measured {len(self.contents)} blocks, given {len(candidates)}"
            raise ValueError(msg)
        grown = [i for i, b in enumerate(candidates) if b.content != self.contents[i]]
        if not grown:
            return self
        bodies = list(self.bodies)
        for i in grown:
            bodies[i] = _body(candidates[i].content)
        return self._of(
            self.budget_chars, self.min_content_chars, self.shown, candidates, self.headers, bodies
        )

    def first_block_room(self) -> int:
        """:func:`first_block_room` of the measured blocks."""
        floors = self.floors
        return max(0, self.budget_chars - self.fixed - sum(floors[1:])) if floors else 0

    def spare_room(self) -> int:
        """:func:`spare_room` of the measured blocks."""
        if len(self.floors) < len(self.bodies):
            return 0
        return max(0, self.budget_chars - self.fixed - sum(len(b) for b in self.bodies))


def _measured(
    blocks: Sequence[EvidenceBlock],
    budget_chars: int,
    min_content_chars: int,
    shown: int | None,
    header: Callable[[int, EvidenceBlock], str],
    body: Callable[[str], str],
) -> tuple[list[str], int, list[int]]:
    """The first ``shown`` blocks' bodies as shown, and :func:`_included` of them."""
    candidates = blocks[: len(blocks) if shown is None else shown]
    headers = [header(rank, block) for rank, block in enumerate(candidates, start=1)]
    bodies = [body(block.content) for block in candidates]
    fixed, floors = _included(headers, bodies, budget_chars, min_content_chars)
    return bodies, fixed, floors


def first_block_room(
    blocks: Sequence[EvidenceBlock],
    budget_chars: int,
    *,
    min_content_chars: int = DEFAULT_MIN_CONTENT_CHARS,
    shown: int | None = None,
    header: Callable[[int, EvidenceBlock], str] = block_header,
    body: Callable[[str], str] = _body,
) -> int:
    """The most characters of document text (as shown: quoted) the first block can have in
    :func:`pack_context` with the same arguments, the later blocks cut to their floors; 0 when
    no block is included. Whatever the first block's content, the same blocks are included.

    Example:
        >>> blocks = [EvidenceBlock(evidence_key=f"a.md#{i}", source="a.md", title="A",
        ...                         content="word " * 100) for i in range(2)]
        >>> room = first_block_room(blocks, budget_chars=600)
        >>> room
        439
        >>> def first(text):  # quoted, one line: "> " and the text
        ...     return blocks[0].model_copy(update={"content": text})
        >>> pack_context([first("w" * (room - 2)), blocks[1]], 600).blocks[0].truncated
        False
        >>> pack_context([first("w" * (room - 1)), blocks[1]], 600).blocks[0].truncated
        True
    """
    _, fixed, floors = _measured(blocks, budget_chars, min_content_chars, shown, header, body)
    return max(0, budget_chars - fixed - sum(floors[1:])) if floors else 0


def spare_room(
    blocks: Sequence[EvidenceBlock],
    budget_chars: int,
    *,
    min_content_chars: int = DEFAULT_MIN_CONTENT_CHARS,
    shown: int | None = None,
    header: Callable[[int, EvidenceBlock], str] = block_header,
    body: Callable[[str], str] = _body,
) -> int:
    """The characters of document text (as shown: quoted) the blocks can grow by, together, with
    :func:`pack_context` still showing every one of the first ``shown`` whole; 0 when it cuts or
    omits one already.

    Example:
        >>> blocks = [EvidenceBlock(evidence_key=f"a.md#{i}", source="a.md", title="A",
        ...                         content="w" * 100) for i in range(2)]
        >>> room = spare_room(blocks, budget_chars=400)
        >>> room
        155
        >>> def first(text):  # quoted, one line: "> " and the text
        ...     return blocks[0].model_copy(update={"content": text})
        >>> grown = first(blocks[0].content + "w" * room)
        >>> pack_context([grown, blocks[1]], 400).truncated
        False
        >>> pack_context([first(grown.content + "w"), blocks[1]], 400).truncated
        True
    """
    bodies, fixed, floors = _measured(blocks, budget_chars, min_content_chars, shown, header, body)
    if len(floors) < len(bodies):
        return 0
    return max(0, budget_chars - fixed - sum(len(b) for b in bodies))


def _packed(rank: int, block: EvidenceBlock, shown_chars: int, cut: bool) -> PackedBlock:
    return PackedBlock(
        rank=rank,
        evidence_key=block.evidence_key,
        source=block.source,
        title=block.title,
        breadcrumb=block.breadcrumb,
        score=block.score,
        why=block_why(block),
        shown_chars=shown_chars,
        truncated=cut,
    )


def _left_out(block: EvidenceBlock, reason: LeftOutReason) -> LeftOutBlock:
    return LeftOutBlock(
        evidence_key=block.evidence_key, source=block.source, score=block.score, reason=reason
    )
