"""Crash-safe ingest: a subprocess ingesting a generated 300-file knowledge base is SIGKILLed
midway; the re-run converges to exactly the state of a clean ingest (same chunks, no duplicate
evidence keys, no orphaned chunks, no catalog entry without its chunks).
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
COLLECTION = "crash_kb"
INGEST_SCRIPT = """
import sys
from pathlib import Path
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.ingest import ingest_folder

kb, db, marker = sys.argv[1:4]
settings = LookupSettings(data_dir=Path(db).parent, milvus_uri=db, collection="crash_kb",
                          chunk_size=200, chunk_overlap=20, insert_batch_size=16,
                          record_invocations=False)

def progress(source, done, total):
    Path(marker).write_text(f"{done} {total}")

ingest_folder(kb, settings, on_progress=progress, show_progress=False)
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
        path.write_text(f"---\ntitle: Runbook {i} {topic} alert\nkeywords: [{topic}{i}]\n---\n"
                        f"# Runbook {i}\n{body}\n", encoding="utf-8")
    return kb


def store_state(settings: LookupSettings) -> tuple[list[str], Counter, dict[str, int]]:
    """(chunk evidence keys, chunks per source, catalog chunk_count per source)."""
    client = open_client(settings)
    ensure_loaded(client, settings.collection)
    rows = client.query(settings.collection, filter='pk != ""', output_fields=["pk", "source"],
                        limit=16384)
    catalog = load_catalog(client, settings.resolved_catalog_collection)
    return ([r["pk"] for r in rows], Counter(r["source"] for r in rows),
            {e.source: e.chunk_count for e in catalog})


def kill_midway(kb: Path, db: Path, marker: Path) -> str:
    """Run the ingest script and SIGKILL its whole process group once a few groups are done."""
    proc = subprocess.Popen([sys.executable, "-c", INGEST_SCRIPT, str(kb), str(db), str(marker)],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None:
            text = marker.read_text() if marker.exists() else ""
            if text and text != "finished" and int(text.split()[0]) >= 40:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"ingest ended before the kill: {proc.stderr.read()}"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return marker.read_text()


@pytest.mark.slow
def test_sigkilled_ingest_rerun_matches_a_clean_ingest(tmp_path, real_embeddings):
    kb = generate_kb(tmp_path)
    crashed = LookupSettings(data_dir=tmp_path, milvus_uri=str(tmp_path / "crashed.db"),
                             collection=COLLECTION, chunk_size=200, chunk_overlap=20,
                             record_invocations=False)
    clean = crashed.model_copy(update={"milvus_uri": str(tmp_path / "clean.db")})

    progress = kill_midway(kb, Path(crashed.resolved_milvus_uri), tmp_path / "progress")
    done = int(progress.split()[0])
    try:
        keys, _, catalog = store_state(crashed)
        assert done <= len(catalog) < FILES  # killed midway: part of the catalog is written

        rerun = ingest_folder(kb, crashed, embeddings=real_embeddings, show_progress=False)
        assert not rerun.skipped
        assert len(rerun.unchanged) == len(catalog)  # finished documents are not redone
        reference = ingest_folder(kb, clean, embeddings=real_embeddings, show_progress=False)

        keys, per_source, catalog = store_state(crashed)
        clean_keys, clean_per_source, clean_catalog = store_state(clean)
    finally:
        close_client(crashed)
        close_client(clean)

    assert len(clean_keys) == reference.total_chunks > FILES  # several chunks for some files
    assert rerun.total_chunks == reference.total_chunks
    assert len(keys) == len(set(keys))  # no duplicate evidence keys
    assert sorted(keys) == sorted(clean_keys)  # the same chunks, nothing lost
    assert set(per_source) == set(catalog) == set(clean_catalog)  # no orphans either way
    assert len(catalog) == FILES
    assert dict(per_source) == catalog == dict(clean_per_source)  # entries match their chunks
