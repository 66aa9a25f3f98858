"""Crash-safe ingest: a subprocess ingesting a generated 300-file knowledge base is SIGKILLed
midway; the re-run converges to exactly the state of a clean ingest (same chunks, no duplicate
evidence keys, no orphaned chunks, no catalog entry without its chunks).

Two kill points: from outside once 40 documents are done (wherever the ingest then is), and from
inside at the worst moment, after a group's chunks are written and before its catalog entries.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.store.catalog_store import load_catalog
from langchain_lookup_knowledge.store.connection import close_client, open_client
from langchain_lookup_knowledge.store.schema import ensure_loaded

FILES = 300
KILL_AFTER_DOCS = 40
INGEST_SCRIPT = """
import os, signal, sys
from pathlib import Path
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge import ingest, ingest_write

kb, db, marker, kill_point = sys.argv[1:5]
settings = LookupSettings(data_dir=Path(db).parent, milvus_uri=db, collection="crash_kb",
                          chunk_size=200, chunk_overlap=20, insert_batch_size=16,
                          record_invocations=False)

def progress(source, done, total):
    Path(marker).write_text(f"{done} {total}")

if kill_point == "before_catalog":  # die after the 3rd group's chunks, before its entries
    write_entries, groups = ingest_write.upsert_entries, []
    def upsert_entries(client, collection, entries):
        groups.append(1)
        if len(groups) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        write_entries(client, collection, entries)
    ingest_write.upsert_entries = upsert_entries

ingest.ingest_folder(kb, settings, on_progress=progress, show_progress=False)
Path(marker).write_text("finished")
"""
TOPICS = ["disk", "memory", "network", "certificate", "queue", "replica", "dns", "cpu"]


def generate_kb(root: Path) -> Path:
    """300 short runbooks in 6 categories; every third one has 4 chunks (of 200 characters)."""
    kb = root / "kb"
    for i in range(FILES):
        topic = TOPICS[i % len(TOPICS)]
        category = f"cat{i % 6}"
        sections = 4 if i % 3 == 0 else 1
        body = "\n\n".join(
            f"## Step {s}\n" + f"Check the {topic} of service {i} (step {s}). " * 3
            for s in range(sections)
        )
        path = kb / category / f"runbook-{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: Runbook {i} {topic} alert\nkeywords: [{topic}{i}]\n---\n"
            f"# Runbook {i}\n{body}\n",
            encoding="utf-8",
        )
    return kb


def kb_settings(db: Path) -> LookupSettings:
    return LookupSettings(
        data_dir=db.parent,
        milvus_uri=str(db),
        collection="crash_kb",
        chunk_size=200,
        chunk_overlap=20,
        record_invocations=False,
    )


def store_state(settings: LookupSettings) -> tuple[list[str], Counter, dict[str, int]]:
    """(chunk evidence keys, chunks per source, catalog chunk_count per source)."""
    client = open_client(settings)
    try:
        ensure_loaded(client, settings.collection)
        rows = client.query(
            settings.collection, filter='pk != ""', output_fields=["pk", "source"], limit=16384
        )
        catalog = load_catalog(client, settings.resolved_catalog_collection)
    finally:
        close_client(settings)
    return (
        [r["pk"] for r in rows],
        Counter(r["source"] for r in rows),
        {e.source: e.chunk_count for e in catalog},
    )


def kill_midway(kb: Path, db: Path, marker: Path, kill_point: str) -> None:
    """Run the ingest script; SIGKILL its process group after KILL_AFTER_DOCS documents (or let
    it kill itself at ``before_catalog``)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", INGEST_SCRIPT, str(kb), str(db), str(marker), kill_point],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while kill_point == "polled" and proc.poll() is None:
            text = marker.read_text() if marker.exists() else ""
            if text and text != "finished" and int(text.split()[0]) >= KILL_AFTER_DOCS:
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.05)
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""


@pytest.fixture(scope="module")
def clean_reference(tmp_path_factory, real_embeddings):
    """The knowledge base, and the store state of one uninterrupted ingest of it."""
    root = tmp_path_factory.mktemp("crash_kb")
    kb = generate_kb(root)
    settings = kb_settings(root / "clean.db")
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    keys, per_source, catalog = store_state(settings)
    assert len(keys) == report.total_chunks > FILES  # several chunks for some files
    assert len(catalog) == FILES
    return kb, keys, per_source, catalog


@pytest.mark.slow
@pytest.mark.parametrize("kill_point", ["polled", "before_catalog"])
def test_sigkilled_ingest_rerun_matches_a_clean_ingest(
    tmp_path, real_embeddings, clean_reference, kill_point
):
    kb, clean_keys, clean_per_source, clean_catalog = clean_reference
    crashed = kb_settings(tmp_path / "crashed.db")

    kill_midway(kb, Path(crashed.resolved_milvus_uri), tmp_path / "progress", kill_point)
    keys, per_source, catalog = store_state(crashed)
    assert 0 < len(catalog) < FILES  # killed midway
    orphans = {s for s in per_source if s not in catalog}
    if kill_point == "before_catalog":
        assert orphans  # chunks written, their catalog entries not: what the re-run must fix

    rerun = ingest_folder(kb, crashed, embeddings=real_embeddings, show_progress=False)
    assert not rerun.skipped
    assert len(rerun.unchanged) == len(catalog)  # finished documents are not redone
    assert orphans <= set(rerun.indexed)

    keys, per_source, catalog = store_state(crashed)
    assert len(keys) == len(set(keys))  # no duplicate evidence keys
    assert sorted(keys) == sorted(clean_keys)  # the same chunks as a clean ingest: none lost
    assert rerun.total_chunks == len(clean_keys)
    assert set(per_source) == set(catalog)  # no orphaned chunks, no entry without chunks
    assert dict(per_source) == catalog == dict(clean_per_source) == clean_catalog
