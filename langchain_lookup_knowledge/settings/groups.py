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

_ONE_DECISION = (
    "the judgement (relevanceScore read against the knowledge base's profile) is the only "
    "decision: the calibrated and similarity decisions did not earn their place on the "
    "leave-one-knowledge-base-out evaluation (docs/evaluation.md); "
)
_OWN_MODEL = (
    "a judgement model of your own in judge_model_file (`lookup-knowledge judge fit`) replaces it"
)

REMOVED_SETTINGS: dict[str, str] = {
    "bm25_stemming": "Snowball stems in the BM25 input ranked no better on the English dev sets "
    "(docs/evaluation.md); a collection built with stems keeps them and is read as built",
    "evidence_decision": _ONE_DECISION + "where a missed answer costs more or less than a wrong "
    "one, fit a judgement model at another point (`lookup-knowledge judge fit --min-found`) "
    "and name it in judge_model_file",
    "relevance_decision": _ONE_DECISION + "relevanceLevel follows from relevanceScore by the "
    "thresholds of the judgement model; " + _OWN_MODEL,
    "high_relevance": _ONE_DECISION + "relevanceLevel high follows from relevanceScore by the "
    "judgement model's threshold, not from the top similarity; " + _OWN_MODEL,
    "medium_relevance": _ONE_DECISION + "relevanceLevel medium follows from relevanceScore by the "
    "judgement model's threshold, not from the top similarity; " + _OWN_MODEL,
    "evidence_model": _ONE_DECISION + "its weights are the judgement model's; " + _OWN_MODEL,
    "fallback_evidence_model": _ONE_DECISION + "a collection without a KB vocabulary is judged "
    "by the same model with the typical profile; " + _OWN_MODEL,
    "relevance_model": _ONE_DECISION + "relevanceLevel follows from relevanceScore; " + _OWN_MODEL,
    "found_confidence": _ONE_DECISION + "found follows from relevanceScore by the judgement "
    "model's found threshold; " + _OWN_MODEL + " (`judge fit --min-found` sets that threshold)",
    "high_confidence": _ONE_DECISION + "relevanceLevel high follows from relevanceScore by the "
    "judgement model's threshold; " + _OWN_MODEL,
    "medium_confidence": _ONE_DECISION + "relevanceLevel medium follows from relevanceScore by "
    "the judgement model's threshold; " + _OWN_MODEL,
    "evidence_term_rule": _ONE_DECISION + "the judgement weighs the first block's question "
    "terms itself (a lexical lookup whose first block holds none scores 0); no setting "
    "replaces it",
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
