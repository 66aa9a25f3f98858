"""How deep each list of a hybrid search goes: one rule for the search and for the HNSW ``ef``.

The L1 paths ask each list (dense, BM25) for this many hits before the fusion, and the dense
search parameters set HNSW's ``ef`` to at least as many (an ``ef`` below a search's limit is an
error in Milvus), so both read it here.
"""

from __future__ import annotations


def hybrid_list_depth(k: int, fetch_factor: int, list_depth: int) -> int:
    """How many hits each list of a hybrid search brings to the fusion: ``k`` x
    ``fetch_factor`` (at least 1), and at least ``list_depth``.

    Example:
        >>> hybrid_list_depth(15, 1, 50), hybrid_list_depth(15, 2, 0), hybrid_list_depth(15, 0, 0)
        (50, 30, 15)
    """
    return max(k * max(1, fetch_factor), list_depth)
