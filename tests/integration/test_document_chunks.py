"""Best chunks of the shown documents: the message shows the chunk of a shown document that
answers, though the search ranked its introduction.

Real Milvus Lite, the real embedder: a how-to page whose introduction and design sections match
the question best (the per-document cap shows two of them), while the statement that answers is
in its usage section, far from both.
"""

from __future__ import annotations

from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.document_chunks import store_documents_fetch
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.kb_helpers import write

ANSWER = "SET GLOBAL replica_read_target = 'follower';"
INTRO = " ".join(
    f"Follower reads let the follower replicas of a region serve reads, so a leader under heavy "
    f"read load sheds part of it to its followers; remark {i}."
    for i in range(4)
)
DESIGN = " ".join(
    f"The leader confirms its commit index before a follower replica answers a read, so reads "
    f"from followers stay consistent with the leader; detail {i}."
    for i in range(4)
)
FILLER = " ".join(
    f"The dashboard panel {i} charts region counts and the disk usage of every store."
    for i in range(8)
)
PAGE = "\n\n".join(
    [
        "# Follower reads",
        INTRO,
        "## Design",
        DESIGN,
        "## Monitoring",
        FILLER,
        "## Capacity",
        FILLER.replace("dashboard", "capacity"),
        "## Usage",
        "Enable it for every session of the cluster so that queries read from the followers:",
        f"```sql\n{ANSWER}\n```",
        "## History",
        FILLER.replace("dashboard", "history"),
    ]
)
RUNBOOK = "# Disk full\n\n## Fix\n\n" + " ".join(
    f"Step {i}: delete the old log files under /var/log/app and rotate them daily."
    for i in range(6)
)


def _ask(settings, chunks: int, question: str) -> tuple[str, dict]:
    tool = create_lookup_knowledge_tool(
        settings.model_copy(update={"best_document_chunks": chunks})
    )
    message = tool.invoke(
        {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": question}}
    )
    return str(message.content), message.artifact


def test_the_message_shows_the_answering_chunk_of_a_shown_document(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "docs/follower-reads.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    report = ingest_folder(kb, settings)
    assert report.chunks_written >= 6
    question = "the leader is overloaded by reads, let follower replicas serve the reads"
    plain, plain_artifact = _ask(settings, 0, question)
    shown, artifact = _ask(settings, 3, question)
    assert plain_artifact["evidenceBlocks"][0]["source"] == "docs/follower-reads.md"
    assert ANSWER not in plain
    assert f"> {ANSWER}" in shown
    # the same blocks, ranks and decision; what the plain message showed is shown, uncut
    keys = [b["evidenceKey"] for b in artifact["evidenceBlocks"]]
    assert keys == [b["evidenceKey"] for b in plain_artifact["evidenceBlocks"]]
    assert artifact["relevanceScore"] == plain_artifact["relevanceScore"]
    for line in plain.splitlines()[1:]:
        assert line in shown.splitlines()
    pack = artifact["contextPack"]
    assert pack["used"] <= pack["budget"]
    assert not pack["truncated"]
    assert "document_chunks" in artifact["retrievalTrace"]["timingsMs"]

    # a lookup whose documents hold no other chunk of the question reads the same message
    runbook_question = "disk is full because of old log files"
    assert _ask(settings, 3, runbook_question)[0] == _ask(settings, 0, runbook_question)[0]


def test_a_documents_chunks_read_by_key_and_by_source_are_the_same(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "docs/follower-reads.md", PAGE)
    write(kb, "runbooks/disk-full.md", RUNBOOK)
    ingest_folder(kb, settings)
    runtime = LookupRuntime(settings)
    counts = runtime.catalog.get().chunk_counts()
    sources = ["docs/follower-reads.md", "runbooks/disk-full.md"]
    by_key = store_documents_fetch(runtime.client, runtime.layout, 10, counts)(sources)
    by_source = store_documents_fetch(runtime.client, runtime.layout, 10)(sources)
    assert {s: sorted(c) for s, c in by_key.items()} == {s: sorted(c) for s, c in by_source.items()}
    assert len(by_key["docs/follower-reads.md"]) == counts["docs/follower-reads.md"]
    assert any(ANSWER in text for _, _, text in by_key["docs/follower-reads.md"])
