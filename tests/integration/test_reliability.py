"""Reliability: bad input, locked or unreachable Milvus, failing embedder or recorder, injection.

Real parts throughout (Milvus Lite in tmp dirs, the real embedder, SQLite). Faults are real too:
a second process holding the database, closed or silent TCP ports, a local HTTP server answering
500/429 or too slowly. ``FailingPath`` (tests/fakes.py) is the one fake: it forces auto mode's
fallback.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.errors import (
    EmbeddingError,
    InvalidQueryError,
    StoreUnavailableError,
)
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.conftest import local_settings
from tests.fakes import FailingPath, call
from tests.faults import (
    database_held_by_another_process,
    failing_embedding_server,
    run_cli,
    silent_tcp_port,
)
from tests.kb_helpers import every_block_judge_model

CRASHLOOP_QUERY = "my pod keeps crashing and restarting"


def assert_answered(out: dict) -> None:
    """The lookup ran: no L1 attempt failed and the result is not "retrieval unavailable"."""
    result = LookupResult.model_validate(out["result"])
    assert not result.message.startswith("Knowledge retrieval unavailable"), result.message
    assert result.retrieval_trace.attempts
    assert all(a.status != "error" for a in result.retrieval_trace.attempts)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("lookup-knowledge: error:")
    for needle in needles:
        assert needle in lines[0]


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t  \r\n", "\x00\x07\x1b"])
def test_empty_or_whitespace_query_raises_invalid_query_error(
    sample_kb_store, real_embeddings, query
):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings, recorder=None)
    with pytest.raises(InvalidQueryError, match="empty"):
        graph.invoke({"query": query})


async def test_tool_turns_whitespace_query_into_an_error_the_model_reads(
    sample_kb_store, real_embeddings
):
    tool = create_lookup_knowledge_tool(sample_kb_store, embeddings=real_embeddings)
    message = tool.invoke(call("   "))
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert "non-empty" in message.content
    amessage = await tool.ainvoke(call("\t\n", "call-2"))
    assert amessage.status == "error"
    assert "non-empty" in amessage.content


def test_cli_whitespace_query_exits_2_with_one_line(tmp_path):
    proc = run_cli("query", "   ", "--uri", str(tmp_path / "m.db"), data_dir=tmp_path)
    assert_one_line_error(proc, "empty")
    assert proc.stdout == ""


def test_overlong_query_is_truncated_with_a_trace_note_and_answered(
    sample_kb_store, real_embeddings
):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings, recorder=None)
    query = (CRASHLOOP_QUERY + " ") * 1000
    assert len(query) > sample_kb_store.max_query_chars
    out = graph.invoke({"query": query})
    result = LookupResult.model_validate(out["result"])
    assert_answered(out)
    assert len(result.query) == sample_kb_store.max_query_chars
    notes = result.retrieval_trace.notes
    assert any("truncated" in n and str(len(query.strip())) in n for n in notes), notes
    transform_notes = out["retrieval_details"]["query_transform"]["notes"]
    # the query transform's notes, then the decision's one note: the judgement's, with its
    # relevanceScore
    assert notes[: len(transform_notes)] == transform_notes
    (decision_note,) = notes[len(transform_notes) :]
    assert decision_note.startswith("judgement: relevanceScore")
    assert result.found
    assert result.evidence_blocks[0].source == "kubernetes/pod-crashloopbackoff.md"


@pytest.mark.parametrize(
    ("query", "expect_found"),
    [
        ("my pod\x00 keeps\x1b[31m crashing\x07 and restarting\x7f", True),
        ("🔥🔥 my pod keeps crashing 😱 and restarting 🚑", True),
        ("pod 一直重启 keeps crashing, перезапуск снова и снова", True),
        ("\u202emy pod keeps\u200b crashing and\ufeff restarting", True),
        ("🔥😱🚑", None),
        ("𝔭𝔬𝔡 ℭ𝔯𝔞𝔰𝔥 ﷽ ⸻ 🀄", None),
    ],
)
def test_control_characters_emoji_and_mixed_scripts_are_answered(
    sample_kb_store, real_embeddings, query, expect_found
):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings, recorder=None)
    out = graph.invoke({"query": query})
    result = LookupResult.model_validate(out["result"])
    assert_answered(out)
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in result.query)
    if expect_found:
        assert result.found
        assert "kubernetes/pod-crashloopbackoff.md" in [b.source for b in result.evidence_blocks]


def test_bad_knowledge_files_are_reported_by_name_and_the_rest_indexed(
    settings, real_embeddings, tmp_path
):
    kb = tmp_path / "kb"
    (kb / "ops").mkdir(parents=True)
    (kb / "ops" / "good.md").write_text(
        "---\ntitle: Disk full\nkeywords: [disk]\n---\n# Disk full\nDelete old logs.\n",
        encoding="utf-8",
    )
    files = {
        "ops/bad-yaml.md": (b"---\ntitle: [unclosed\nkeywords: {a: \n---\nbody\n", "YAML"),
        "ops/binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
        "ops/latin1.md": ("# Café\nCrème brûlée runbook\n".encode("latin-1"), "UTF-8"),
        "ops/empty.md": (b"", "empty"),
        "ops/huge.md": (b"# Huge\n" + b"x" * 5000 + b"\n", "too large"),
    }
    for name, (raw, _) in files.items():
        (kb / name).write_bytes(raw)
    settings = settings.model_copy(update={"max_file_bytes": 4000})
    report = ingest_folder(kb, settings, embeddings=real_embeddings, show_progress=False)
    reasons = {s.source: s.reason for s in report.skipped}
    assert set(reasons) == set(files)
    for name, (_, reason) in files.items():
        assert reason in reasons[name], (name, reasons[name])
    assert report.indexed == ["ops/good.md"]
    assert report.total_chunks >= 1


# --------------------------------------------------------------------------------------------
# Injection and isolation
# --------------------------------------------------------------------------------------------

WEIRD_CATEGORIES = [
    'db" or category != "x',
    'a\\" or 1==1 or \\"',
    "x\\",
    "or == networking",
    "it's \"quoted\" \\ and 'single'",
]


def _yaml_single_quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@pytest.fixture(scope="module")
def injection_store(tmp_path_factory, real_embeddings):
    """One doc per weird category (a unique keyword each), and normal docs on the same topic."""
    root = tmp_path_factory.mktemp("injection")
    kb = root / "kb"
    (kb / "weird").mkdir(parents=True)
    (kb / "normal").mkdir(parents=True)
    for i, category in enumerate(WEIRD_CATEGORIES):
        (kb / "weird" / f"w{i}.md").write_text(
            f"---\ntitle: Quokka{i} relay restart\ncategory: {_yaml_single_quoted(category)}\n"
            f"keywords: [quokkarelay{i}]\n---\n# Quokka{i} relay restart\n"
            "Restart the relay service when message delivery stalls.\n",
            encoding="utf-8",
        )
    for i in range(3):
        (kb / "normal" / f"n{i}.md").write_text(
            f"---\ntitle: Relay delivery stalls {i}\ncategory: messaging\n---\n"
            f"# Relay delivery stalls {i}\nRestart the relay service when message delivery "
            "stalls. Check the relay queue depth.\n",
            encoding="utf-8",
        )
    s = local_settings(root, collection="inj", reference_threshold=0.0)
    report = ingest_folder(kb, s, embeddings=real_embeddings, show_progress=False)
    assert not report.skipped
    return s


@pytest.mark.parametrize("mode", ["vectorstore", "sdk"])
@pytest.mark.parametrize("index", range(len(WEIRD_CATEGORIES)))
def test_frontmatter_category_never_changes_the_filter_meaning(
    injection_store, real_embeddings, mode, index
):
    settings = injection_store.model_copy(update={"mode": mode})
    graph = build_lookup_graph(settings, embeddings=real_embeddings, recorder=None)
    out = graph.invoke({"query": f"quokkarelay{index} is stuck again"})
    result = LookupResult.model_validate(out["result"])
    assert result.l0_hints.domains == [WEIRD_CATEGORIES[index]]
    first = result.retrieval_trace.attempts[0]
    assert first.name == "filtered", result.retrieval_trace
    assert first.status == "ok", first
    assert first.path == mode
    assert first.candidates == 1  # the one chunk with exactly that category, nothing else
    assert [b.source for b in result.evidence_blocks] == [f"weird/w{index}.md"]


@pytest.fixture(scope="module")
def tenant_store(tmp_path_factory, real_embeddings):
    """Tenant a: networking docs about DNS. Tenant b: the doc that best answers "disk full"."""
    root = tmp_path_factory.mktemp("tenants")
    kb = root / "kb"
    docs = {
        "a/dns.md": (
            "a",
            "networking",
            "DNS resolution fails",
            "CoreDNS pods return SERVFAIL; check the upstream resolvers.",
        ),
        "a/ingress.md": (
            "a",
            "networking",
            "Ingress returns 502",
            "The ingress controller cannot reach the backend service.",
        ),
        "b/disk.md": (
            "b",
            "storage",
            "Node disk is full",
            "The node disk is full: delete old container images and rotate logs to "
            "free disk space on the node.",
        ),
        "b/dns.md": (
            "b",
            "networking",
            "Disk full breaks DNS cache",
            "When the node disk is full the DNS cache cannot write; free disk space.",
        ),
    }
    for name, (tenant, category, title, body) in docs.items():
        path = kb / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: {title}\ncategory: {category}\ntenant: {tenant}\n---\n"
            f"# {title}\n{body}\n",
            encoding="utf-8",
        )
    s = local_settings(
        root,
        collection="tenants",
        # every filtered attempt is "low quality"; every candidate is evidence (a model that
        # finds every block: what this test checks is which tenant's documents come back, not
        # whether the judgement finds a weak match worth showing)
        reference_threshold=0.99,
        min_evidence_similarity=0.0,
        judge_model_file=every_block_judge_model(root),
    )
    ingest_folder(kb, s, embeddings=real_embeddings, show_progress=False)
    return s


TENANT_A = {'metadata["tenant"]': "a"}
DISK_QUERY = "networking outage because the disk ran out of space"


@pytest.mark.parametrize("how", ["graph_input", "default_filter", "auto_fallback"])
def test_tenant_filter_survives_every_retry_and_fallback(tenant_store, real_embeddings, how):
    settings = tenant_store
    runtime_kwargs: dict = {}
    graph_input: dict = {"query": DISK_QUERY}
    if how == "default_filter":
        settings = settings.model_copy(update={"default_filter": TENANT_A})
    else:
        graph_input["filters"] = TENANT_A
    if how == "auto_fallback":
        settings = settings.model_copy(update={"mode": "auto"})
        runtime_kwargs["path_factories"] = {"vectorstore": FailingPath}
    runtime = LookupRuntime(settings, embeddings=real_embeddings, **runtime_kwargs)
    graph = build_lookup_graph(runtime=runtime)
    # Without the tenant filter the tenant-b disk doc is the best answer: the control.
    control = build_lookup_graph(tenant_store, embeddings=real_embeddings, recorder=None)
    assert "b/disk.md" in [
        b.source
        for b in LookupResult.model_validate(
            control.invoke({"query": DISK_QUERY})["result"]
        ).evidence_blocks
    ]

    result = LookupResult.model_validate(graph.invoke(graph_input)["result"])
    attempts = result.retrieval_trace.attempts
    names = [a.name for a in attempts]
    assert names[0] == "filtered", attempts
    assert "unfiltered_retry" in names, attempts
    assert result.retrieval_trace.fallback_reason in {
        "filtered_vector_low_quality",
        "filtered_vector_no_evidence",
    }
    for attempt in attempts:
        assert 'metadata["tenant"] == "a"' in (attempt.filter or ""), attempt
    if how == "auto_fallback":
        assert attempts[0].status == "error"
        assert attempts[1].path == "sdk"
        assert all(a.path == "sdk" for a in attempts[1:])
    sources = [b.source for b in result.evidence_blocks]
    assert sources, "tenant a has documents"
    assert all(s.startswith("a/") for s in sources), sources


# --------------------------------------------------------------------------------------------
# Faults: Milvus
# --------------------------------------------------------------------------------------------


def test_locked_lite_database_says_locked_by_another_process(settings, real_embeddings, tmp_path):
    db = Path(settings.resolved_milvus_uri)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\nhello\n", encoding="utf-8")
    with database_held_by_another_process(db):
        with pytest.raises(StoreUnavailableError, match="locked by another process"):
            open_client(settings)
        proc = run_cli("ingest", str(kb), "--uri", str(db), data_dir=tmp_path)
        tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
        message = tool.invoke(call("disk full"))
    assert_one_line_error(proc, "locked by another process", str(db))
    assert message.status == "error"
    assert message.content.startswith("Knowledge retrieval is misconfigured")
    assert "locked by another process" in message.content
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
    assert len(rows) == 1
    assert "locked by another process" in rows[0]["error"]


def test_missing_folder_and_wrong_paths_give_clear_messages(tmp_path):
    not_db = tmp_path / "notes.db"
    not_db.write_text("these are my notes, not a database\n", encoding="utf-8")
    cases = {
        str(tmp_path / "missing" / "sub" / "kb.db"): "folder does not exist",
        str(not_db): "is not a Milvus Lite database",
        str(tmp_path / "kb.sqlite"): "must end in .db",
    }
    for uri, needle in cases.items():
        settings = LookupSettings(data_dir=tmp_path, milvus_uri=uri)
        with pytest.raises(StoreUnavailableError, match=needle):
            open_client(settings)
    proc = run_cli("query", "disk full", "--uri", str(not_db), "--no-record", data_dir=tmp_path)
    assert_one_line_error(proc, "is not a Milvus Lite database")
    assert not_db.read_text(encoding="utf-8").startswith("these are my notes")


@pytest.mark.parametrize("server", ["closed_port", "silent_port"])
def test_unreachable_milvus_is_bounded_reported_and_recorded(tmp_path, real_embeddings, server):
    with contextlib.ExitStack() as stack:
        port = 1 if server == "closed_port" else stack.enter_context(silent_tcp_port())
        settings = LookupSettings(
            data_dir=tmp_path,
            milvus_uri=f"http://127.0.0.1:{port}",
            milvus_timeout_s=2,
            mode="auto",
            invocation_db_url=f"sqlite:///{tmp_path / 'records.sqlite3'}",
        )
        tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
        message = tool.invoke(call("etcd is slow"))
    assert message.status == "error"
    assert message.content.startswith("Knowledge retrieval unavailable")
    assert f"127.0.0.1:{port}" in message.content
    rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
    assert len(rows) == 1
    row = rows[0]
    assert row["error"]
    assert f"127.0.0.1:{port}" in row["error"]
    assert row["found"] is False
    attempts = row["retrieval_details"]["retrieval_trace"]["attempts"]
    assert [(a["path"], a["status"]) for a in attempts] == [
        ("vectorstore", "error"),
        ("sdk", "error"),
    ]
    close_all_clients()


# --------------------------------------------------------------------------------------------
# Faults: embedding service, recorder
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", ["500", "429", "timeout"])
def test_failing_embedding_service_retries_a_bounded_number_of_times(settings, behaviour):
    with failing_embedding_server(behaviour) as (base_url, requests):
        settings = settings.model_copy(
            update={
                "embedding_provider": "openai",
                "openai_base_url": base_url,
                "openai_api_key": None,
                "embedding_max_retries": 1,
                "embedding_timeout_s": 0.5,
            }
        )
        embeddings = build_embeddings(settings)
        with pytest.raises(EmbeddingError) as caught:
            embeddings.embed_query("disk full")
        assert len(requests) == 2  # one call + embedding_max_retries
        assert base_url in str(caught.value)
        expected = {"500": "500", "429": "429", "timeout": "timed out"}[behaviour]
        assert expected in str(caught.value)

        tool = create_lookup_knowledge_tool(settings)
        message = tool.invoke(call("disk full"))
        assert message.status == "error"
        assert message.content.startswith("Knowledge retrieval unavailable")
        assert "embedding service" in message.content
        assert len(requests) == 4
        rows = SqlInvocationRecorder(settings.resolved_invocation_db_url).rows()
        assert len(rows) == 1
        assert "embedding service" in rows[0]["error"]
        assert rows[0]["found"] is False


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://lookup:pw@127.0.0.1:1/records",
        "sqlite:////proc/no-such-dir/records.sqlite3",
    ],
)
def test_recorder_down_lookup_still_answers_and_trace_says_so(
    sample_kb_store, real_embeddings, url
):
    settings = sample_kb_store.model_copy(update={"invocation_db_url": url})
    graph = build_lookup_graph(settings, embeddings=real_embeddings)
    out = graph.invoke({"query": CRASHLOOP_QUERY})
    result = LookupResult.model_validate(out["result"])
    assert_answered(out)
    assert result.found
    recording = result.retrieval_trace.recording
    assert recording is not None
    assert recording["status"] == "error"
    assert recording["error"]
    assert "pw@" not in recording["error"]


def test_cli_prints_no_traceback_when_milvus_is_unreachable(tmp_path):
    kb = tmp_path / "kb"  # a folder with a document (an empty one is refused before connecting)
    kb.mkdir()
    (kb / "disk-full.md").write_text("# Disk full\n\nFree space on the node.\n")
    proc = run_cli("ingest", str(kb), "--uri", "http://127.0.0.1:1", data_dir=tmp_path)
    assert_one_line_error(proc, "cannot reach Milvus at http://127.0.0.1:1")
