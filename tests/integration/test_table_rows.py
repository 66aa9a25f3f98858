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
    # one block: the test is about what the first block shows, not about the blocks after it
    update = {"table_rows": rows, "top_k": 1}
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
