"""L1 retrieval: the two paths over the chunk collection and what they share.

``request`` (what a path is asked, the :class:`~.request.L1Path` protocol), ``vectorstore``
(langchain-milvus, the preferred path), ``sdk`` (raw pymilvus, the fallback), ``scores`` (score
semantics), ``hits`` (one candidate shape), ``traced`` (a search as a retriever run) and
``sidecar`` (the comparison run). This package sits below ``pipeline``: it imports the contract
models and text rules of ``core``, never the graph.

Example:
    >>> from langchain_lookup_knowledge.retrieval.request import SearchRequest
    >>> SearchRequest("disk full", [0.1, 0.2], None, k=5).fetch_k
    5
"""
