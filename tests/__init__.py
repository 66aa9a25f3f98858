"""The test suite: unit/ (no Milvus, no model) and integration/."""
