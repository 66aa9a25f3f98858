"""The lookup pipeline for LangGraph Studio / ``langgraph dev`` (named in ``langgraph.json``).

Configured from ``LOOKUP_KNOWLEDGE_*`` environment variables. Building the graph touches neither
Milvus nor the records database: both open at the first lookup.

Input ``{"query": "pod keeps restarting"}``; output ``result`` (the evidence-first result) and
``retrieval_details`` (what is persisted in ``tool_invocation``).
"""

from langchain_lookup_knowledge import LookupRuntime, LookupSettings, build_lookup_graph

runtime = LookupRuntime.configured(LookupSettings())
graph = build_lookup_graph(runtime=runtime, name="lookup_knowledge")
