"""Refuse garbage vectors (NaN, infinity, all zeros) before they are stored or searched.

A broken embedding service that answers 200 with NaN or zero vectors would otherwise fill the
collection with vectors no query can ever be near, and every lookup would answer "no evidence"
as if the knowledge base simply did not know. Both ingest and query check every vector.

Example:
    >>> vector_problem([0.6, 0.8])
    >>> vector_problem([0.0, 0.0])
    'all-zero vector'
    >>> vector_problem([float("nan"), 1.0])
    'NaN at position 0'
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.errors import EmbeddingError


def vector_problem(vector: Sequence[float]) -> str | None:
    """Why ``vector`` cannot be stored or searched, or None when it is a usable vector."""
    if len(vector) == 0:
        return "empty vector"
    norm = 0.0
    for position, value in enumerate(vector):
        try:
            number = float(value)
        except (TypeError, ValueError):
            return f"not a number at position {position} ({type(value).__name__})"
        if math.isnan(number):
            return f"NaN at position {position}"
        if math.isinf(number):
            return f"infinity at position {position}"
        norm += number * number
    if norm == 0.0:
        return "all-zero vector"
    if math.isinf(norm):
        return "vector norm overflows"
    return None


def check_vectors(
    vectors: Sequence[Sequence[float]], *, what: str, names: Sequence[str] | None = None
) -> None:
    """Raise :class:`EmbeddingError` naming the first unusable vector of ``vectors``.

    ``what`` says where they come from ("query", "document chunks"); ``names`` (same length)
    name each vector (an evidence key) in the message.
    """
    if not vectors:
        return
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
        fine = bool(matrix.ndim == 2 and matrix.shape[1] > 0 and np.isfinite(matrix).all())
        fine = fine and bool((np.abs(matrix).max(axis=1) > 0).all())
    except (TypeError, ValueError):  # ragged or not numbers: find the culprit below
        fine = False
    if fine:
        return
    bad = [(i, problem) for i, v in enumerate(vectors) if (problem := vector_problem(v))]
    if not bad:
        return
    index, problem = bad[0]
    if names is not None and index < len(names):
        label = f" {names[index]}"
    else:
        label = f" #{index}" if len(vectors) > 1 else ""
    msg = (
        f"the embedding service returned an unusable vector for {what}{label} ({problem}; "
        f"{len(bad)} of {len(vectors)} unusable): nothing was stored or searched with it; "
        "check the embedding service, then run again"
    )
    raise EmbeddingError(msg)


class ValidatedEmbeddings(Embeddings):
    """Wrap ``inner``; every vector it returns is checked with :func:`check_vectors`.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> len(ValidatedEmbeddings(DeterministicFakeEmbedding(size=4)).embed_query("disk"))
        4
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    @property
    def queries_are_documents(self) -> bool:
        """Whether the wrapped embedder embeds a query as it embeds a document."""
        return bool(getattr(self.inner, "queries_are_documents", False))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents; an unusable vector raises :class:`EmbeddingError`."""
        vectors = self.inner.embed_documents(texts)
        check_vectors(vectors, what="document text")
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a query; an unusable vector raises :class:`EmbeddingError`."""
        vector = self.inner.embed_query(text)
        check_vectors([vector], what="the query")
        return vector

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents`."""
        vectors = await self.inner.aembed_documents(texts)
        check_vectors(vectors, what="document text")
        return vectors

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        vector = await self.inner.aembed_query(text)
        check_vectors([vector], what="the query")
        return vector
