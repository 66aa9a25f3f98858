"""Option rows: the rows of a document's tables that answer a question, read from its chunks.

The document is chunked by the real chunker, so its long attribute table is split into
fragments of a few rows the way an ingest splits it.
"""

from __future__ import annotations

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.core.term_match import query_terms
from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.expand import Neighbour, expand_for_agent, shown_size
from langchain_lookup_knowledge.pipeline.knee import agent_first_block_room
from langchain_lookup_knowledge.pipeline.table_rows import (
    add_rows_for_agent,
    add_table_rows,
    document_tables,
    rows_for,
    rows_room,
)

HEADER = "| Name | Type | Required | Default | Valid values | Description |"
FILLER = [
    f"| redis_option_{i} | string | False | | | Setting {i} of the Redis connection used "
    f"when `policy` is `redis`; ignored for the local counter of this instance. |"
    for i in range(14)
]
NODELAY = (
    "| nodelay | boolean | False | false | | If true, do not delay requests within the burst. |"
)
PAGE = "\n".join(
    [
        "# limit-req",
        "",
        "## Description",
        "",
        "The `limit-req` Plugin uses the leaky bucket algorithm to rate limit requests.",
        "",
        "## Attributes",
        "",
        HEADER,
        "|------|------|----------|---------|--------------|-------------|",
        "| rate | number | True | | > 0 | The maximum number of requests allowed per second. |",
        "| burst | number | True | | >= 0 | The number of requests allowed to be delayed. |",
        *FILLER[:7],
        NODELAY,
        *FILLER[7:],
        "",
        "## Examples",
        "",
        "```text",
        "| not | a | row |",
        "|---|---|---|",
        "| inside | a | code block |",
        "```",
        "",
        "Send a few requests to see the burst delayed.",
    ]
)
QUESTION = "limit-req: requests inside the burst should pass at once, not be held back"


def _chunks():
    chunks = chunk_document(parse_document(PAGE.encode("utf-8"), "plugins/limit-req.md"))
    return chunks, [(c.ordinal, c.breadcrumb, c.text) for c in chunks]


def test_a_table_split_over_chunks_is_read_as_one_table_with_its_header():
    chunks, stored = _chunks()
    holding = [c for c in chunks if "| redis_option_" in c.text or "| rate |" in c.text]
    assert len(holding) >= 3  # the chunker split the table into fragments
    tables = document_tables(stored)
    assert [t.header for t in tables] == [HEADER]  # the code block holds no table
    assert tables[0].rows[:2][0].startswith("| rate |")
    assert len(tables[0].rows) == 2 + len(FILLER) + 1
    assert tables[0].breadcrumb.endswith("Attributes")


def test_the_first_fragment_gets_the_answering_row_of_a_later_fragment():
    chunks, stored = _chunks()
    first = next(c for c in chunks if "| rate |" in c.text)
    assert NODELAY not in first.text
    added = rows_for(first.text, document_tables(stored), query_terms(QUESTION), 3)
    assert NODELAY in added.splitlines()
    assert added.startswith("…[truncated]")
    assert HEADER not in added  # the fragment shows the header already
    assert "| rate |" not in added  # nor a row it shows


def test_a_block_elsewhere_in_the_document_gets_the_rows_under_their_header():
    _, stored = _chunks()
    added = rows_for("Send a few requests.", document_tables(stored), query_terms(QUESTION), 3)
    lines = added.splitlines()
    assert lines[2] == HEADER
    assert lines[3].startswith("|---|")
    assert NODELAY in lines


def test_of_two_rows_holding_the_same_terms_the_shorter_one_comes_first():
    """The option whose subject the terms are (a short row) before a long row mentioning them,
    though the long row comes first in the table."""
    long_row = (
        "| rate | number | True | | > 0 | The maximum number of requests allowed per second. "
        "Requests exceeding the rate and below the burst will be delayed; requests exceeding "
        "both are rejected with the configured status code and message. |"
    )
    table = f"{HEADER}\n|---|---|---|---|---|---|\n{long_row}\n{NODELAY}\n" + "\n".join(FILLER)
    tables = document_tables([(0, "limit-req > Attributes", table)])
    added = rows_for("x", tables, query_terms(QUESTION), 1)
    assert NODELAY in added.splitlines()
    assert long_row not in added


def test_rows_need_two_of_the_questions_terms_and_fit_the_room():
    _, stored = _chunks()
    tables = document_tables(stored)
    assert rows_for("x", tables, query_terms("burst"), 3) != ""  # one term: all of it
    assert rows_for("x", tables, query_terms("burst of the galaxy"), 3) == ""
    assert rows_for("x", tables, [], 3) == ""
    terms = query_terms(QUESTION)
    for room in (300, 600, 1200):
        added = rows_for("x", tables, terms, 3, room=room)
        assert added
        assert shown_size(f"x\n\n{added}") <= room
    assert rows_for("x", tables, terms, 3, room=shown_size("x") + 20) == ""


def test_a_row_cut_between_two_chunks_is_joined():
    stored = [
        (0, "p > Attributes", f"{HEADER}\n|---|---|---|---|---|---|\n| nodelay | boolean | Fal"),
        (1, "p > Attributes", "se | false | | Do not delay the burst. |\n| rate | number |"),
    ]
    rows = document_tables(stored)[0].rows
    assert rows[0] == "| nodelay | boolean | False | false | | Do not delay the burst. |"


def _block(key: str, content: str, score: float, breadcrumb: str = "") -> EvidenceBlock:
    source = key.split("#")[0]
    return EvidenceBlock(
        evidence_key=key, source=source, breadcrumb=breadcrumb, content=content, score=score
    )


def test_the_selection_keeps_the_matched_chunk_for_the_decision():
    chunks, stored = _chunks()
    first = next(c for c in chunks if "| rate |" in c.text)
    best = _block(first.evidence_key, first.text, 0.9)
    selection = EvidenceSelection(blocks=[best, _block("b.md#0", "other", 0.8)], final_count=2)
    asked: list[str] = []

    def fetch(source):
        asked.append(source)
        return stored

    grown = add_table_rows(selection, fetch, 3, 4000, QUESTION)
    assert asked == ["plugins/limit-req.md"]
    assert NODELAY in grown.blocks[0].content
    assert grown.blocks[0].evidence_key == best.evidence_key
    assert grown.matched_blocks[0] == best
    assert grown.blocks[1:] == selection.blocks[1:]
    assert add_table_rows(selection, fetch, 0, 4000, QUESTION) is selection
    assert add_table_rows(selection, lambda source: [], 3, 4000, QUESTION) is selection


def test_a_failed_read_leaves_the_selection_as_it_was():
    selection = EvidenceSelection(blocks=[_block("a.md#0", "text", 0.9)], final_count=1)

    def failing_fetch(source):  # a fake that forces the store failure
        raise TimeoutError("store timed out")

    assert add_table_rows(selection, failing_fetch, 3, 4000, QUESTION) is selection


def test_small_to_big_leaves_the_rows_their_room(tmp_path):
    chunks, stored = _chunks()
    first = next(c for c in chunks if "| rate |" in c.text)
    best = _block(first.evidence_key, first.text, 0.9, first.breadcrumb)
    selection = EvidenceSelection(blocks=[best])
    settings = LookupSettings(
        milvus_uri=str(tmp_path / "kb.db"),
        section_expand_chars=20_000,
        context_budget_chars=3000,
        table_rows=3,
    )
    reserve = rows_room(selection, lambda source: stored, settings, QUESTION)
    added = rows_for(first.text, document_tables(stored), query_terms(QUESTION), 3)
    assert reserve == shown_size(f"{first.text.rstrip()}\n\n{added}") - shown_size(first.text)
    assert rows_room(selection, lambda source: [], settings, QUESTION) == 0

    def neighbours(keys):
        return {c.evidence_key: Neighbour(c.ordinal, c.breadcrumb, c.text) for c in chunks}

    room = agent_first_block_room(selection.blocks, settings)
    assert expand_for_agent(selection, neighbours, settings).blocks[0] != best
    no_room = room - shown_size(best.content)
    assert expand_for_agent(selection, neighbours, settings, no_room) is selection
    grown = expand_for_agent(selection, neighbours, settings, reserve)
    assert shown_size(grown.blocks[0].content) <= room - reserve
    shown = add_rows_for_agent(grown, lambda source: stored, settings, QUESTION)
    assert NODELAY in shown.blocks[0].content or NODELAY in grown.blocks[0].content
    assert shown_size(shown.blocks[0].content) <= room


def test_only_the_tail_of_a_cut_row_is_joined_to_it():
    stored = [
        (0, "p > Attributes", f"{HEADER}\n|---|---|---|---|---|---|\n| nodelay | boolean"),
        (1, "p > Attributes", "Send a few requests to see the burst delayed."),
    ]
    rows = document_tables(stored)[0].rows
    assert rows == ["| nodelay | boolean"]
