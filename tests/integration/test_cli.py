"""``lookup-knowledge ingest | query | demo``: outputs, exit codes, and one-line user errors.

The end-to-end part ingests ../shared/data/runbooks-en once for the module (skipped where the
shared data is absent) and asks it questions through the CLI and through the graph.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.cli import main
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.cli_helpers import run_cli
from tests.conftest import CONTRACT_KEYS, RUNBOOKS_EN, SAMPLE_KB, require_shared
from tests.kb_helpers import write, write_jsonl

CRASHLOOP_QUERY = "pod keeps crashing and restarting"
CONSOLE_SCRIPT = Path(sys.executable).with_name("lookup-knowledge")


run_main = run_cli  # (exit code, stdout, stderr) of the CLI run in this process


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the installed console script in a child process (what a user runs)."""
    command = (
        [str(CONSOLE_SCRIPT)]
        if CONSOLE_SCRIPT.exists()
        else [sys.executable, "-m", "langchain_lookup_knowledge.cli"]
    )
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def assert_one_line_error(stderr: str, *needles: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("lookup-knowledge: error: ")
    assert "Traceback" not in stderr
    for needle in needles:
        assert needle in lines[0]


# --- user errors: exit 2 and one clear line -----------------------------------------------


def test_ingest_missing_path_exits_2_with_one_line(tmp_path):
    missing = tmp_path / "no-such-folder"
    proc = run_script("ingest", str(missing), "--uri", str(tmp_path / "m.db"))
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, "knowledge folder not found", str(missing))
    assert proc.stdout == ""


def test_ingest_unusable_database_exits_2_with_one_line(tmp_path):
    kb = write(tmp_path, "kb/a.md", "# A\n\nSome text.\n").parent
    bad_uri = tmp_path / "missing-parent" / "x.db"
    proc = run_script("ingest", str(kb), "--uri", str(bad_uri))
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, "does not exist", str(bad_uri.parent))
    assert not bad_uri.parent.exists()


def test_ingest_into_a_file_that_is_not_a_database_exits_2(tmp_path):
    kb = write(tmp_path, "kb/a.md", "# A\n\nSome text.\n").parent
    not_db = write(tmp_path, "notes.db", "these are my notes, not a database\n")
    code, out, err = run_main(["ingest", str(kb), "--uri", str(not_db)])
    assert code == 2
    assert_one_line_error(err, "not a Milvus Lite database")
    assert out == ""


def test_query_without_a_question_exits_2(tmp_path):
    code, _, err = run_main(["query", "--uri", str(tmp_path / "m.db")])
    assert code == 2
    assert_one_line_error(err, "no query given")


def test_query_missing_queries_file_exits_2(tmp_path):
    code, _, err = run_main(
        ["query", "--queries-file", str(tmp_path / "q.txt"), "--uri", str(tmp_path / "m.db")]
    )
    assert code == 2
    assert_one_line_error(err, "questions file not found")


def test_query_before_ingest_exits_2_and_says_what_to_do(tmp_path):
    code, out, err = run_main(
        [
            "query",
            "disk full",
            "--uri",
            str(tmp_path / "m.db"),
            "--collection",
            "never_ingested",
            "--no-record",
        ]
    )
    assert code == 2
    assert_one_line_error(err, "never_ingested", "lookup-knowledge ingest")
    assert out == ""


def test_info_on_an_unknown_collection_names_the_ingested_ones(sample_kb_store):
    code, out, err = run_main(
        ["info", "--uri", sample_kb_store.milvus_uri, "--collection", "no_such_kb"]
    )
    assert code == 2
    assert_one_line_error(err, "no_such_kb", "lookup-knowledge ingest", "ingested there: sample_kb")
    assert out == ""


def assert_json_error(code: int, out: str, err: str, error_type: str, *needles: str) -> None:
    """A ``--json`` user error: exit 2, the stderr line, and the same message as one JSON
    object on stdout (a script that parses stdout reads the failure)."""
    assert code == 2
    assert_one_line_error(err, *needles)
    lines = out.splitlines()
    assert len(lines) == 1, out
    assert json.loads(lines[0]) == {
        "error": {
            "type": error_type,
            "message": err.strip().removeprefix("lookup-knowledge: error: "),
        }
    }


@pytest.mark.parametrize(
    ("argv", "env", "error_type", "needle"),
    [
        (["--collection", "never_ingested"], {}, "CollectionNotFoundError", "never_ingested"),
        (
            ["--uri", "http://127.0.0.1:1"],
            {"LOOKUP_KNOWLEDGE_MILVUS_TIMEOUT_S": "2"},
            "StoreUnavailableError",
            "cannot reach Milvus at http://127.0.0.1:1",
        ),
        (
            [],
            {"LOOKUP_KNOWLEDGE_DEFAULT_FILTER": '{"bad field!": "x"}'},
            "ConfigurationError",
            "invalid field name 'bad field!'",
        ),
    ],
    ids=["missing-collection", "unreachable-milvus", "bad-filter"],
)
def test_query_json_prints_a_user_error_as_one_json_object(
    tmp_path, monkeypatch, argv, env, error_type, needle
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_main(
        ["query", "disk full", "--uri", str(tmp_path / "m.db"), *argv, "--no-record", "--json"]
    )
    assert_json_error(code, out, err, error_type, needle)


def test_ingest_json_prints_a_user_error_as_one_json_object(tmp_path):
    missing = tmp_path / "no-such-folder"
    code, out, err = run_main(["ingest", str(missing), "--uri", str(tmp_path / "m.db"), "--json"])
    assert_json_error(code, out, err, "ConfigurationError", "knowledge folder not found")


def test_json_with_a_command_line_argparse_refuses_prints_the_error_as_json_too(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["query", "disk full", "--mode", "bogus", "--json"])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert err.startswith("usage: lookup-knowledge query")  # argparse's usage and error line
    line = "lookup-knowledge query: error: argument --mode: invalid choice: 'bogus'"
    assert line in err
    error = json.loads(out)["error"]
    assert error["type"] == "ConfigurationError"
    assert error["message"].startswith("argument --mode: invalid choice: 'bogus'")
    assert error["message"] in err
    with pytest.raises(SystemExit):  # without --json: stdout stays empty
        main(["query", "disk full", "--mode", "bogus"])
    assert capsys.readouterr().out == ""


def test_invalid_setting_exits_2(tmp_path):
    code, _, err = run_main(["ingest", str(tmp_path), "--collection", "bad name!"])
    assert code == 2
    assert_one_line_error(err, "collection")


# --- ingest output on a tiny folder -------------------------------------------------------


def test_ingest_summary_names_skipped_files(tmp_path):
    kb = tmp_path / "kb"
    write(kb, "ops/disk.md", "---\ntitle: Disk full\n---\n# Disk full\n\nClean old logs.\n")
    write(kb, "ops/broken.md", "---\ntitle: [oops\n---\nbody\n")
    write(kb, "ops/empty.md", "")
    uri = str(tmp_path / "m.db")
    code, out, _ = run_main(["ingest", str(kb), "--uri", uri, "--collection", "tiny"])
    assert code == 0
    assert "3 files, 1 indexed, 0 unchanged, 2 skipped" in out
    assert "skipped ops/broken.md: malformed YAML frontmatter" in out
    assert "skipped ops/empty.md: empty file" in out

    (kb / "ops" / "disk.md").unlink()
    code, out, _ = run_main(
        ["ingest", str(kb), "--uri", uri, "--collection", "tiny", "--prune", "--json"]
    )
    assert code == 0
    summary = json.loads(out)
    assert summary["pruned"] == ["ops/disk.md"]
    assert summary["totalChunks"] == 0
    assert {s["source"] for s in summary["skipped"]} == {"ops/broken.md", "ops/empty.md"}


# --- demo ---------------------------------------------------------------------------------


def test_demo_ingests_sample_kb_and_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path / "data"))
    code, out, _ = run_main(["demo", CRASHLOOP_QUERY])
    assert code == 0
    assert "into 'knowledge'" in out  # the collection every command reads by default
    assert "0 skipped" in out
    assert f"Q: {CRASHLOOP_QUERY}" in out
    first_block = next(line for line in out.splitlines() if line.strip().startswith("1. "))
    assert "kubernetes/pod-crashloopbackoff.md" in first_block
    assert (tmp_path / "data" / "milvus.db").exists()
    assert (tmp_path / "data" / "invocations.sqlite3").exists()
    # The jargon explained once, before the first lookup.
    assert out.count("How to read a lookup below:") == 1
    assert out.index("layer=L1  ") < out.index(f"Q: {CRASHLOOP_QUERY}")
    assert "low_quality" in out.split("Q: ")[0]
    # One tool call as the agent gets it: the packed context with [n] citations, the artifact.
    call = out.split("What an agent receives from one tool call")[1]
    content = call.split("msg.artifact")[0]
    assert "    | [1] Pod stuck in CrashLoopBackOff" in content
    assert "source: kubernetes/pod-crashloopbackoff.md" in content
    artifact = json.loads(call.split("msg.artifact")[1].split("\n", 1)[1].split("\n\n")[0])
    assert artifact["found"] is True
    assert artifact["evidenceBlocks"][0]["evidenceKey"] == "kubernetes/pod-crashloopbackoff.md#0"
    assert "l1_similarity" in artifact["evidenceBlocks"][0]["hitReasons"]
    assert artifact["retrievalTrace"]["selectedAttempt"]
    # It ends with the next steps, which work as printed:
    assert out.rstrip().splitlines()[-3:-1] == [
        '  .venv/bin/lookup-knowledge query "your question"',
        "  .venv/bin/lookup-knowledge ingest YOUR_FOLDER",
    ]
    code, out, err = run_main(["query", CRASHLOOP_QUERY, "--json"])  # no --collection
    assert code == 0, err
    assert json.loads(out)["evidenceBlocks"][0]["source"] == "kubernetes/pod-crashloopbackoff.md"
    mine = tmp_path / "mine"
    write(mine, "vpn.md", "# VPN drops every hour\n\nRenew the IKE lease before it expires.\n")
    code, out, err = run_main(["ingest", str(mine), "--json"])  # takes the sample's place
    assert code == 0, err
    assert len(json.loads(out)["pruned"]) == 18  # the sample's documents, all of them
    code, out, err = run_main(["query", "vpn keeps dropping", "--json"])
    assert [b["source"] for b in json.loads(out)["evidenceBlocks"]] == ["vpn.md"]
    # ... and the demo never replaces a folder of the user's
    code, _, err = run_main(["demo", CRASHLOOP_QUERY])
    assert code == 2
    assert f"holds your documents from {mine}" in err
    assert "--collection demo" in err


# --- end to end on ../shared/data/runbooks-en ---------------------------------------------


@pytest.fixture(scope="module")
def runbooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """runbooks-en ingested once through ``lookup-knowledge ingest --json``."""
    source = require_shared(RUNBOOKS_EN)
    root = tmp_path_factory.mktemp("runbooks_cli")
    uri = str(root / "milvus.db")
    code, out, err = run_main(
        ["ingest", str(source), "--uri", uri, "--collection", "runbooks", "--json"]
    )
    assert code == 0, err
    yield {"uri": uri, "summary": json.loads(out), "root": root, "source": source}
    close_all_clients()


def runbooks_args(runbooks: dict[str, Any]) -> list[str]:
    return ["--uri", runbooks["uri"], "--collection", "runbooks"]


@pytest.mark.shared_data
def test_runbooks_ingest_summary(runbooks):
    summary = runbooks["summary"]
    markdown = sorted(p for p in runbooks["source"].rglob("*.md"))
    assert summary["files"] == len(markdown)
    assert summary["indexed"] + len(summary["skipped"]) == summary["files"]
    assert summary["indexed"] > 100
    # Hugo section pages (_index.md) have only frontmatter: named, with the reason.
    for skipped in summary["skipped"]:
        assert skipped["source"].endswith("_index.md")
        assert skipped["reason"] == "no content after the frontmatter"
    assert summary["chunksWritten"] == summary["totalChunks"] > summary["indexed"]


@pytest.mark.shared_data
def test_runbooks_unchanged_reingest_writes_nothing(runbooks):
    code, out, _ = run_main(["ingest", str(runbooks["source"]), *runbooks_args(runbooks), "--json"])
    assert code == 0
    again = json.loads(out)
    assert again["chunksWritten"] == 0
    assert again["indexed"] == 0
    assert again["unchanged"] == runbooks["summary"]["indexed"]
    assert again["totalChunks"] == runbooks["summary"]["totalChunks"]


@pytest.mark.shared_data
def test_runbooks_crashloop_question_finds_kubepodcrashlooping_first(runbooks, real_embeddings):
    settings = LookupSettings(
        data_dir=runbooks["root"],
        milvus_uri=runbooks["uri"],
        collection="runbooks",
        record_invocations=False,
    )
    result = LookupResult.model_validate(
        build_lookup_graph(settings, embeddings=real_embeddings).invoke({"query": CRASHLOOP_QUERY})[
            "result"
        ]
    )
    assert result.found
    assert result.evidence_blocks[0].source == "kubernetes/KubePodCrashLooping.md"
    assert result.context_pack.included_sources[0] == "kubernetes/KubePodCrashLooping.md"


@pytest.mark.shared_data
def test_query_json_prints_one_contract_object_per_query(runbooks, tmp_path):
    queries = tmp_path / "questions.jsonl"
    queries.write_text(
        json.dumps({"q": "etcd fsync is slow", "rel": ["x"]}) + "\n\n", encoding="utf-8"
    )
    code, out, _ = run_main(
        [
            "query",
            CRASHLOOP_QUERY,
            "recipe for chocolate cake",
            "--queries-file",
            str(queries),
            *runbooks_args(runbooks),
            "--json",
            "--no-record",
        ]
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 3
    objects = [json.loads(line) for line in lines]
    for obj in objects:
        assert set(obj) >= CONTRACT_KEYS
        assert "evidence_blocks" not in obj  # camelCase on the wire
        for block in obj["evidenceBlocks"]:
            assert {"evidenceKey", "source", "retrievalLayer", "hitReasons"} <= set(block)
        assert {"attempts", "selectedAttempt", "fallbackReason"} <= set(obj["retrievalTrace"])
    crash, cake, etcd = objects
    assert crash["query"] == CRASHLOOP_QUERY
    assert crash["evidenceBlocks"][0]["source"] == "kubernetes/KubePodCrashLooping.md"
    assert cake["relevanceLevel"] != "high"
    assert etcd["query"] == "etcd fsync is slow"
    assert etcd["evidenceBlocks"][0]["source"].startswith("etcd/")


@pytest.mark.shared_data
def test_query_readable_output_and_recording(runbooks, tmp_path, monkeypatch):
    monkeypatch.setenv(
        "LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", f"sqlite:///{tmp_path / 'records.sqlite3'}"
    )
    code, out, _ = run_main(["query", CRASHLOOP_QUERY, *runbooks_args(runbooks)])
    assert code == 0
    assert out.startswith(f"Q: {CRASHLOOP_QUERY}\n")
    assert "found=True" in out
    assert "1. kubernetes/KubePodCrashLooping.md" in out
    from langchain_lookup_knowledge.recording import SqlInvocationRecorder

    rows = SqlInvocationRecorder(f"sqlite:///{tmp_path / 'records.sqlite3'}").rows()
    assert [r["query"] for r in rows] == [CRASHLOOP_QUERY]


def test_milvus_lite_unimplemented_rpc_tracebacks_stay_off_the_terminal(tmp_path):
    """pymilvus asks Milvus Lite for AllocTimestamp while waiting for an index; Lite's server
    logs a traceback for it (the call goes on). Other server errors still show."""
    import logging

    from langchain_lookup_knowledge.cli import _unimplemented_rpc_filter

    main(["query", "--uri", str(tmp_path / "none"), "anything"])  # installs the filter
    server_log = logging.getLogger("grpc._server")
    assert _unimplemented_rpc_filter in server_log.filters

    def record(exc: BaseException) -> logging.LogRecord:
        return server_log.makeRecord(
            "grpc._server",
            logging.ERROR,
            __file__,
            1,
            "Exception calling application",
            None,
            (type(exc), exc, None),
        )

    assert not _unimplemented_rpc_filter(record(NotImplementedError("Method not implemented!")))
    assert _unimplemented_rpc_filter(record(RuntimeError("disk full")))


def test_ingest_categories_file_from_the_command_line(tmp_path):
    kb = write(tmp_path, "kb/backup.md", "# Backup\n\nHow to back up the cluster.\n").parent
    write(tmp_path, "toc.tsv", "path\ttoc_section\nbackup.md\tOperations\n")
    db = tmp_path / "m.db"
    code, out, err = run_main(
        ["ingest", str(kb), "--uri", str(db), "--categories", str(tmp_path / "toc.tsv"), "--json"]
    )
    assert code == 0, err
    assert json.loads(out.splitlines()[-1])["indexed"] == 1
    code, out, _ = run_main(["query", "--uri", str(db), "--json", "--no-record", "backup"])
    assert code == 0
    assert json.loads(out.splitlines()[-1])["evidenceBlocks"][0]["category"] == "Operations"

    missing = tmp_path / "nope.tsv"
    proc = run_script("ingest", str(kb), "--uri", str(db), "--categories", str(missing))
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr, "categories file not found", str(missing))


def test_chinese_ingest_keeps_jieba_chatter_off_the_terminal(tmp_path):
    """Milvus Lite's jieba analyzer logs its dictionary loading at DEBUG on import."""
    kb = tmp_path / "kb"
    write(kb, "db/连接.md", "# 数据库连接数满了\n\n检查连接池配置，调大最大连接数。\n")
    write(kb, "node/磁盘.md", "# 节点磁盘满了\n\n清理镜像和日志，扩容磁盘，检查驱逐阈值。\n")
    proc = run_script("ingest", str(kb), "--uri", str(tmp_path / "zh.db"))
    assert proc.returncode == 0, proc.stderr
    assert "jieba" not in proc.stderr
    assert "prefix dict" not in proc.stderr


# --- the CLI package: static registration, one question reader ----------------------------

# The public contract: every subcommand and flag (add, never rename).
CLI_CONTRACT = {
    "ingest": {
        "--uri",
        "--collection",
        "--prune",
        "--categories",
        "--category-column",
        "--json",
        "--strict",
        "--follow-links",
        "--source-prefix",
    },
    "query": {
        "--queries-file",
        "--uri",
        "--collection",
        "--mode",
        "--retrieval-mode",
        "--no-record",
        "--json",
    },
    "demo": {"--uri", "--collection"},
    "compare": {"--uri", "--collection", "--k", "--retrieval-mode", "--json"},
    "eval beir": {
        "--split",
        "--limit",
        "--no-baselines",
        "--uri",
        "--collection",
        "--mode",
        "--retrieval-mode",
        "--json",
        "--no-progress",
    },
    "eval queries": {
        "--kb",
        "--uri",
        "--collection",
        "--mode",
        "--retrieval-mode",
        "--json",
        "--no-progress",
    },
    "bench": {
        "--queries-file",
        "--rounds",
        "--kb",
        "--no-cold-start",
        "--uri",
        "--collection",
        "--mode",
        "--retrieval-mode",
        "--json",
        "--no-progress",
    },
    "report": {"--since", "--until", "--collection", "--json", "--html", "--db", "--group-by"},
    "records prune": {"--older-than", "--db", "--json"},
    "serve": {"--uri", "--host", "--port"},
}


def _subcommands(parser: Any) -> dict[str, Any]:
    import argparse

    found: dict[str, Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                nested = _subcommands(child)
                found.update({f"{name} {k}": v for k, v in nested.items()} or {name: child})
    return found


def test_build_parser_alone_has_every_subcommand_and_flag():
    from langchain_lookup_knowledge.cli import build_parser

    commands = _subcommands(build_parser())
    assert set(CLI_CONTRACT) <= set(commands)
    for name, flags in CLI_CONTRACT.items():
        options = {o for a in commands[name]._actions for o in a.option_strings}
        assert flags <= options, (name, flags - options)


def test_query_answers_readable_questions_and_names_the_unreadable_ones(sample_kb_store, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_bytes(b"ingress returns 502\ncaf\xe9 au lait\n{not json\n")
    code, out, err = run_main(
        [
            "query",
            CRASHLOOP_QUERY,
            "disk \udcff full",  # what Python makes of a non-UTF-8 byte in argv
            "--queries-file",
            str(questions),
            "--uri",
            sample_kb_store.milvus_uri,
            "--collection",
            sample_kb_store.collection,
            "--no-record",
            "--json",
        ]
    )
    assert code == 1
    answered = [json.loads(line)["query"] for line in out.splitlines()]
    assert answered == [CRASHLOOP_QUERY, "ingress returns 502"]
    problems = err.splitlines()
    assert problems == [
        "lookup-knowledge: argument 2: not valid UTF-8 (byte 0xff at character 6); skipped",
        f"lookup-knowledge: {questions}:2: not valid UTF-8 (byte 0xe9 at column 4); "
        "save the file as UTF-8; skipped",
        problems[2],
    ]
    assert problems[2].startswith(f"lookup-knowledge: {questions}:3: invalid JSON")
    assert "Traceback" not in err


def test_non_utf8_argv_bytes_in_a_real_process_cost_that_question_only(tmp_path):
    kb = write(
        tmp_path, "kb/disk.md", "# Disk full\n\nClean old logs, then grow the volume.\n"
    ).parent
    uri = str(tmp_path / "m.db")
    env = {"LOOKUP_KNOWLEDGE_DATA_DIR": str(tmp_path / "data")}
    assert run_script("ingest", str(kb), "--uri", uri, env=env).returncode == 0
    command = (
        [str(CONSOLE_SCRIPT)]
        if CONSOLE_SCRIPT.exists()
        else [sys.executable, "-m", "langchain_lookup_knowledge.cli"]
    )
    proc = subprocess.run(
        [*command, "query", b"caf\xe9", "disk full", "--uri", uri, "--json", "--no-record"],
        capture_output=True,
        timeout=120,
        env={**os.environ, **env},
    )
    assert proc.returncode == 1
    stdout, stderr = proc.stdout.decode(), proc.stderr.decode()
    assert [json.loads(line)["query"] for line in stdout.splitlines()] == ["disk full"]
    assert stderr.splitlines() == [
        "lookup-knowledge: argument 1: not valid UTF-8 (byte 0xe9 at character 4); skipped"
    ]


def test_eval_queries_refuses_a_file_with_a_non_utf8_line_naming_it(sample_kb_store, tmp_path):
    questions = tmp_path / "eval.jsonl"
    questions.write_bytes(b'{"q": "disk full", "rel": ["a"]}\n{"q": "caf\xe9", "rel": ["b"]}\n')
    code, out, err = run_main(
        ["eval", "queries", str(questions), "--uri", sample_kb_store.milvus_uri, "--json"]
    )
    # refused before any lookup: the stderr line, and with --json the same error on stdout
    assert_json_error(
        code, out, err, "QuestionFileError", f"{questions}:2: not valid UTF-8 (byte 0xe9"
    )


# --- ingest progress: over chunks, on a terminal only -------------------------------------


def test_ingest_reports_progress_per_embedding_batch(settings, real_embeddings):
    from langchain_lookup_knowledge.ingest import ingest_folder

    calls: list[tuple[int, int]] = []
    report = ingest_folder(
        SAMPLE_KB,
        settings.model_copy(update={"embedding_batch_size": 8}),
        embeddings=real_embeddings,
        on_chunk_progress=lambda done, total: calls.append((done, total)),
    )
    total = report.chunks_written
    assert total > 16
    assert len(calls) == -(-total // 8)  # one call per embedding batch
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})
    assert calls[-1] == (total, total)
    assert {t for _, t in calls} == {total}


def test_ingest_progress_bar_shows_on_a_terminal_and_not_when_piped(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    env = {**os.environ, "LOOKUP_KNOWLEDGE_DATA_DIR": str(tmp_path / "data")}
    command = (
        [str(CONSOLE_SCRIPT)]
        if CONSOLE_SCRIPT.exists()
        else [sys.executable, "-m", "langchain_lookup_knowledge.cli"]
    )
    piped = subprocess.run(
        [*command, "ingest", str(SAMPLE_KB), "--uri", str(tmp_path / "piped.db")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""

    leader, follower = pty.openpty()
    # A terminal of 80 columns (a new pseudo-terminal has none, and tqdm then draws nothing).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(
        [*command, "ingest", str(SAMPLE_KB), "--uri", str(tmp_path / "tty.db")],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        seen += data
    os.close(leader)
    assert proc.wait(timeout=300) == 0
    assert b"embed" in seen
    assert b"chunk" in seen


# --- eval queries: questions about documents the pipeline never indexed -------------------


def ingest_tiny_kb(
    tmp_path: Path, files: dict[str, str], questions: list[dict[str, Any]]
) -> tuple[Path, Path, list[str]]:
    """``files`` as a knowledge folder ingested by the CLI, ``questions`` as a JSONL file:
    (the folder, the question file, the store flags of both commands)."""
    kb = tmp_path / "kb"
    for rel, text in files.items():
        write(kb, rel, text)
    store = ["--uri", str(tmp_path / "m.db"), "--collection", "tiny"]
    code, _, err = run_main(["ingest", str(kb), *store])
    assert code == 0, err
    return kb, write_jsonl(tmp_path / "q.jsonl", questions), store


def test_eval_queries_reports_questions_about_unindexed_documents_apart(tmp_path):
    from langchain_lookup_knowledge.evaluation.queries import bare_chunks

    kb, questions, store = ingest_tiny_kb(
        tmp_path,
        {
            "disk-full.md": "---\ntitle: Disk full\n---\n# Disk full\n\nDelete old logs.\n",
            "broken.md": "---\ntitle: [oops\n---\n# Node down\n\nReboot the node.\n",
        },
        [
            {"q": "the disk is full", "rel": ["disk-full"]},
            {"q": "a node is down", "rel": ["broken"]},
        ],
    )
    code, out, err = run_main(
        ["eval", "queries", str(questions), "--kb", str(kb), *store, "--json", "--no-progress"]
    )
    assert code == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["questions"] == 1
    assert report["questions_not_indexed"] == 1
    assert report["not_indexed"] == [{"q": "a node is down", "rel": ["broken"]}]
    assert report["recall@5"] == 1.0
    # The bare baselines index the same files as the pipeline, not the one it refused.
    only_good, _ = bare_chunks(kb, 1000, 150, only={"disk-full.md"})
    assert report["baselines"]["dense"]["chunks"] == len(only_good)


def test_eval_queries_fail_under_gates_on_each_metric(tmp_path):
    _, questions, store = ingest_tiny_kb(
        tmp_path,
        {
            "disk-full.md": "# Disk full\n\nDelete old logs, then grow the volume.\n",
            "node-down.md": "# Node down\n\nCordon the node, drain it, reboot it.\n",
        },
        [
            {"q": "the disk is full", "rel": ["disk-full"]},
            {"q": "the disk is full again", "rel": ["node-down"]},  # a miss at rank 1
        ],
    )
    argv = ["eval", "queries", str(questions), *store, "--no-progress"]

    code, out, err = run_main([*argv, "--fail-under", "recall@5=0.5,mrr@10=0.5"])
    assert code == 0, err
    assert err == ""
    # every figure printed is explained: the columns' legend, the retries, the misses
    text = " ".join(out.split())
    for meaning in ("legend: R@k:", "MRR@k:", "nDCG@k:", "p50/p95 ms:", "bare = plain LangChain"):
        assert meaning in text, meaning
    assert "unfiltered retries (fallbacks): " in text
    assert " of 2 questions (the search within the category" in text

    code, out, err = run_main([*argv, "--json", "--fail-under", "recall@10=1,mrr@10=0.9"])
    assert code == 1
    report = json.loads(out.splitlines()[-1])
    assert report["mrr@10"] < 0.9
    assert err.splitlines() == [
        f"lookup-knowledge: mrr@10 = {report['mrr@10']:.3f} is below 0.9 (--fail-under)"
    ]

    for bad, needle in (("recall@7=0.5", "unknown metric 'recall@7'"), ("mrr@10=2", "between 0")):
        code, out, err = run_main([*argv, "--fail-under", bad])
        assert code == 2
        assert out == ""
        assert_one_line_error(err, needle)


# --- compare: warm searches timed, the first call (opening the path) apart ----------------


def test_compare_times_warm_searches_and_reports_the_first_call_apart(settings, real_embeddings):
    import time

    from langchain_lookup_knowledge.compare import compare_paths, format_comparison
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.retrieval.sdk import SdkPath

    runtime: Any = None

    def slow_to_open_sdk() -> SdkPath:
        """FAKE factory: the real SDK path, 300 ms slow to open (as a first model/store load)."""
        time.sleep(0.3)
        return SdkPath(runtime.client, runtime.layout, settings)

    ingest_folder(SAMPLE_KB, settings, embeddings=real_embeddings)
    runtime = LookupRuntime(
        settings, embeddings=real_embeddings, path_factories={"sdk": slow_to_open_sdk}
    )
    report = compare_paths(CRASHLOOP_QUERY, settings, k=3, runtime=runtime)
    sdk = report["sdk"]
    assert sdk["status"] == "ok"
    assert sdk["firstCallMs"] >= 300
    assert sdk["latencyMs"] < 300
    assert report["vectorstore"]["firstCallMs"] is not None
    assert f"(first call {sdk['firstCallMs']:.1f} ms)" in format_comparison(report)


def test_compare_asks_each_argument_as_one_question_like_query(sample_kb_store):
    code, out, err = run_main(
        [
            "compare",
            CRASHLOOP_QUERY,
            "ingress returns 502",
            "--uri",
            sample_kb_store.milvus_uri,
            "--collection",
            sample_kb_store.collection,
            "--k",
            "2",
            "--json",
        ]
    )
    assert code == 0, err
    assert [json.loads(line)["query"] for line in out.splitlines()] == [
        CRASHLOOP_QUERY,
        "ingress returns 502",
    ]
