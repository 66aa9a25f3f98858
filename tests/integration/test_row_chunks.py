"""Table rows as chunks of their own: a question about one option finds its row.

Real Milvus Lite, the real embedder: a plugin page whose long attribute table the chunker packs
into chunks of several rows; the question paraphrases one row's description.
"""

from __future__ import annotations

from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.integration.test_table_rows import ANSWER, PAGE, RUNBOOK
from tests.kb_helpers import write

HEADER = "| Name | Type | Required | Description |"
QUESTION = "rate-guard: requests of a burst should not be delayed, let them through"


def _ask(settings, question: str) -> tuple[str, dict]:
    # one block: the test is about what the first block shows, through its row chunks alone
    # (not the option rows or the best chunks its document would add)
    update = {"top_k": 1, "table_rows": 0, "best_document_chunks": 0}
    tool = create_lookup_knowledge_tool(settings.model_copy(update=update))
    message = tool.invoke(
        {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": question}}
    )
    return str(message.content), message.artifact


def test_a_row_chunk_shows_the_answering_row_under_its_header(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "plugins/rate-guard.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    plain_report = ingest_folder(kb, settings)
    plain, plain_artifact = _ask(settings, QUESTION)
    assert plain_artifact["evidenceBlocks"][0]["source"] == "plugins/rate-guard.md"
    assert "let_burst_through" not in plain

    # turning the setting on re-chunks every document (the chunking signature changed)
    rows_settings = settings.model_copy(update={"table_row_chunks": True})
    report = ingest_folder(kb, rows_settings)
    assert report.unchanged == []
    assert report.chunks_written == plain_report.chunks_written + 18  # rate, 16 options, answer
    # the same setting again: nothing to re-chunk, every row chunk found where it was written
    again = ingest_folder(kb, rows_settings)
    assert sorted(again.unchanged) == ["plugins/rate-guard.md", "runbooks/disk-full.md"]
    assert again.repaired == []

    shown, artifact = _ask(rows_settings, QUESTION)
    first = artifact["evidenceBlocks"][0]
    assert first["source"] == "plugins/rate-guard.md"
    assert f"> {HEADER}\n" in shown
    assert f"> {ANSWER}" in shown
    assert first["breadcrumb"].endswith("Attributes")
    assert artifact["contextPack"]["used"] <= artifact["contextPack"]["budget"]
