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
    compose,
    expand_selection,
    grow,
    join_chunks,
    neighbour_keys,
    shown_size,
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


def _block(
    key: str, content: str, breadcrumb: str = "doc > Setup", score: float = 0.0
) -> EvidenceBlock:
    return EvidenceBlock(
        evidence_key=key,
        source=key.split("#")[0],
        breadcrumb=breadcrumb,
        content=content,
        score=score,
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


def test_the_documents_other_matches_come_first_then_the_section_in_document_order():
    best = _block("doc.md#5", "the example that matched", score=1.0)
    selection = EvidenceSelection(
        blocks=[best, _block("other.md#0", "another document", score=0.9)],
        final_count=2,
        also_matched=[
            _block("doc.md#9", "| nodelay | boolean | pass the burst at once |", score=0.8),
            _block("other.md#3", "more of another document", score=0.8),
            _block("doc.md#1", "a weak match", score=0.4),  # under the knee: 0.54 of 1.0
        ],
    )
    fetched: list[list[str]] = []

    def fetch(keys):
        fetched.append(list(keys))
        return {
            "doc.md#4": Neighbour(4, "doc > Setup", "the step before"),
            "doc.md#6": Neighbour(6, "doc > Other", "the next section"),
        }

    grown = expand_selection(selection, fetch, 1000, min_share=0.54)
    assert grown.blocks[0].content == (
        "the step before\n\nthe example that matched\n\n…[truncated]\n\n"
        "| nodelay | boolean | pass the burst at once |"
    )
    assert grown.blocks[0].evidence_key == "doc.md#5"
    assert grown.blocks[1:] == selection.blocks[1:]
    assert len(fetched) == 1  # one store query for the neighbours
    # without the knee the weak match is shown too; within a small limit only what fits
    unfloored = expand_selection(selection, fetch, 1000).blocks[0].content
    assert unfloored.startswith("a weak match\n\n…[truncated]")
    step_and_match = "the step before\n\nthe example that matched"
    small = expand_selection(selection, fetch, shown_size(step_and_match), min_share=0.54)
    assert small.blocks[0].content == step_and_match  # the limit is on the quoted text


def test_compose_joins_adjacent_chunks_and_marks_the_gaps():
    assert compose({3: "c. d.", 1: "a.", 2: "b."}) == "a.\n\nb.\n\nc. d."
    assert compose({7: "x", 2: "y"}) == "y\n\n…[truncated]\n\nx"


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
            # a budget that holds the grown section: this test is about the growth, not the cut,
            # and about the section, not the document's best chunks or table rows
            settings.model_copy(
                update={
                    "section_expand_chars": limit,
                    "top_k": 1,
                    "context_budget_chars": 6000,
                    "best_document_chunks": 0,
                    "table_rows": 0,
                }
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


EXAMPLE = " ".join(
    f"Example {i}: a burst of requests arrives at the rate-guard and the guard delays the "
    f"requests above the rate, so clients wait before the burst passes."
    for i in range(12)
)
LOGGING = " ".join(
    f"The access log line {i} names the route, the upstream address and the status code."
    for i in range(30)
)
GUARD_PAGE = (
    "# rate-guard\n\n## Throttle a burst\n\n" + EXAMPLE + "\n\n## Logging\n\n" + LOGGING + "\n\n"
    "## Attributes\n\n| Name | Type | Description |\n| --- | --- | --- |\n"
    "| rate | number | Requests per second; a burst above it is delayed. |\n"
    "| let_burst_through | boolean | If true, requests of a burst pass at once, not delayed. |\n"
)


def test_the_best_block_shows_its_documents_other_match_the_cap_left_out(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "plugins/rate-guard.md", GUARD_PAGE)
    ingest_folder(kb, settings)
    question = "rate-guard: let a burst of requests pass at once instead of delaying them"
    shown = {}
    judged = {}
    for limit in (0, 3000):
        tool = create_lookup_knowledge_tool(
            settings.model_copy(
                update={
                    "section_expand_chars": limit,
                    "per_document_cap": 1,  # the attribute table is no block of its own
                    "context_budget_chars": 6000,
                    "table_rows": 0,  # the row comes from the search's other match alone
                    "best_document_chunks": 0,  # not from a read of its document
                }
            )
        )
        message = tool.invoke(
            {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": question}}
        )
        shown[limit] = str(message.content)
        blocks = message.artifact["evidenceBlocks"]
        assert [b["source"] for b in blocks] == ["plugins/rate-guard.md"]
        assert "Throttle a burst" in blocks[0]["breadcrumb"]
        judged[limit] = (message.artifact["relevanceScore"], message.artifact["relevanceLevel"])
    assert judged[3000] == judged[0]  # the decision reads the matched chunk, not the grown text
    assert "let_burst_through" not in shown[0]  # the matched example alone
    assert "let_burst_through" in shown[3000]  # and the attribute row the search also found
    assert "> …[truncated]" in shown[3000]  # the logging section between them is left out
    assert "access log line 3 " not in shown[3000]
