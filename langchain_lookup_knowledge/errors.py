"""Exception classes, one per failure kind, each with a message a user or a model can act on."""

from __future__ import annotations


class LookupKnowledgeError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigurationError(LookupKnowledgeError, ValueError):
    """A setting or argument has a value that cannot work (the message names it)."""


class InvalidQueryError(LookupKnowledgeError, ValueError):
    """The query cannot be answered as given (empty, whitespace only, ...)."""


class ModelFilesError(LookupKnowledgeError):
    """The local embedding model files are missing or do not match their pinned hashes."""


class EmbeddingError(LookupKnowledgeError):
    """The embedding provider failed after its bounded retries."""


class StoreUnavailableError(LookupKnowledgeError):
    """Milvus cannot be opened or reached (locked, wrong path, unreachable, timed out)."""


class CollectionNotFoundError(StoreUnavailableError):
    """Milvus answers, but the configured collection does not exist (ingest first)."""


class LiteDatabaseLockedError(StoreUnavailableError, ConfigurationError):
    """The Milvus Lite file is open in another process: retrying will not help; serve it
    (``lookup-knowledge serve``) and share its URI instead."""


class SchemaMismatchError(LookupKnowledgeError):
    """An existing collection does not fit the configured embedder, metric or fields."""


class MissingIndexError(SchemaMismatchError):
    """A chunk collection has a field without its index (an index build that did not finish,
    e.g. a process killed during a BM25 index rebuild): ``lookup-knowledge ingest`` builds it
    again, nothing re-embedded."""


class EmbedderMismatchError(ConfigurationError, SchemaMismatchError):
    """A collection was built with another embedding model than the configured one (of the
    same dimension or not): its vectors cannot be compared with the query's."""


class DamagedStoreError(LookupKnowledgeError):
    """The knowledge base's store is damaged: its files are missing or corrupt, or it holds no
    chunks while its catalog lists documents. Not transient (retrying will not help) and not
    "nothing found": rebuild it (``lookup-knowledge ingest --rebuild FOLDER``)."""


class RetrievalUnavailableError(LookupKnowledgeError):
    """Every configured L1 path failed: knowledge retrieval is unavailable."""


class UnsafeFilterError(LookupKnowledgeError, ValueError):
    """A filter value or field name cannot be placed safely in a Milvus expression."""


PERMANENT_ERRORS: tuple[type[Exception], ...] = (
    ConfigurationError,
    CollectionNotFoundError,
    ModelFilesError,
    SchemaMismatchError,
    UnsafeFilterError,
)
"""Failures that retrying cannot fix: the configuration or the index must change first."""


def is_damaged_store(exc: BaseException) -> bool:
    """Whether ``exc`` says the store itself is damaged (rebuild it; retrying will not help).

    Example:
        >>> is_damaged_store(DamagedStoreError("milvus.db: schema.json unreadable"))
        True
    """
    return isinstance(exc, DamagedStoreError)


def is_permanent(exc: BaseException) -> bool:
    """Whether ``exc`` is a configuration problem (retrying will not help), not a transient fault.

    Example:
        >>> is_permanent(SchemaMismatchError("dimension 384 != 768")), is_permanent(TimeoutError())
        (True, False)
    """
    return isinstance(exc, PERMANENT_ERRORS)
