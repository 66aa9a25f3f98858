"""Table rows as chunks of their own: which rows, their text, breadcrumb, ordinals, signature,
their stored mark, and the evidence and neighbour reads that leave them out."""

from __future__ import annotations

from types import SimpleNamespace

from langchain_lookup_knowledge.ingest_write import _chunk_rows
from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.row_chunks import (
    TableRowChunk,
    row_signature,
    table_row_chunks,
)
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection, build_evidence_blocks
from langchain_lookup_knowledge.pipeline.expand import stored_chunks
from langchain_lookup_knowledge.pipeline.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.pipeline.rerank import rerank

HEADER = "| Name | Type | Description |"
ROWS = [
    "| rate | integer | The requests per second allowed. |",
    "| burst | integer | The requests per second delayed above the rate. |",
    "| nodelay | boolean | If true, do not delay requests within the burst. |",
]
PAGE = "\n".join(
    [
        "# limit-req",
        "Limits the request rate.",
        "## Attributes",
        HEADER,
        "|------|------|-------------|",
        *ROWS,
        "| x | 1 | |",
        "## Small",
        "| a | b |",
        "|---|---|",
        "| one short table | of two rows only |",
        "| second row | of the short table |",
        "## Code",
        "```",
        HEADER,
        "|---|---|---|",
        *ROWS,
        "```",
    ]
)


def _rows(page: str = PAGE) -> tuple[list, list[TableRowChunk]]:
    doc = parse_document(page.encode(), "plugins/limit-req.md")
    chunks = chunk_document(doc)
    return chunks, table_row_chunks(doc, chunks)


def test_each_row_of_a_long_table_outside_code_becomes_a_chunk_under_its_header() -> None:
    chunks, rows = _rows()
    assert [r.text.splitlines()[-1] for r in rows] == ROWS  # not the short row, table or code
    assert all(r.text.splitlines()[:2] == [HEADER, "|---|---|---|"] for r in rows)
    # the usual chunk packs the sections under the title; the row keeps its own section
    assert chunks[0].breadcrumb == "limit-req"
    assert {r.breadcrumb for r in rows} == {"limit-req > Attributes"}


def test_row_chunks_are_numbered_after_the_documents_chunks() -> None:
    chunks, rows = _rows()
    ordinals = [c.ordinal for c in chunks] + [r.ordinal for r in rows]
    assert ordinals == list(range(len(ordinals)))
    assert rows[0].evidence_key == f"plugins/limit-req.md#{len(chunks)}"


def test_a_document_without_tables_has_no_row_chunks() -> None:
    assert _rows("# Disk\n\nClean the logs.")[1] == []


def test_row_chunks_change_the_chunking_signature() -> None:
    assert row_signature("v8/1000/150", False) == "v8/1000/150"
    assert row_signature("v8/1000/150", True) != "v8/1000/150"


def test_a_row_chunk_is_marked_in_its_stored_metadata() -> None:
    chunks, rows = _rows()
    doc = parse_document(PAGE.encode(), "plugins/limit-req.md")
    layout = SimpleNamespace(
        id_field="pk",
        content_field="text",
        vector_field="vector",
        lexical_field=None,
        metadata_field="metadata",
        category_field=None,
        source_field=None,
    )
    both = [chunks[0], rows[0]]
    stored = _chunk_rows(both, [c.text for c in both], layout, doc)  # type: ignore[arg-type]
    assert "table_row" not in stored[0]["metadata"]
    assert stored[1]["metadata"]["table_row"] is True
    # neighbour reads (small-to-big, the option rows) see the usual chunks only
    assert list(stored_chunks(stored, layout)) == [chunks[0].evidence_key]


def _candidate(key: str, content: str, similarity: float, row: bool = False) -> Candidate:
    label = ScoreLabel(
        path="sdk", metric="COSINE", raw=similarity, similarity=similarity, formula="s"
    )
    return Candidate(
        evidence_key=key,
        source=key.split("#")[0],
        content=content,
        rank=1,
        score_label=label,
        metadata={"table_row": True} if row else {},
    )


def _selection(table_similarity: float, row_similarity: float) -> EvidenceSelection:
    """The evidence of a table chunk (a.md#1) and the row chunk of its third row (a.md#9)."""
    table = "\n".join([HEADER, "|---|---|---|", *ROWS])
    row = "\n".join([HEADER, "|---|---|---|", ROWS[2]])
    scored = rerank(
        [
            _candidate("a.md#1", table, table_similarity),
            _candidate("a.md#9", row, row_similarity, row=True),
        ],
        "nodelay burst delay",
        None,
    )
    return build_evidence_blocks(
        scored, top_k=5, per_document_cap=2, min_similarity=0.1, l0_participated=False
    )


def test_a_row_a_better_block_of_its_document_shows_is_no_block() -> None:
    selection = _selection(table_similarity=0.8, row_similarity=0.6)
    assert [b.evidence_key for b in selection.blocks] == ["a.md#1"]
    assert selection.dropped_shown_rows == 1
    assert selection.counts()["dropped_shown_rows"] == 1

    selection = _selection(table_similarity=0.5, row_similarity=0.9)
    assert [b.evidence_key for b in selection.blocks] == ["a.md#9", "a.md#1"]
    assert selection.dropped_shown_rows == 0
