"""Ingest hardening (issue 13's ingest side, issue 14's ingest items): one bad thing never costs
the rest.

Real faults throughout: links and FIFOs on the real filesystem, poison files, a local
OpenAI-compatible embedding server that answers NaN / infinity / zero vectors, a subprocess
SIGKILLed mid-write, rows damaged with raw pymilvus, a full tmpfs, a read-only bind mount, a
network namespace without loopback. Milvus Lite in temporary folders, the real embedder.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.errors import (
    ConfigurationError,
    EmbeddingError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.store.catalog_store import load_catalog
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.schema import ensure_loaded
from langchain_lookup_knowledge.store.vocabulary_store import load_vocabulary
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.cli_helpers import run_cli
from tests.fakes import call
from tests.faults import QuietHandler, serve_on_loopback
from tests.kb_helpers import write

DIM = 8
REPO = Path(__file__).resolve().parents[2]


def runbook(title: str, words: str = "disk space cleanup") -> str:
    return f"---\ntitle: {title}\nkeywords: [{words.split()[0]}]\n---\n# {title}\n\n{words}.\n"


def healthy_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 + 0.01 for b in digest[:DIM]]


@contextlib.contextmanager
def embedding_server(mode: list[str]) -> Iterator[str]:
    """A local OpenAI-compatible ``/v1/embeddings`` answering ``mode[0]`` vectors: "healthy"
    (hash-derived), "nan", "inf" or "zero". ``mode`` is a one-item list the test may change."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server names it
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            texts = request["input"]
            texts = [texts] if isinstance(texts, str) else texts
            data = []
            for i, text in enumerate(texts):
                vector = {
                    "healthy": healthy_vector(str(text)),
                    "nan": [float("nan")] * DIM,
                    "inf": [float("inf")] + [1.0] * (DIM - 1),
                    "zero": [0.0] * DIM,
                }[mode[0]]
                value: object = vector
                if request.get("encoding_format") == "base64":
                    value = base64.b64encode(struct.pack(f"<{DIM}f", *vector)).decode()
                data.append({"object": "embedding", "index": i, "embedding": value})
            body = json.dumps(
                {
                    "object": "list",
                    "data": data,
                    "model": "m",
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serve_on_loopback(Handler) as url:
        yield url


def chunk_keys(settings: LookupSettings) -> list[str]:
    client = open_client(settings)
    if not client.has_collection(settings.collection):
        return []
    ensure_loaded(client, settings.collection)
    rows = client.query(settings.collection, filter='pk != ""', output_fields=["pk"], limit=16384)
    return sorted(r["pk"] for r in rows)


def catalog_row(settings: LookupSettings, source: str) -> dict:
    """The stored catalog row of ``source``, every field."""
    [row] = open_client(settings).query(
        settings.resolved_catalog_collection,
        filter=f'source == "{source}"',
        output_fields=["*"],
    )
    return row


def catalog(settings: LookupSettings) -> dict:
    entries = load_catalog(open_client(settings), settings.resolved_catalog_collection)
    return {e.source: e for e in entries}


# --------------------------------------------------------------------------------------------
# Garbage vectors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", ["nan", "inf", "zero"])
def test_garbage_vectors_are_refused_at_ingest_and_query_and_a_healthy_rerun_repairs(
    settings, tmp_path, garbage
):
    kb = tmp_path / "kb"
    for i in range(3):
        write(kb, f"ops/doc{i}.md", runbook(f"Disk {i}"))
    mode = [garbage]
    with embedding_server(mode) as base_url:
        service = settings.model_copy(
            update={
                "embedding_provider": "openai",
                "openai_base_url": base_url,
                "embedding_max_retries": 0,
            }
        )
        with pytest.raises(EmbeddingError, match="unusable vector"):
            ingest_folder(kb, service, show_progress=False)
        assert chunk_keys(service) == []  # nothing garbage stored
        assert catalog(service) == {}

        mode[0] = "healthy"
        report = ingest_folder(kb, service, show_progress=False)
        assert sorted(report.indexed) == [f"ops/doc{i}.md" for i in range(3)]
        assert len(chunk_keys(service)) == 3

        mode[0] = garbage  # the service breaks again: a lookup says so instead of "no evidence"
        tool = create_lookup_knowledge_tool(service)
        message = tool.invoke(call("disk space cleanup"))
        assert message.status == "error"
        assert "unusable vector" in message.content


class ZeroEmbeddings:
    """FAKE embedder (named as such) whose document vectors are all zeros after the first
    call (the dimension probe), as a broken model would answer: passed straight to
    ingest_folder, past the factory's check."""

    def embed_query(self, text: str) -> list[float]:
        return healthy_vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[0.0] * DIM for _ in texts]


def test_an_embedder_passed_in_is_checked_too(settings, tmp_path):
    kb = tmp_path / "kb"
    write(kb, "ops/doc.md", runbook("Disk"))
    with pytest.raises(EmbeddingError, match=r"chunk ops/doc.md#0 \(all-zero vector"):
        ingest_folder(kb, settings, embeddings=ZeroEmbeddings(), show_progress=False)  # type: ignore[arg-type]
    assert chunk_keys(settings) == []


def good_kb(root: Path, count: int = 5) -> Path:
    kb = root / "kb"
    for i in range(count):
        write(kb, f"ops/good{i}.md", runbook(f"Good runbook {i}", f"disk{i} space cleanup"))
    return kb


def skipped_reasons(report) -> dict[str, str]:
    return {s.source: s.reason for s in report.skipped}


def all_text(settings: LookupSettings) -> str:
    ensure_loaded(open_client(settings), settings.collection)
    rows = open_client(settings).query(
        settings.collection, filter='pk != ""', output_fields=["text", "metadata"], limit=16384
    )
    return "\n".join(r["text"] + json.dumps(r["metadata"]) for r in rows)


# --------------------------------------------------------------------------------------------
# Symlinks, loops, FIFOs
# --------------------------------------------------------------------------------------------

SECRET = "aws_secret_access_key = AKIAEXFILTRATEDSECRET"


def test_links_outside_the_folder_loops_and_fifos_are_skipped_by_name(
    settings, tmp_path, real_embeddings
):
    kb = good_kb(tmp_path)
    outside = tmp_path / "home"
    write(outside, ".aws/credentials", SECRET)
    write(outside, "notes/secret.md", f"# Secret\n\n{SECRET}\n")
    (kb / "creds.md").symlink_to(outside / ".aws/credentials")
    (kb / "mounted").symlink_to(outside / "notes")
    (kb / "loop.md").symlink_to(kb / "loop.md")
    (kb / "inside.md").symlink_to(kb / "ops/good0.md")
    os.mkfifo(kb / "pipe.md")

    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)

    reasons = skipped_reasons(report)
    assert "outside the knowledge folder" in reasons["creds.md"]
    assert "outside the knowledge folder" in reasons["mounted"]
    assert "loop" in reasons["loop.md"]
    assert "FIFO" in reasons["pipe.md"]
    assert "not followed" in reasons["inside.md"]  # inside links only when asked
    assert sorted(report.indexed) == [f"ops/good{i}.md" for i in range(5)]
    assert "AKIAEXFILTRATEDSECRET" not in all_text(settings)
    # neither the target's text nor where it is: not in the report, the catalog or the
    # KB vocabulary (its terms would show that the secret file was read)
    assert str(outside) not in json.dumps(report.to_dict())
    assert ".aws" not in json.dumps(report.to_dict())
    assert set(catalog(settings)) == {f"ops/good{i}.md" for i in range(5)}
    vocabulary = load_vocabulary(open_client(settings), settings).vocabulary
    assert vocabulary is not None
    assert vocabulary.df("akiaexfiltratedsecret") == 0
    assert vocabulary.df("credentials") == 0


def test_links_inside_the_folder_are_followed_when_allowed(settings, tmp_path, real_embeddings):
    kb = good_kb(tmp_path, 2)
    write(tmp_path, "outside/secret.md", f"# Secret\n\n{SECRET}\n")
    (kb / "alias.md").symlink_to(kb / "ops/good0.md")
    (kb / "shared").symlink_to(kb / "ops")
    (kb / "ops/back").symlink_to(kb)  # a loop through a folder link
    (kb / "leak.md").symlink_to(tmp_path / "outside/secret.md")

    report = ingest_folder(
        kb, settings, embeddings=real_embeddings, show_progress=False, follow_links=True
    )

    reasons = skipped_reasons(report)
    assert {"alias.md", "shared/good0.md", "shared/good1.md"} <= set(report.indexed)
    assert "outside the knowledge folder" in reasons["leak.md"]
    assert "loop" in reasons["ops/back"]
    assert "AKIAEXFILTRATEDSECRET" not in all_text(settings)


# --------------------------------------------------------------------------------------------
# Poison files
# --------------------------------------------------------------------------------------------

ALIAS_BOMB = """---
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
# Bomb

body
"""


def test_poison_files_are_skipped_or_truncated_by_name_and_the_rest_indexed(
    settings, tmp_path, real_embeddings
):
    kb = good_kb(tmp_path)
    write(kb, "poison/deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n# Deep\n\nbody\n")
    write(kb, "poison/bomb.md", ALIAS_BOMB)
    (kb / "poison").joinpath(os.fsdecode(b"caf\xe9.md")).write_text("# Cafe\n\nbody\n")
    long_dir = kb / "poison" / ("d" * 250) / ("e" * 250) / ("f" * 250) / ("g" * 250) / ("h" * 10)
    write(long_dir, "long.md", "# Long path\n\nbody\n")
    write(kb, "poison/heading.md", "# " + "H" * 70_000 + "\n\nDisk space body text.\n")
    write(kb, "poison/summary.md", f"---\nsummary: {'s' * 100_000}\n---\n# Summary\n\nbody\n")
    keywords = ", ".join(f"kw{i}" for i in range(20_000))
    write(kb, "poison/keywords.md", f"---\nkeywords: [{keywords}]\n---\n# Keywords\n\nbody\n")

    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)

    reasons = skipped_reasons(report)
    assert "nested deeper than" in reasons["poison/deep.md"]
    assert "aliases" in reasons["poison/bomb.md"]
    assert reasons["poison/caf\\xe9.md"] == "file name is not UTF-8"
    [long] = [s for s in reasons if s.startswith("poison/ddd")]
    assert "path too long" in reasons[long]
    warnings = {w.source: w.reason for w in report.warnings}
    assert "headings longer than 500 characters truncated" in warnings["poison/heading.md"]
    assert "summary truncated to 2,000 of 100,000" in warnings["poison/summary.md"]
    assert "first 64 of 20000 terms" in warnings["poison/keywords.md"]
    expected = {f"ops/good{i}.md" for i in range(5)} | {
        "poison/heading.md",
        "poison/summary.md",
        "poison/keywords.md",
    }
    assert set(report.indexed) == expected
    entries = catalog(settings)
    assert len(entries["poison/heading.md"].title) == 500
    assert len(entries["poison/keywords.md"].keywords) == 64
    assert report.to_dict()["warnings"]  # the JSON summary carries them too


# --------------------------------------------------------------------------------------------
# Two folders, one collection
# --------------------------------------------------------------------------------------------


def two_folders(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "team-a", tmp_path / "team-b"
    write(a, "ops/disk.md", runbook("Team A disk runbook", "alpha disk"))
    write(a, "ops/a-only.md", runbook("Team A only", "alpha only"))
    write(b, "ops/disk.md", runbook("Team B disk runbook", "beta disk"))
    return a, b


def test_a_second_folder_without_a_namespace_is_refused_naming_the_first(
    settings, tmp_path, real_embeddings
):
    a, b = two_folders(tmp_path)
    ingest_folder(a, settings, embeddings=real_embeddings, show_progress=False)
    with pytest.raises(ConfigurationError) as caught:
        ingest_folder(b, settings, embeddings=real_embeddings, show_progress=False, prune=True)
    assert str(a.resolve()) in str(caught.value)
    assert "--source-prefix" in str(caught.value)
    entries = catalog(settings)  # A is untouched
    assert entries["ops/disk.md"].title == "Team A disk runbook"
    assert sorted(entries) == ["ops/a-only.md", "ops/disk.md"]


def test_two_folders_coexist_under_their_source_prefixes_and_prune_stays_in_its_own(
    settings, tmp_path, real_embeddings
):
    a, b = two_folders(tmp_path)
    for folder, prefix in ((a, "a"), (b, "b")):
        ingest_folder(
            folder, settings, embeddings=real_embeddings, show_progress=False, source_prefix=prefix
        )
    (b / "ops/disk.md").unlink()
    write(b, "ops/other.md", runbook("Team B other", "beta other"))
    report = ingest_folder(
        b, settings, embeddings=real_embeddings, show_progress=False, source_prefix="b", prune=True
    )
    assert report.pruned == ["b/ops/disk.md"]
    entries = catalog(settings)
    assert sorted(entries) == ["a/ops/a-only.md", "a/ops/disk.md", "b/ops/other.md"]
    assert entries["a/ops/disk.md"].title == "Team A disk runbook"
    keys = chunk_keys(settings)
    assert {k.rpartition("#")[0] for k in keys} == set(entries)


# --------------------------------------------------------------------------------------------
# The catalog is verified, not trusted
# --------------------------------------------------------------------------------------------

KILL_AFTER_FIRST_CHUNK_UPSERT = """
import os, signal, sys
from pathlib import Path
import pymilvus
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.ingest import ingest_folder

kb, db, collection = sys.argv[1:4]
settings = LookupSettings(data_dir=Path(db).parent, milvus_uri=db, collection=collection,
                          chunk_size=200, chunk_overlap=20, insert_batch_size=4,
                          record_invocations=False)
real_upsert = pymilvus.MilvusClient.upsert

def upsert(self, collection_name, data, *args, **kwargs):  # the injected fault
    result = real_upsert(self, collection_name, data, *args, **kwargs)
    if collection_name == collection:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

pymilvus.MilvusClient.upsert = upsert
ingest_folder(kb, settings, show_progress=False)
"""


def release_database(settings: LookupSettings) -> None:
    """Close our clients and stop this process's embedded Milvus Lite server for the database
    (pymilvus keeps it, and its lock, for the life of the process), so a subprocess can open it."""
    from milvus_lite.server_manager import server_manager_instance

    close_all_clients()
    server_manager_instance.release_server(settings.resolved_milvus_uri)


def small_chunk_settings(settings: LookupSettings) -> LookupSettings:
    return settings.model_copy(
        update={"chunk_size": 200, "chunk_overlap": 20, "insert_batch_size": 4}
    )


def long_runbook(word: str, sections: int) -> str:
    body = "\n\n".join(
        f"## Step {i}\n" + f"Check the {word} of node {i} before the restart. " * 3
        for i in range(sections)
    )
    return f"---\ntitle: Restart {word}\n---\n# Restart\n{body}\n"


@pytest.mark.slow
def test_killed_mid_edit_then_reverted_the_rerun_repairs(settings, tmp_path, real_embeddings):
    settings = small_chunk_settings(settings)
    kb = tmp_path / "kb"
    original = long_runbook("disk", 10)
    write(kb, "ops/restart.md", original)
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    clean = chunk_keys(settings)
    clean_text = all_text(settings)
    release_database(settings)

    write(kb, "ops/restart.md", long_runbook("memory", 10))  # the edit, killed mid-write
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            KILL_AFTER_FIRST_CHUNK_UPSERT,
            str(kb),
            settings.milvus_uri,
            settings.collection,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "memory" in all_text(settings)  # the kill left edited chunks behind

    write(kb, "ops/restart.md", original)  # the edit is reverted
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.indexed == ["ops/restart.md"]  # not "unchanged"
    assert chunk_keys(settings) == clean
    assert all_text(settings) == clean_text
    assert "memory" not in all_text(settings)


def test_deleted_chunks_are_reingested_though_the_catalog_stays(
    settings, tmp_path, real_embeddings
):
    kb = good_kb(tmp_path, 3)
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    client = open_client(settings)
    client.delete(settings.collection, filter='source == "ops/good1.md"')
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.indexed == ["ops/good1.md"]
    assert {r.source: r.reason for r in report.repaired} == {
        "ops/good1.md": "stored chunks differ from the catalog: 1 of 1 chunks missing"
    }
    assert len(chunk_keys(settings)) == 3

    client.drop_collection(settings.collection)  # every chunk gone, the catalog kept
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert sorted(report.indexed) == [f"ops/good{i}.md" for i in range(3)]
    assert len(chunk_keys(settings)) == 3


def test_a_damaged_catalog_row_fails_neither_lookup_nor_ingest_and_is_repaired(
    settings, tmp_path, real_embeddings
):
    kb = good_kb(tmp_path, 3)
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    row = catalog_row(settings, "ops/good1.md")
    row["info"] = {**row["info"], "keywords": 42}
    open_client(settings).upsert(settings.resolved_catalog_collection, [row])

    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    message = tool.invoke(call("disk1 space cleanup"))
    assert message.status == "success", message.content

    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.indexed == ["ops/good1.md"]
    assert "'keywords' is int, not a list" in report.repaired[0].reason
    assert catalog(settings)["ops/good1.md"].keywords == ("disk1",)


def test_a_bogus_catalog_row_is_removed_without_prune(settings, tmp_path, real_embeddings):
    kb = good_kb(tmp_path, 2)
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    row = catalog_row(settings, "ops/good1.md")
    row = {**row, "source": "ops/ghost.md", "title": "Ghost runbook"}
    open_client(settings).upsert(settings.resolved_catalog_collection, [row])

    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert "ops/ghost.md" not in catalog(settings)
    assert [r.source for r in report.repaired] == ["ops/ghost.md"]
    assert report.missing == []


def test_deleted_files_are_reported_as_no_longer_on_disk_without_prune(
    settings, tmp_path, real_embeddings
):
    kb = good_kb(tmp_path, 3)
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    (kb / "ops/good2.md").unlink()
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert report.missing == ["ops/good2.md"]
    assert report.to_dict()["missing"] == ["ops/good2.md"]
    report = ingest_folder(
        kb, settings, embeddings=real_embeddings, show_progress=False, prune=True
    )
    assert report.pruned == ["ops/good2.md"]
    assert report.missing == []


# --------------------------------------------------------------------------------------------
# Frontmatter
# --------------------------------------------------------------------------------------------

LICENCE = "<!--\n  Licensed under the Apache License, Version 2.0\n-->\n"


def test_frontmatter_after_a_licence_comment_is_parsed(settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(
        kb,
        "ops/licensed.md",
        LICENCE + "---\ntitle: Licensed runbook\nkeywords: [lic]\n---\n# Heading\n\nBody text.\n",
    )
    write(kb, "ops/ruler.md", LICENCE + "---\n\nNot: [yaml\n\n---\n\n# Ruler\n\nBody.\n")
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    entries = catalog(settings)
    assert entries["ops/licensed.md"].title == "Licensed runbook"
    assert entries["ops/licensed.md"].keywords == ("lic",)
    assert "title:" not in all_text(settings)
    assert {w.source for w in report.warnings} == {"ops/ruler.md"}  # read as text, warned


def test_empty_frontmatter_leaves_no_dashes_in_the_text(settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(kb, "ops/empty.md", "---\n---\n# Empty frontmatter\n\nBody text.\n")
    ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    [row] = open_client(settings).query(
        settings.collection, filter='pk != ""', output_fields=["text", "metadata"]
    )
    assert "---" not in row["text"]
    assert row["metadata"]["title"] == "Empty frontmatter"


# --------------------------------------------------------------------------------------------
# The CLI a docs CI runs
# --------------------------------------------------------------------------------------------


run_main = run_cli  # (exit code, stdout, stderr) of the CLI run in this process


def test_cli_strict_exits_1_on_skipped_files_and_reports_files_gone_from_disk(settings, tmp_path):
    kb = good_kb(tmp_path, 2)
    write(kb, "ops/broken.md", "---\ntitle: [unclosed\n---\n# Broken\n\nbody\n")
    store = ["--uri", settings.resolved_milvus_uri, "--collection", settings.collection]

    code, out, err = run_main(["ingest", str(kb), *store, "--strict"])
    assert code == 1, err
    assert "skipped ops/broken.md: malformed YAML frontmatter" in out
    code, out, _ = run_main(["ingest", str(kb), *store])  # without --strict: listed, exit 0
    assert code == 0
    assert "skipped ops/broken.md" in out

    (kb / "ops/good1.md").unlink()
    (kb / "ops/broken.md").unlink()
    code, out, _ = run_main(["ingest", str(kb), *store, "--strict"])
    assert code == 0
    assert "1 indexed documents are no longer on disk (run with --prune): ops/good1.md" in out
    code, out, _ = run_main(["ingest", str(kb), *store, "--prune", "--json"])
    assert json.loads(out)["pruned"] == ["ops/good1.md"]

    other = tmp_path / "other"
    write(other, "ops/good0.md", runbook("Other team"))
    code, _, err = run_main(["ingest", str(other), *store])
    assert code == 2
    assert f"ingested from {kb.resolve()}" in err
    code, out, _ = run_main(["ingest", str(other), *store, "--source-prefix", "other", "--json"])
    assert code == 0
    summary = json.loads(out)
    assert summary["indexed"] == 1
    assert "other/ops/good0.md" in catalog(settings)


# --------------------------------------------------------------------------------------------
# The database folder: read-only, no loopback, full disk
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def read_only_view(folder: Path, view: Path) -> Iterator[Path]:
    """``folder`` bind-mounted read-only at ``view`` (needs root; skips with the reason)."""
    view.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command here")
    bind = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot bind-mount (needs root): {bind.stderr.decode().strip()}")
    try:
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True)
        if ro.returncode != 0:
            pytest.skip(f"cannot remount read-only: {ro.stderr.decode().strip()}")
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=False)


def test_a_read_only_database_folder_gets_a_message_and_the_lookup_is_recorded(
    tmp_path, real_embeddings
):
    data = tmp_path / "data"
    data.mkdir()
    kb = good_kb(tmp_path, 1)
    writable = LookupSettings(
        data_dir=data,
        milvus_uri=str(data / "milvus.db"),
        collection="ro_kb",
        record_invocations=False,
    )
    ingest_folder(kb, writable, embeddings=real_embeddings, show_progress=False)
    release_database(writable)
    with read_only_view(data, tmp_path / "ro") as view:
        settings = writable.model_copy(
            update={
                "milvus_uri": str(view / "milvus.db"),
                "record_invocations": True,
                "invocation_db_url": f"sqlite:///{tmp_path / 'records.sqlite3'}",
            }
        )
        with pytest.raises(StoreUnavailableError, match="not writable \\(Read-only file system"):
            ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
        tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
        message = tool.invoke(call("disk0 space cleanup"))
        assert message.status == "error"
        assert "not writable" in message.content
        rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
        assert len(rows) == 1
        assert "not writable" in rows[0]["error"]


NO_LOOPBACK_OPEN = """
import sys
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.store.connection import open_client
try:
    open_client(LookupSettings(milvus_uri=sys.argv[1], record_invocations=False))
except StoreUnavailableError as exc:
    print(exc)
    print("cause:", type(exc.__cause__).__name__)
"""


def test_without_loopback_the_error_names_it_and_chains_the_cause(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare command here (util-linux)")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n unavailable: {probe.stderr.decode().strip()}")
    proc = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", NO_LOOPBACK_OPEN, str(tmp_path / "milvus.db")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert "cannot reach the embedded Milvus Lite server" in proc.stdout, proc.stderr
    assert "127.0.0.1" in proc.stdout
    assert "locked by another process" not in proc.stdout
    assert "cause: MilvusException" in proc.stdout


@contextlib.contextmanager
def small_tmpfs(mountpoint: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` at ``mountpoint`` (needs root; skips with the reason)."""
    mountpoint.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command here")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {done.stderr.decode().strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill_disk(mountpoint: Path, leave: int = 0) -> Path:
    """Fill the filesystem of ``mountpoint`` until at most ``leave`` bytes are free."""
    filler = mountpoint / "filler"
    with open(filler, "ab") as handle:
        while True:
            stats = os.statvfs(mountpoint)
            free = stats.f_bavail * stats.f_frsize
            if free <= leave:
                break
            try:
                handle.write(b"\0" * min(65536, max(4096, free - leave)))
                handle.flush()
            except OSError:
                break
    return filler


def run_cli_ingest(kb: Path, db: Path, data_dir: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"LOOKUP_KNOWLEDGE_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "langchain_lookup_knowledge.cli",
            "ingest",
            str(kb),
            "--uri",
            str(db),
            "--collection",
            "full_kb",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=REPO,
    )


def test_a_full_disk_fails_with_one_line_and_the_database_recovers_once_space_is_freed(
    tmp_path,
):
    kb = good_kb(tmp_path, 3)
    with small_tmpfs(tmp_path / "mnt", "1m") as mnt:
        filler = fill_disk(mnt)  # 0 bytes left: even the collection cannot be created
        proc = run_cli_ingest(kb, mnt / "milvus.db", tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, proc.stderr
        assert "no space left on the device" in lines[0]
        assert "free space, then run the ingest again" in lines[0]

        filler.unlink()  # space freed: the database is usable again (no "File exists")
        proc = run_cli_ingest(kb, mnt / "milvus.db", tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "3 indexed" in proc.stdout


def test_little_space_left_mid_ingest_fails_clearly_and_a_rerun_finishes(tmp_path, real_embeddings):
    kb = good_kb(tmp_path, 2)
    with small_tmpfs(tmp_path / "mnt", "2m") as mnt:
        settings = LookupSettings(
            data_dir=mnt,
            milvus_uri=str(mnt / "milvus.db"),
            collection="full_kb",
            record_invocations=False,
            insert_batch_size=8,
        )
        ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
        for i in range(60):
            write(kb, f"more/doc{i}.md", runbook(f"More {i}", f"more{i} " + "text " * 200))
        filler = fill_disk(mnt, leave=48 * 1024)
        with pytest.raises(StoreUnavailableError, match="no space left on the device"):
            ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)

        filler.unlink()
        report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
        assert len(report.indexed) + len(report.unchanged) == 62
        assert len(catalog(settings)) == 62
        assert len({k.rpartition("#")[0] for k in chunk_keys(settings)}) == 62


def test_a_batch_milvus_refuses_costs_only_the_refused_document(
    settings, tmp_path, real_embeddings, monkeypatch
):
    """INJECTED FAULT (named as such): pymilvus's upsert refuses any batch holding rows of
    ``ops/refused.md``, as a server with a stricter limit than ours would."""
    import pymilvus
    from pymilvus.exceptions import MilvusException

    kb = good_kb(tmp_path, 4)
    write(kb, "ops/refused.md", runbook("Refused runbook"))
    real_upsert = pymilvus.MilvusClient.upsert

    def upsert(self, collection_name, data, *args, **kwargs):
        if any(row.get("source") == "ops/refused.md" for row in data):
            raise MilvusException(message="injected: field value exceeds the server's limit")
        return real_upsert(self, collection_name, data, *args, **kwargs)

    monkeypatch.setattr(pymilvus.MilvusClient, "upsert", upsert)
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    assert sorted(report.indexed) == [f"ops/good{i}.md" for i in range(4)]
    assert "Milvus refused its rows: " in skipped_reasons(report)["ops/refused.md"]
    assert "injected" in skipped_reasons(report)["ops/refused.md"]
    assert "ops/refused.md" not in catalog(settings)
    assert len(chunk_keys(settings)) == 4


def test_a_moved_folder_is_not_a_second_folder(settings, tmp_path, real_embeddings):
    a, _ = two_folders(tmp_path)
    ingest_folder(a, settings, embeddings=real_embeddings, show_progress=False)
    moved = a.rename(tmp_path / "team-a-moved")
    report = ingest_folder(moved, settings, embeddings=real_embeddings, show_progress=False)
    assert sorted(report.unchanged) == ["ops/a-only.md", "ops/disk.md"]
