"""Small-to-big: match on the small chunk, show the section around it.

Real Milvus Lite, the real embedder: a how-to page whose answering config follows, in the next
chunk of the same section, the prose that the question matches.
"""

from __future__ import annotations

from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.expand import (
    Neighbour,
    expand_selection,
    grow,
    join_chunks,
    neighbour_keys,
)
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.kb_helpers import write

INTRO = " ".join(
    f"Mirroring copies live traffic to a second host so that a new release sees real load "
    f"without answering clients; note {i} on sampling and mirrored paths."
    for i in range(9)
)
STEPS = "\n".join(
    f"- Step {i}: check the mirror target number {i} is reachable." for i in range(14)
)
PAGE = (
    "# traffic-mirror\n\n## Configure mirroring\n\n" + INTRO + "\n\n" + STEPS + "\n\n"
    "Set the share of mirrored requests with this attribute:\n\n"
    '```json\n{"plugins": {"traffic-mirror": {"host": "http://staging:9797", '
    '"mirror_share_ratio": 0.1}}}\n```\n\n'
    "## Unrelated section\n\nThe dashboard lists plugins by name. " * 3
)


def _block(key: str, content: str, breadcrumb: str = "doc > Setup") -> EvidenceBlock:
    return EvidenceBlock(
        evidence_key=key, source=key.split("#")[0], breadcrumb=breadcrumb, content=content
    )


def test_join_drops_the_sentences_an_overlapping_chunk_repeats():
    assert join_chunks("A first step. A second step.", "A second step. Third.") == (
        "A first step. A second step. Third."
    )
    assert join_chunks("No overlap here.", "Other text.") == "No overlap here.\n\nOther text."


def test_grow_stays_in_the_section_and_within_the_limit():
    block = _block("doc.md#2", "middle part of setup")
    neighbours = {
        1: Neighbour(1, "doc > Setup > Install", "before in setup"),
        3: Neighbour(3, "doc > Setup", "after in setup"),
        4: Neighbour(4, "doc > Other", "another section"),
    }
    grown = grow(block, neighbours, limit=500)
    assert grown == "before in setup\n\nmiddle part of setup\n\nafter in setup"
    assert "another section" not in grown
    assert grow(block, neighbours, limit=len("middle part of setup") + 5) == block.content


def test_a_failed_fetch_leaves_the_selection_as_it_was():
    selection = EvidenceSelection(blocks=[_block("doc.md#1", "text")], final_count=1)

    def failing_fetch(keys):  # a fake that forces the store failure
        raise TimeoutError("store timed out")

    assert expand_selection(selection, failing_fetch, 1500) is selection
    assert neighbour_keys("doc.md#1", 2) == ["doc.md#0", "doc.md#2", "doc.md#3"]


def test_the_best_block_shows_the_config_that_follows_the_matched_prose(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "plugins/traffic-mirror.md", PAGE)
    report = ingest_folder(kb, settings)
    assert report.chunks_written >= 3
    question = "copy a tenth of live traffic to a staging release host for testing"
    shown = {}
    for limit in (0, 3000):
        tool = create_lookup_knowledge_tool(
            # a budget that holds the grown section: this test is about the growth, not the cut
            settings.model_copy(
                update={"section_expand_chars": limit, "top_k": 1, "context_budget_chars": 6000}
            )
        )
        message = tool.invoke(
            {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": question}}
        )
        shown[limit] = str(message.content)
        blocks = message.artifact["evidenceBlocks"]
        assert blocks[0]["source"] == "plugins/traffic-mirror.md"
        content_lines = [line.rstrip() for line in blocks[0]["content"].splitlines()]
        assert all(f"> {line}" in shown[limit] for line in content_lines if line) or limit == 0
    assert "mirror_share_ratio" not in shown[0]  # the matched chunk alone: prose, no config
    assert "mirror_share_ratio" in shown[3000]  # grown to its section: the config line
    assert "dashboard lists plugins" not in shown[3000]  # never past the section
