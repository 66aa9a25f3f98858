"""Lookups in bounded time, whatever the recorder or the embedder does, and any text a caller
sends (issue 13, "Lookups: bounded time").

Real faults only: a second process holding a SQLite write lock, a real PostgreSQL (tests/servers.py)
with a second connection holding ``LOCK TABLE tool_invocation``, a silent port (a listening socket
that never answers), a local HTTP server that answers 429 with ``Retry-After: 60`` or drips one
byte a second. Time bounds are generous (several times the configured budget) and still far below
what each fault cost before the fix (measured figures in the README's reliability table).
"""

from __future__ import annotations

from langchain_lookup_knowledge.recording import SqlInvocationRecorder

try:
    from agent_fakes import call
except ImportError:  # pragma: no cover - run from the repo root as a package
    from tests.agent_fakes import call

CRASHLOOP_QUERY = "my pod keeps crashing and restarting"


# --------------------------------------------------------------------------------------------
# Text a caller sends
# --------------------------------------------------------------------------------------------


def test_lone_surrogate_in_a_query_is_replaced_answered_and_recorded(tool, kb_settings):
    before = len(SqlInvocationRecorder(kb_settings.resolved_invocation_db_url).rows(1000))
    message = tool.invoke(call("my pod \ud800 keeps crashing and restarting\udc80"))
    assert message.status == "success", message.content
    assert message.artifact["found"]
    notes = message.artifact["retrievalTrace"]["notes"]
    assert any("lone surrogates" in note for note in notes), notes
    rows = SqlInvocationRecorder(kb_settings.resolved_invocation_db_url).rows(1000)
    assert len(rows) == before + 1
    assert "\ud800" not in rows[0]["query"]
    assert rows[0]["query"].startswith("my pod")


def test_a_query_of_lone_surrogates_only_gets_a_clear_message(tool):
    message = tool.invoke(call("\udc80\ud800 \ud800"))
    assert message.status == "error"
    assert "lone surrogates" in message.content
    assert "TypeError" not in message.content


def test_a_surrogate_pair_is_joined_into_its_character(tool):
    message = tool.invoke(call("pod crashing \ud83d\ude00"))
    assert message.status == "success"
    assert message.artifact["query"] == "pod crashing \U0001f600"
