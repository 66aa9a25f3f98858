"""``lookup-knowledge serve``: one Milvus Lite file shared by several real processes by its URI,
and the error a second process gets when it opens a Lite file another process holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.errors import ConfigurationError, LiteDatabaseLockedError
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.serve import check_loopback
from tests.fakes import call
from tests.faults import REPO, database_held_by_another_process, run_cli

CLI = (sys.executable, "-m", "langchain_lookup_knowledge.cli")


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("lookup-knowledge: error:")
    return lines[0]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen, str, Path]]:
    """``lookup-knowledge serve --port 0`` on a fresh Lite file, in its own process."""
    db = tmp_path / "kb.db"
    env = os.environ | {"LOOKUP_KNOWLEDGE_DATA_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [*CLI, "serve", "--uri", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith(f"serving {db} at http://127.0.0.1:"), first + proc.stderr.read()
        uri = first.split(" at ")[1].strip()
        assert f"--uri {uri}" in proc.stdout.readline()
        yield proc, uri, db
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        close_all_clients()


def test_served_file_is_shared_by_uri_and_stops_cleanly(served, tmp_path, real_embeddings):
    proc, uri, db = served
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "disk.md").write_text(
        "# Disk full on a node\n\nFree space with `du -sh /var/log/*` and rotate the logs.\n",
        encoding="utf-8",
    )
    (kb / "dns.md").write_text(
        "# DNS resolution fails\n\nCheck CoreDNS pods and /etc/resolv.conf.\n", encoding="utf-8"
    )
    # Another process ingests through the URI (BM25 included: the default hybrid collection).
    ingest = run_cli("ingest", str(kb), "--uri", uri, data_dir=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    # A third one queries through it...
    query = run_cli("query", "node disk is full", "--uri", uri, "--json", data_dir=tmp_path)
    assert query.returncode == 0, query.stderr
    result = json.loads(query.stdout)
    assert result["evidenceBlocks"][0]["source"] == "disk.md"
    # ... and so does this one (a notebook's tool), at the same time as the server holds the file.
    tool = create_lookup_knowledge_tool(
        LookupSettings(milvus_uri=uri, data_dir=tmp_path, record_invocations=False),
        embeddings=real_embeddings,
    )
    message = tool.invoke(call("DNS does not resolve"))
    assert message.status != "error", message.content
    assert message.artifact["evidenceBlocks"][0]["source"] == "dns.md"
    # The file itself is the server's: a process opening it directly is told how to share it.
    direct = run_cli("query", "node disk is full", "--uri", str(db), data_dir=tmp_path)
    line = _one_error_line(direct)
    assert str(db) in line
    assert "lookup-knowledge serve" in line
    close_all_clients()

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")
    # Stopped cleanly: the lock is released and the data is in the file.
    after = run_cli("query", "node disk is full", "--uri", str(db), "--json", data_dir=tmp_path)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["evidenceBlocks"][0]["source"] == "disk.md"


def test_sigint_stops_the_server(served):
    proc, _uri, db = served
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    assert proc.stderr is not None
    assert f"{db} is free" in proc.stderr.read()


def test_serving_a_file_another_process_holds_is_one_line_error(tmp_path):
    db = tmp_path / "held.db"
    with database_held_by_another_process(db):
        proc = run_cli("serve", "--uri", str(db), "--port", "0", data_dir=tmp_path)
    line = _one_error_line(proc)
    assert str(db) in line
    assert "locked by another process" in line


def test_a_second_process_gets_a_configuration_error_naming_the_file_and_the_fix(tmp_path):
    db = tmp_path / "held.db"
    settings = LookupSettings(milvus_uri=str(db), data_dir=tmp_path, record_invocations=False)
    with database_held_by_another_process(db):
        with pytest.raises(LiteDatabaseLockedError) as raised:
            open_client(settings)
        proc = run_cli("query", "disk full", "--uri", str(db), data_dir=tmp_path)
        message = create_lookup_knowledge_tool(settings).invoke(call("disk full"))
    assert isinstance(raised.value, ConfigurationError)
    for text in (str(raised.value), _one_error_line(proc), message.content):
        assert str(db) in text, text
        assert "lookup-knowledge serve" in text, text
    assert message.status == "error"
    assert message.content.startswith("Knowledge retrieval is misconfigured"), message.content


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_serve_refuses_a_non_loopback_bind(tmp_path, host):
    with pytest.raises(ConfigurationError, match="loopback"):
        check_loopback(host)
    proc = run_cli("serve", "--host", host, "--port", "0", data_dir=tmp_path)
    assert "refusing to serve" in _one_error_line(proc)
    assert not (tmp_path / "milvus.db").exists()
