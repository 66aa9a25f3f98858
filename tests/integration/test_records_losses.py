"""The records queue is bounded and never loses a row unseen, under real faults: a SQLite records
file held locked by another process (no row can be written), then released.

Past ``max_waiting`` unwritten rows the newest is dropped; every drop is counted in the
recorder, the lookup's trace, a warning line, a ``tool_invocation_loss`` row once the database
answers, and ``report`` / ``records status``. Rows still unwritten at exit are counted the same
way, in ``<data_dir>/records_lost.jsonl`` when the database cannot take the count.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.recording import RecordingNotDone, SqlInvocationRecorder
from tests.cli_helpers import run_cli
from tests.fakes import call
from tests.faults import sqlite_write_locked_by_another_process

REPO = Path(__file__).resolve().parents[2]


def result(query: str) -> LookupResult:
    return LookupResult(query=query, found=False, evidence_status="no_evidence", message="none")


def test_a_full_queue_drops_the_newest_counts_it_and_persists_the_count(tmp_path, caplog):
    db = tmp_path / "records.sqlite3"
    url = f"sqlite:///{db}"
    recorder = SqlInvocationRecorder(url, timeout_s=0.3, retry_after_s=600, max_waiting=20)
    dropped = []
    with sqlite_write_locked_by_another_process(db, wal=True), caplog.at_level(logging.WARNING):
        for i in range(50):
            try:
                recorder.enqueue(result=result(f"q{i}"), details={})
            except RecordingNotDone as exc:
                dropped.append((i, exc.row, str(exc)))
        assert recorder.backlog <= 20  # bounded: never more than max_waiting held
        assert recorder.losses.total == len(dropped) == 30
        assert {row for _, row, _ in dropped} == {"dropped"}
        assert "records queue full" in dropped[0][2]
        assert [i for i, _, _ in dropped] == list(range(20, 50))  # the newest go
        summary = recorder.losses.summary()
        assert summary is not None
        assert summary["dropped"] == 30
        warnings = [
            r.getMessage() for r in caplog.records if "records queue full" in r.getMessage()
        ]
        assert warnings  # said once (a line a minute), not once per row
        assert len(warnings) < 30
    assert recorder.flush(timeout_s=30) == 0  # the lock is gone: the kept rows are written
    rows = recorder.rows(limit=100)
    recorder.dispose()
    assert sorted(r["query"] for r in rows) == sorted(f"q{i}" for i in range(20))
    code, out, err = run_cli(["records", "status", "--db", url, "--json"])
    assert code == 0, err
    status = json.loads(out)
    assert status["records"] == 20
    assert status["records_lost"]["rows"] == 30
    assert "tool_invocation_loss" in status["records_lost"]["kept_in"]
    code, out, err = run_cli(["report", "--db", url, "--since", "1d", "--group-by", "terms"])
    assert code == 0, err
    assert "30 records dropped since " in out


def test_the_lookup_whose_row_is_dropped_is_told_in_its_trace(
    kb_settings, real_embeddings, tmp_path
):
    db = tmp_path / "records.sqlite3"
    recorder = SqlInvocationRecorder(
        f"sqlite:///{db}", timeout_s=0.5, retry_after_s=600, max_waiting=1
    )
    settings = kb_settings.model_copy(update={"record_wait": False})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings, recorder=recorder)
    with sqlite_write_locked_by_another_process(db, wal=True):
        first = tool.invoke(call("my pod keeps crashing and restarting"))
        second = tool.invoke(call("PVC stuck in Pending"))
    assert first.artifact["retrievalTrace"]["recording"] == {"status": "queued"}
    recording = second.artifact["retrievalTrace"]["recording"]
    assert recording["status"] == "error"
    assert recording["row"] == "dropped"
    assert recording["dropped"] == 1
    assert "droppedSince" in recording
    assert second.status == "success"  # a lost record never fails the lookup
    recorder.flush(timeout_s=30)
    recorder.dispose()


EXIT_WHILE_LOCKED = """
import sys
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.recording import recorder_for
settings = LookupSettings(data_dir=sys.argv[1], record_timeout_s=0.3)
recorder = recorder_for(settings)
for i in range(5):
    result = LookupResult(query=f"q{i}", found=False, evidence_status="no_evidence", message="m")
    recorder.enqueue(result=result, details={})
"""


def test_rows_not_written_at_exit_are_counted_and_reported(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    db = data / "invocations.sqlite3"
    with sqlite_write_locked_by_another_process(db, wal=True):
        done = subprocess.run(
            [sys.executable, "-c", EXIT_WHILE_LOCKED, str(data)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
    assert done.returncode == 0, done.stderr
    assert "5 tool_invocation rows lost at exit" in done.stderr
    lost_file = data / "records_lost.jsonl"
    assert f"kept in {lost_file}" in done.stderr
    (entry,) = [json.loads(line) for line in lost_file.read_text().splitlines()]
    assert entry["rows_lost"] == 5
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(data))
    code, out, err = run_cli(["records", "status"])
    assert code == 0, err
    assert "0 lookup records" in out
    assert "5 records dropped since " in out


@pytest.mark.parametrize("waiting", [0, 3])
def test_rows_written_leave_no_loss_behind(tmp_path, waiting):
    """The control: nothing held, nothing lost, nothing said."""
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    recorder = SqlInvocationRecorder(url, timeout_s=5, max_waiting=10)
    for i in range(waiting):
        recorder.enqueue(result=result(f"q{i}"), details={})
    assert recorder.flush(timeout_s=30) == 0
    recorder.dispose()
    assert recorder.losses.summary() is None
    code, out, err = run_cli(["records", "status", "--db", url])
    assert code == 0, err
    assert out.splitlines() == [f"{waiting} lookup records", "0 records dropped"]
