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


def test_a_tool_call_neither_inspects_its_run_signature_nor_reads_its_schema_again(monkeypatch):
    """LangChain inspects ``_run``'s signature and reads the args schema's annotations on every
    call; the signature is made once (``__signature__``) and the filter's answer kept per input
    shape, with the same result."""
    import inspect

    import langchain_core.tools.base as tools_base

    tool = create_lookup_knowledge_tool(LookupSettings(record_invocations=False))
    for method in (type(tool)._run, type(tool)._arun):
        assert isinstance(method.__signature__, inspect.Signature)  # type: ignore[attr-defined]
        assert "run_manager" in inspect.signature(method).parameters
    reads: list[object] = []
    real = tools_base.get_all_basemodel_annotations

    def counted(schema, *args, **kwargs):
        reads.append(schema)
        return real(schema, *args, **kwargs)

    monkeypatch.setattr(tools_base, "get_all_basemodel_annotations", counted)  # a spy
    for _ in range(3):
        assert tool._filter_injected_args({"query": "etcd is slow"}) == {"query": "etcd is slow"}
    assert len(reads) == 1
    # what LangChain filters out is still filtered out (its own FILTERED_ARGS)
    assert tool._filter_injected_args({"query": "q", "callbacks": None}) == {"query": "q"}
