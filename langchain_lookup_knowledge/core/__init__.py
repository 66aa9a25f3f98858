"""The bottom layer: the result contract, the text rules and the argument checks every other layer
shares.

Nothing here imports another module of this package, so ``retrieval`` (the L1 paths),
``pipeline`` (the graph) and ``knowledge`` (ingestion) can all build on it without a cycle.
"""
