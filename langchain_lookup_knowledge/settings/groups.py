"""The settings' groups by concern, and the settings that no longer exist.

Example:
    >>> list(GROUPS)
    ['store', 'embedding', 'retrieval', 'rerank', 'decision', 'records', 'ingest', 'limits']
    >>> group_of("top_k")
    'retrieval'
"""

from __future__ import annotations

from pydantic import BaseModel

from langchain_lookup_knowledge.settings.decision import DecisionSettings
from langchain_lookup_knowledge.settings.embedding import EmbeddingSettings
from langchain_lookup_knowledge.settings.ingest import IngestSettings
from langchain_lookup_knowledge.settings.limits import LimitSettings
from langchain_lookup_knowledge.settings.records import RecordSettings
from langchain_lookup_knowledge.settings.rerank import RerankSettings
from langchain_lookup_knowledge.settings.retrieval import RetrievalSettings
from langchain_lookup_knowledge.settings.store import StoreSettings

__all__ = ["GROUPS", "REMOVED_SETTINGS", "group_of", "setting_names"]

GROUPS: dict[str, type[BaseModel]] = {
    "store": StoreSettings,
    "embedding": EmbeddingSettings,
    "retrieval": RetrievalSettings,
    "rerank": RerankSettings,
    "decision": DecisionSettings,
    "records": RecordSettings,
    "ingest": IngestSettings,
    "limits": LimitSettings,
}
"""Each group's name (its attribute on ``LookupSettings``) and model, in the reference's order."""

REMOVED_SETTINGS: dict[str, str] = {
    "bm25_stemming": "Snowball stems in the BM25 input ranked no better on the English dev sets "
    "(docs/evaluation.md); a collection built with stems keeps them and is read as built",
}
"""Settings that were removed, with why: given, they are an error rather than ignored."""


def setting_names() -> list[str]:
    """Every setting's name, group by group."""
    return [name for model in GROUPS.values() for name in model.model_fields]


def group_of(name: str) -> str:
    """The group a setting belongs to (``KeyError`` for a name that is no setting)."""
    for group, model in GROUPS.items():
        if name in model.model_fields:
            return group
    raise KeyError(name)
