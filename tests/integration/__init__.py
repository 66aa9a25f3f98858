"""Tests against Milvus Lite, the real embedding model, servers and processes."""
