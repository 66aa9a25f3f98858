"""Option rows: the first block shows the row of its document's attribute table that answers.

Real Milvus Lite, the real embedder: a plugin page whose long attribute table the chunker splits
into fragments; the question matches the page's description, its answer is one row of the table.
"""

from __future__ import annotations

from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.kb_helpers import write

ROWS = [
    f"| redis_option_{i} | string | False | | Setting {i} of the Redis connection used when "
    f"`policy` is `redis`; ignored by the local counter of one instance. |"
    for i in range(16)
]
ANSWER = (
    "| let_burst_through | boolean | False | If true, do not delay requests within the burst. |"
)
DESCRIPTION = " ".join(
    f"The rate-guard plugin throttles a burst of requests: requests above the rate wait in a "
    f"queue before they reach the upstream, note {i}."
    for i in range(3)
)
PAGE = "\n".join(
    [
        "# rate-guard",
        "",
        "## Description",
        "",
        DESCRIPTION,
        "",
        "## Attributes",
        "",
        "| Name | Type | Required | Description |",
        "|------|------|----------|-------------|",
        "| rate | number | True | The maximum number of requests per second. |",
        *ROWS[:8],
        ANSWER,
        *ROWS[8:],
    ]
)
RUNBOOK = "# Disk full\n\n## Fix\n\n" + " ".join(
    f"Step {i}: delete the old log files under /var/log/app and rotate them daily."
    for i in range(6)
)


def _ask(settings, rows: int, question: str) -> tuple[str, dict]:
    # one block: the test is about what the first block shows, not about the blocks after it;
    # and about its rows, not its document's other chunks
    update = {"table_rows": rows, "top_k": 1, "best_document_chunks": 0}
    tool = create_lookup_knowledge_tool(settings.model_copy(update=update))
    message = tool.invoke(
        {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": question}}
    )
    return str(message.content), message.artifact


def test_the_first_block_shows_the_answering_row_of_its_documents_table(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "plugins/rate-guard.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    report = ingest_folder(kb, settings)
    assert report.chunks_written >= 4
    question = "rate-guard: requests of a burst should not be delayed, let them through"
    plain, plain_artifact = _ask(settings, 0, question)
    shown, artifact = _ask(settings, 3, question)
    assert plain_artifact["evidenceBlocks"][0]["source"] == "plugins/rate-guard.md"
    assert "let_burst_through" not in plain
    assert f"> {ANSWER}" in shown
    assert "> | Name | Type | Required | Description |" in shown
    assert artifact["relevanceScore"] == plain_artifact["relevanceScore"]
    assert artifact["contextPack"]["used"] <= artifact["contextPack"]["budget"]

    # a lookup whose document has no table reads the same message, byte for byte
    runbook_question = "disk is full because of old log files"
    assert _ask(settings, 3, runbook_question)[0] == _ask(settings, 0, runbook_question)[0]


def test_the_catalog_counts_each_documents_tables_and_a_table_free_one_is_never_read(
    settings, tmp_path, monkeypatch
):
    from langchain_lookup_knowledge.pipeline import nodes
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client

    kb = tmp_path / "kb"
    write(kb, "plugins/rate-guard.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    ingest_folder(kb, settings)
    entries = load_catalog(open_client(settings), settings.resolved_catalog_collection)
    assert {e.source: e.tables for e in entries} == {
        "plugins/rate-guard.md": 1,
        "runbooks/disk-full.md": 0,
    }

    read: list[list[str]] = []  # a spy on the real reads of whole documents
    real = nodes.store_documents_fetch

    def counting(*args, **kwargs):
        fetch = real(*args, **kwargs)

        def spied(sources):
            read.append(list(sources))
            return fetch(sources)

        return spied

    monkeypatch.setattr(nodes, "store_documents_fetch", counting)
    runbook_question = "disk is full because of old log files"
    shown, artifact = _ask(settings, 3, runbook_question)
    assert artifact["evidenceBlocks"][0]["source"] == "runbooks/disk-full.md"
    assert read == []
    assert shown == _ask(settings, 0, runbook_question)[0]
    _ask(settings, 3, "rate-guard: requests of a burst should not be delayed, let them through")
    assert read == [["plugins/rate-guard.md"]]


def test_a_reingest_counts_the_tables_of_documents_an_older_catalog_did_not(settings, tmp_path):
    import dataclasses

    from langchain_lookup_knowledge.store.catalog_store import load_catalog, upsert_entries
    from langchain_lookup_knowledge.store.connection import open_client

    kb = tmp_path / "kb"
    write(kb, "plugins/rate-guard.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    ingest_folder(kb, settings)
    client, catalog = open_client(settings), settings.resolved_catalog_collection
    # the catalog as an earlier version wrote it: no table counts
    upsert_entries(
        client,
        catalog,
        [dataclasses.replace(e, tables=None) for e in load_catalog(client, catalog)],
    )
    assert {e.tables for e in load_catalog(client, catalog)} == {None}

    report = ingest_folder(kb, settings)
    assert report.chunks_written == 0  # nothing changed: nothing embedded again
    assert sorted(report.unchanged) == ["plugins/rate-guard.md", "runbooks/disk-full.md"]
    assert {e.source: e.tables for e in load_catalog(client, catalog)} == {
        "plugins/rate-guard.md": 1,
        "runbooks/disk-full.md": 0,
    }
