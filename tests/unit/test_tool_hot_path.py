"""A tool call evaluates no type hints (issue 12, latency).

LangChain's ``StructuredTool`` evaluates its ``_run``'s string type hints and then the body's on
every call, to find a ``RunnableConfig`` parameter. ``LookupKnowledgeTool``'s run methods carry no
annotations and call the body directly, so a call finds nothing to evaluate.
"""

from __future__ import annotations

from langchain_core.tools import StructuredTool
from langchain_core.tools.base import _get_runnable_config_param, _get_type_hints

from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.tool import LookupKnowledgeTool


def test_a_tool_call_finds_no_type_hints_to_evaluate():
    tool = create_lookup_knowledge_tool(LookupSettings(record_invocations=False))
    assert isinstance(tool, LookupKnowledgeTool)
    assert tool.func is not None
    assert tool.coroutine is not None
    for method in (type(tool)._run, type(tool)._arun):
        assert method.__annotations__ == {}, method
        assert _get_type_hints(method) == {}
        assert _get_runnable_config_param(method) is None
    # what plain StructuredTool would evaluate on every call
    assert StructuredTool._run.__annotations__
    assert list(tool.args) == ["query"]
