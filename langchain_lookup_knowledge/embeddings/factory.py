"""Build the configured embedder: the offline ONNX default or an OpenAI-compatible endpoint."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles, OnnxSentenceEmbeddings
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.settings import LookupSettings


def build_embeddings(settings: LookupSettings) -> CachedQueryEmbeddings:
    """The embedder ``settings`` ask for, behind a query-vector cache.

    Example:
        >>> emb = build_embeddings(LookupSettings())
        >>> len(emb.embed_query("disk full"))
        384
    """
    inner: Embeddings
    if settings.embedding_provider == "local":
        files = (
            ModelFiles.from_folder(settings.local_model_dir)
            if settings.local_model_dir
            else ModelFiles.pinned_default()
        )
        inner = OnnxSentenceEmbeddings(
            files, batch_size=settings.embedding_batch_size, max_tokens=settings.embedding_max_tokens
        )
    elif settings.embedding_provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        if settings.openai_api_key is None and settings.openai_base_url is None:
            msg = (
                "embedding_provider=openai needs LOOKUP_KNOWLEDGE_OPENAI_API_KEY "
                "(or LOOKUP_KNOWLEDGE_OPENAI_BASE_URL for a keyless OpenAI-compatible server)"
            )
            raise ConfigurationError(msg)
        inner = OpenAIEmbeddings(
            model=settings.openai_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key or "unused",  # type: ignore[arg-type]
            dimensions=settings.openai_dimensions,
            timeout=settings.embedding_timeout_s,
            max_retries=settings.embedding_max_retries,
            chunk_size=settings.embedding_batch_size,
            check_embedding_ctx_length=False,
        )
    else:  # pragma: no cover - guarded by the Literal type
        raise ConfigurationError(f"unknown embedding_provider {settings.embedding_provider!r}")
    return CachedQueryEmbeddings(inner, maxsize=settings.query_cache_size)
