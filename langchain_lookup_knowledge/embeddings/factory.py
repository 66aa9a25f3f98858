"""Build the configured embedder: the offline ONNX default or an OpenAI-compatible endpoint."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles, OnnxSentenceEmbeddings
from langchain_lookup_knowledge.embeddings.validation import ValidatedEmbeddings
from langchain_lookup_knowledge.errors import ConfigurationError, EmbeddingError
from langchain_lookup_knowledge.settings import LookupSettings

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class ServiceEmbeddings(Embeddings):
    """A remote embedder whose failures, after its own bounded retries, are :class:`EmbeddingError`.

    The message names the service and the cause (HTTP status, timeout), never the API key: a
    server that echoes the request's credentials in its error body gets them masked, and the
    client's exception is not chained (its text would carry them).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> emb = ServiceEmbeddings(DeterministicFakeEmbedding(size=4), "http://emb:8080/v1", 3)
        >>> len(emb.embed_query("disk full"))
        4
    """

    def __init__(
        self, inner: Embeddings, service: str, attempts: int, secrets: tuple[str, ...] = ()
    ) -> None:
        self.inner = inner
        self.service = service
        self.attempts = attempts
        self._secrets = tuple(s for s in secrets if s)

    def _error(self, exc: Exception) -> EmbeddingError:
        status = getattr(exc, "status_code", None)
        if status is not None:
            cause = f"HTTP {status}"
        elif "timeout" in type(exc).__name__.lower():
            cause = "request timed out"
        else:
            cause = type(exc).__name__
        detail = (str(exc).strip().splitlines() or [""])[0]
        for secret in self._secrets:
            detail = detail.replace(secret, "***")
        detail = detail[:200]
        return EmbeddingError(
            f"embedding service {self.service} failed after {self.attempts} attempt(s): "
            f"{cause} ({detail})"
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed through the service; a failure raises :class:`EmbeddingError`."""
        try:
            return self.inner.embed_documents(texts)
        except Exception as exc:
            raise self._error(exc) from None

    def embed_query(self, text: str) -> list[float]:
        """Embed one query through the service; a failure raises :class:`EmbeddingError`."""
        try:
            return self.inner.embed_query(text)
        except Exception as exc:
            raise self._error(exc) from None

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents`."""
        try:
            return await self.inner.aembed_documents(texts)
        except Exception as exc:
            raise self._error(exc) from None

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        try:
            return await self.inner.aembed_query(text)
        except Exception as exc:
            raise self._error(exc) from None


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
            files,
            batch_size=settings.embedding_batch_size,
            max_tokens=settings.embedding_max_tokens,
        )
    elif settings.embedding_provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        if settings.openai_api_key is None and settings.openai_base_url is None:
            msg = (
                "embedding_provider=openai needs LOOKUP_KNOWLEDGE_OPENAI_API_KEY "
                "(or LOOKUP_KNOWLEDGE_OPENAI_BASE_URL for a keyless OpenAI-compatible server)"
            )
            raise ConfigurationError(msg)
        client = OpenAIEmbeddings(
            model=settings.openai_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key or "unused",  # type: ignore[arg-type]
            dimensions=settings.openai_dimensions,
            timeout=settings.embedding_timeout_s,
            max_retries=settings.embedding_max_retries,
            chunk_size=settings.embedding_batch_size,
            check_embedding_ctx_length=False,
        )
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        inner = ServiceEmbeddings(
            client,
            settings.openai_base_url or DEFAULT_OPENAI_BASE_URL,
            attempts=1 + settings.embedding_max_retries,
            secrets=(key,),
        )
    else:  # pragma: no cover - guarded by the Literal type
        raise ConfigurationError(f"unknown embedding_provider {settings.embedding_provider!r}")
    # NaN, infinite or all-zero vectors are refused (at ingest and at query), never stored.
    return CachedQueryEmbeddings(ValidatedEmbeddings(inner), maxsize=settings.query_cache_size)
