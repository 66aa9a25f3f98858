"""The tool body's type hints are resolved once, not evaluated from strings on every call
(LangChain reads them per call to find a ``RunnableConfig`` parameter; issue 12, latency)."""

from __future__ import annotations

from typing import get_type_hints

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool


def test_the_tool_bodies_carry_resolved_type_hints():
    tool = create_lookup_knowledge_tool(LookupSettings(record_invocations=False))
    for body in (tool.func, tool.coroutine):
        assert body is not None
        assert body.__annotations__, body
        assert not any(isinstance(a, str) for a in body.__annotations__.values())
        assert body.__annotations__ == get_type_hints(body)
    assert list(tool.args) == ["query"]
