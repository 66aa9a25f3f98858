"""The bottom layer: the result contract, the text rules, the argument checks, safe filter
expressions and the rerank's weights, which every other layer (settings included) shares.

Nothing here imports another module of this package but ``errors`` (the exception classes, which
import nothing), so ``settings``, ``store``, ``retrieval`` (the L1 paths), ``pipeline`` (the
graph) and ``knowledge`` (ingestion) can all build on it without a cycle.
"""
