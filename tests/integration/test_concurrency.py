"""Concurrent use: 20 ``ainvoke`` lookups while another collection is ingested in the same
process, and one tool (one shared Milvus client) used from two threads, each with its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.store.catalog_store import load_catalog
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.fakes import call

SAMPLE_KB = Path(__file__).resolve().parents[2] / "langchain_lookup_knowledge" / "sample_kb"
QUESTIONS = [
    ("my pod keeps crashing and restarting", "kubernetes/pod-crashloopbackoff.md"),
    ("postgres replica is falling behind the primary", None),
    ("ingress returns 502 bad gateway", None),
    ("数据库连接数满了怎么办", None),
    ("recipe for chocolate cake", None),
]


def generated_kb(root: Path, files: int = 60) -> Path:
    kb = root / "incoming"
    for i in range(files):
        path = kb / f"team{i % 3}" / f"note-{i:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# Note {i}\n## Symptom\nQueue {i} is growing. " * 2
            + f"\n## Fix\nScale consumer {i}.\n",
            encoding="utf-8",
        )
    return kb


@pytest.mark.slow
async def test_20_concurrent_lookups_while_another_collection_is_ingested(
    settings, real_embeddings
):
    ingest_folder(SAMPLE_KB, settings, embeddings=real_embeddings, show_progress=False)
    other = settings.model_copy(
        update={
            "collection": "incoming",
            "insert_batch_size": 8,
            "chunk_size": 200,
            "chunk_overlap": 20,
        }
    )
    kb = generated_kb(Path(settings.data_dir))
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)

    first_group_written, lookups_started = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def on_progress(source: str, done: int, total: int) -> None:
        first_group_written.set()
        lookups_started.wait(60)  # hold the ingest until the lookups run beside it

    def ingest() -> None:
        try:
            outcome["report"] = ingest_folder(
                kb, other, embeddings=real_embeddings, on_progress=on_progress, show_progress=False
            )
        except Exception as exc:  # reported by the assertion below
            outcome["error"] = exc

    thread = threading.Thread(target=ingest)
    thread.start()
    try:
        assert await asyncio.to_thread(first_group_written.wait, 120)
        tasks = [
            asyncio.create_task(tool.ainvoke(call(QUESTIONS[i % 5][0], f"call-{i}")))
            for i in range(20)
        ]
        await asyncio.sleep(0)
        assert thread.is_alive()  # the ingest is mid-way (held in its progress callback)
        lookups_started.set()
        messages = await asyncio.gather(*tasks)
    finally:
        lookups_started.set()
        await asyncio.to_thread(thread.join, 300)

    assert "error" not in outcome, outcome.get("error")
    assert [m.status for m in messages] == ["success"] * 20, [m.content for m in messages]
    for i, message in enumerate(messages):
        expected = QUESTIONS[i % 5][1]
        if expected:
            assert message.artifact["evidenceBlocks"][0]["source"] == expected
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows(limit=100)
    assert len(rows) == 20
    assert all(r["error"] is None for r in rows)
    report = outcome["report"]
    catalog = load_catalog(open_client(other), other.resolved_catalog_collection)
    assert len(report.indexed) == len(catalog) == 60  # the ingest lost nothing either


def test_one_tool_shared_by_two_threads_each_with_its_own_event_loop(
    sample_kb_store, real_embeddings, tmp_path
):
    settings = sample_kb_store.model_copy(
        update={"invocation_db_url": f"sqlite:///{tmp_path / 'records.sqlite3'}"}
    )
    runtime = LookupRuntime.configured(settings, embeddings=real_embeddings)
    graph = build_lookup_graph(runtime=runtime)
    tool = create_lookup_knowledge_tool(settings, graph=graph)

    def worker(thread_no: int) -> list:
        async def lookups() -> list:
            return await asyncio.gather(
                *(
                    tool.ainvoke(call(QUESTIONS[(thread_no + i) % 5][0], f"t{thread_no}-{i}"))
                    for i in range(4)
                )
            )

        return asyncio.run(lookups())

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(worker, n) for n in range(2)]
        sync_message = tool.invoke(call(QUESTIONS[0][0], "main"))  # and a sync call beside
        messages = [m for f in futures for m in f.result(timeout=240)]

    assert [m.status for m in [*messages, sync_message]] == ["success"] * 9
    assert runtime.client is open_client(settings)  # one shared client
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows(limit=100)
    assert len(rows) == 9
