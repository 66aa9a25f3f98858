"""A block cut to its share of the budget shows the lines that answer the question."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.pipeline.context_pack import pack_context
from langchain_lookup_knowledge.pipeline.excerpt import ELIDED, focused_cut
from langchain_lookup_knowledge.pipeline.message import quote_text

ATTRIBUTES = "\n".join(
    [
        "The limit-req plugin limits the request rate with the leaky bucket algorithm.",
        *[f"It can be configured on a route, a service or a consumer ({i})." for i in range(12)],
        "| Name | Type | Required | Description |",
        "| rate | integer | True | Threshold for the number of requests per second. |",
        "| nodelay | boolean | False | When true, requests inside the burst are not delayed. |",
        "| key | string | True | The user specified key to limit the rate. |",
        *[f"Example configuration line {i}." for i in range(12)],
    ]
)


def test_a_cut_block_shows_the_row_that_holds_the_question_terms() -> None:
    body = quote_text(ATTRIBUTES)
    text = focused_cut(body, 300, ["burst", "delayed", "requests"])
    assert text is not None
    assert len(text) <= 300
    assert "| nodelay | boolean |" in text
    assert text.startswith(ELIDED + "\n")
    assert text.endswith("\n" + ELIDED)
    assert all(line.startswith(">") for line in text.split("\n"))


def test_the_head_is_kept_when_it_holds_as_many_terms() -> None:
    body = quote_text(ATTRIBUTES)
    assert focused_cut(body, 300, ["leaky", "bucket"]) is None  # the first line answers
    assert focused_cut(body, 300, ["absent"]) is None
    assert focused_cut(body, 300, []) is None


def test_a_row_longer_than_the_room_is_shown_from_its_start() -> None:
    body = quote_text("intro line\n" + "| nodelay | boolean | " + "long description " * 20)
    text = focused_cut(body, 80, ["nodelay"])
    assert text is not None
    assert len(text) <= 80
    assert text.startswith(f"{ELIDED}\n> | nodelay | boolean")
    assert text.endswith("…[truncated]")


def test_the_packer_shows_the_answering_row_of_a_lower_block() -> None:
    first = EvidenceBlock(evidence_key="a.md#0", source="a.md", content="word " * 120, score=0.9)
    second = EvidenceBlock(evidence_key="b.md#3", source="b.md", content=ATTRIBUTES, score=0.8)
    focused = pack_context([first, second], 1100, focus_terms=["burst", "delayed"])
    head = pack_context([first, second], 1100)
    assert "| nodelay | boolean |" in focused.text
    assert "| nodelay | boolean |" not in head.text
    assert focused.used <= 1100
    assert focused.blocks[1].truncated


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(max_size=60), min_size=1, max_size=30),
    room=st.integers(min_value=0, max_value=800),
    terms=st.lists(st.sampled_from(["a", "b", "nodelay", "节点", "x1"]), max_size=3),
)
def test_a_focused_cut_fits_its_room_and_keeps_whole_quoted_lines(
    lines: list[str], room: int, terms: list[str]
) -> None:
    body = quote_text("\n".join(lines))
    text = focused_cut(body, room, terms)
    if text is None:
        return
    assert len(text) <= room
    shown = text.split("\n")
    assert shown[0] == ELIDED
    source_lines = body.split("\n")
    for line in shown[1:]:
        assert line == ELIDED or line in source_lines or line.endswith("…[truncated]")
