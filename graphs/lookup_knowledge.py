"""The lookup pipeline for LangGraph Studio / ``langgraph dev`` (named in ``langgraph.json``).

Configured from ``LOOKUP_KNOWLEDGE_*`` environment variables. Building the graph touches neither
Milvus nor the records database: both open at the first lookup.

Input ``{"query": "pod keeps restarting"}`` (and optional ``filters``); output ``result`` (the
evidence-first result as camelCase JSON, the same as the tool's artifact), ``error`` (``None``,
or why retrieval could not run) and ``retrieval_details`` (what is persisted in
``tool_invocation``).
"""

from langchain_lookup_knowledge import LookupRuntime, LookupSettings, build_lookup_graph

runtime = LookupRuntime.configured(LookupSettings())
# checkpointer=None: the server (langgraph dev / Platform) provides the checkpointer of a run.
graph = build_lookup_graph(runtime=runtime, name="lookup_knowledge", checkpointer=None)
