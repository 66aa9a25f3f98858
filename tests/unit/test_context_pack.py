"""Context pack: headers intact, content cut to the budget, omitted sources recorded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.pipeline.context_pack import (
    TRUNCATION_MARKER,
    block_header,
    pack_context,
)
from langchain_lookup_knowledge.pipeline.models import EvidenceBlock, HitReason


def block(source: str, content: str, ordinal: int = 0) -> EvidenceBlock:
    return EvidenceBlock(
        evidence_key=f"{source}#{ordinal}",
        source=source,
        title=f"Title of {source}",
        breadcrumb=f"Title of {source} > Section {ordinal}",
        content=content,
        score=0.7,
        hit_reasons=[
            HitReason(kind="l1_similarity", detail="sdk COSINE raw=0.4", contribution=0.7),
            HitReason(kind="l0_title", detail="title: x", contribution=0.08),
        ],
    )


def test_header_carries_source_metadata_and_reasons() -> None:
    header = block_header(2, block("k8s/node.md", "x", 3))
    assert header == (
        "[2] Title of k8s/node.md > Section 3\n"
        "source: k8s/node.md (evidenceKey k8s/node.md#3; score 0.70; "
        "why: similarity 0.70, l0_title +0.08)\n"
    )


def test_everything_fits_without_truncation() -> None:
    blocks = [block("a.md", "alpha"), block("b.md", "beta")]
    pack = pack_context(blocks, 10_000)
    assert not pack.truncated
    assert pack.text == f"{block_header(1, blocks[0])}alpha\n\n{block_header(2, blocks[1])}beta\n"
    assert pack.used == len(pack.text)
    assert pack.included_sources == ["a.md", "b.md"]
    assert pack.omitted_sources == []


def test_context_pack_truncates_content_not_metadata() -> None:
    blocks = [block("a.md", "alpha " * 200), block("b.md", "beta " * 200)]
    headers = [block_header(i, b) for i, b in enumerate(blocks, start=1)]
    budget = sum(len(h) for h in headers) + 400
    pack = pack_context(blocks, budget)
    assert pack.truncated
    assert pack.used <= budget
    for header in headers:
        assert header in pack.text
    assert pack.text.count(TRUNCATION_MARKER) == 2
    assert pack.omitted_sources == []


def test_context_pack_records_omitted_sources() -> None:
    blocks = [block("a.md", "alpha " * 50), block("b.md", "beta"), block("c.md", "gamma")]
    budget = len(block_header(1, blocks[0])) + 40
    pack = pack_context(blocks, budget)
    assert pack.included_sources == ["a.md"]
    assert pack.omitted_sources == ["b.md", "c.md"]
    assert pack.truncated
    assert "b.md" not in pack.text
    assert pack.used <= budget


def test_later_block_needs_room_for_some_content() -> None:
    blocks = [block("a.md", "alpha " * 100), block("b.md", "beta " * 100)]
    headers_only = sum(len(block_header(i, b)) + 1 for i, b in enumerate(blocks, start=1)) + 1
    budget = headers_only + 100
    assert pack_context(blocks, budget).omitted_sources == ["b.md"]
    assert pack_context(blocks, budget, min_content_chars=40).omitted_sources == []


def test_source_with_one_chunk_included_is_not_listed_as_omitted() -> None:
    blocks = [block("a.md", "alpha", 0), block("a.md", "alpha " * 100, 1)]
    pack = pack_context(blocks, len(block_header(1, blocks[0])) + 10)
    assert pack.included_sources == ["a.md"]
    assert pack.omitted_sources == []
    assert pack.truncated


def test_short_blocks_leave_their_share_to_longer_ones() -> None:
    blocks = [block("a.md", "a" * 1000), block("b.md", "short"), block("c.md", "c" * 1000)]
    fixed = sum(len(block_header(i, b)) + 1 for i, b in enumerate(blocks, start=1)) + 2
    pack = pack_context(blocks, fixed + 605)
    bodies = [part.split("\n")[2] for part in pack.text.split("\n\n")]
    assert bodies[1] == "short"
    assert len(bodies[0]) == len(bodies[2]) == 300
    assert pack.used == fixed + 605


def test_budget_smaller_than_first_header_omits_everything() -> None:
    pack = pack_context([block("a.md", "alpha")], 10)
    assert (pack.text, pack.used, pack.omitted_sources, pack.truncated) == ("", 0, ["a.md"], True)


def test_no_blocks_give_an_empty_pack() -> None:
    pack = pack_context([], 500)
    assert (pack.text, pack.budget, pack.used, pack.truncated) == ("", 500, 0, False)


def test_negative_budget_is_rejected() -> None:
    with pytest.raises(ValueError, match="-1"):
        pack_context([], -1)


def any_block(**fields: object) -> EvidenceBlock:
    # st.builds on the model itself also fills the camelCase aliases of the signature
    return EvidenceBlock.model_validate(fields)


def any_reason(**fields: object) -> HitReason:
    return HitReason.model_validate(fields)


blocks_strategy = st.lists(
    st.builds(
        any_block,
        evidence_key=st.text(max_size=20),
        source=st.text(min_size=1, max_size=20),
        title=st.text(max_size=30),
        breadcrumb=st.text(max_size=40),
        content=st.text(max_size=600),
        score=st.floats(min_value=-1, max_value=2),
        hit_reasons=st.lists(
            st.builds(
                any_reason,
                kind=st.text(max_size=12),
                detail=st.text(max_size=12),
                contribution=st.floats(min_value=-1, max_value=1),
            ),
            max_size=4,
        ),
    ),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    blocks=blocks_strategy,
    budget=st.integers(min_value=0, max_value=3000),
    floor=st.integers(min_value=0, max_value=300),
)
def test_packer_never_exceeds_budget_and_keeps_headers(
    blocks: list[EvidenceBlock], budget: int, floor: int
) -> None:
    pack = pack_context(blocks, budget, min_content_chars=floor)
    assert pack.used == len(pack.text) <= budget
    assert set(pack.included_sources) | set(pack.omitted_sources) == {b.source for b in blocks}
    assert not set(pack.included_sources) & set(pack.omitted_sources)
    shown = [block_header(rank, b) in pack.text for rank, b in enumerate(blocks, start=1)]
    assert shown == sorted(shown, reverse=True)  # included blocks are a prefix, headers whole
    assert {b.source for b, seen in zip(blocks, shown, strict=True) if seen} == set(
        pack.included_sources
    )
    if not pack.truncated:
        assert all(b.content.strip() in pack.text for b in blocks)
