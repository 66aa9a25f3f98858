"""A bounded LRU cache of query vectors in front of any ``Embeddings``.

Repeated questions (an agent asking again, a retry, a benchmark loop) skip the model. Document
embeddings are never cached: ingestion deduplicates by content hash instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from langchain_core.embeddings import Embeddings


class CachedQueryEmbeddings(Embeddings):
    """Wrap ``inner`` and keep the last ``maxsize`` query vectors.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> cached = CachedQueryEmbeddings(DeterministicFakeEmbedding(size=8), maxsize=2)
        >>> cached.embed_query("a") == cached.embed_query("a")
        True
    """

    def __init__(self, inner: Embeddings, maxsize: int = 512) -> None:
        self.inner = inner
        self.maxsize = maxsize
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _get(self, text: str) -> list[float] | None:
        with self._lock:
            vector = self._cache.get(text)
            if vector is not None:
                self._cache.move_to_end(text)
                self.hits += 1
            else:
                self.misses += 1
            return vector

    def _put(self, text: str, vector: list[float]) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > self.maxsize:
                self._cache.popitem(last=False)

    def clear(self) -> None:
        """Forget every cached query vector (benchmarks of never-seen queries)."""
        with self._lock:
            self._cache.clear()

    @property
    def queries_are_documents(self) -> bool:
        """Whether the wrapped embedder embeds a query as it embeds a document."""
        return bool(getattr(self.inner, "queries_are_documents", False))

    def prime(self, texts: list[str]) -> None:
        """Cache the query vectors of ``texts`` in one batch, when the wrapped embedder embeds a
        query as it embeds a document (``queries_are_documents``); otherwise nothing: each is
        embedded when asked.

        Example:
            >>> cache = CachedQueryEmbeddings(embedder)  # doctest: +SKIP
            >>> cache.prime(["disk full", "pod restarts"])  # doctest: +SKIP
        """
        if not texts or not self.queries_are_documents:
            return
        for text, vector in zip(texts, self.inner.embed_documents(texts), strict=True):
            self._put(text, vector)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Pass through to the wrapped embedder (not cached)."""
        return self.inner.embed_documents(texts)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Pass through to the wrapped embedder (not cached)."""
        return await self.inner.aembed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """The cached vector, or the wrapped embedder's (then cached)."""
        vector = self._get(text)
        if vector is None:
            vector = self.inner.embed_query(text)
            self._put(text, vector)
        return list(vector)

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        vector = self._get(text)
        if vector is None:
            vector = await self.inner.aembed_query(text)
            self._put(text, vector)
        return list(vector)
