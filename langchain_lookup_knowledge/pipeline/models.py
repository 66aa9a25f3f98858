"""The result contract, re-exported from :mod:`langchain_lookup_knowledge.core.models`.

The models live in the bottom layer (``core``) so that ``retrieval`` and ``pipeline`` import
them alike; this module keeps the ``pipeline.models`` import path working.

Example:
    >>> from langchain_lookup_knowledge.pipeline.models import LookupResult
    >>> LookupResult.__module__
    'langchain_lookup_knowledge.core.models'
"""

from langchain_lookup_knowledge.core.models import (
    Candidate,
    ContextPack,
    ContractModel,
    EvidenceBlock,
    EvidenceStatus,
    FallbackReason,
    HitReason,
    L0Hints,
    LookupResult,
    RelevanceLevel,
    RerankEntry,
    RetrievalAttempt,
    RetrievalLayer,
    RetrievalTrace,
    ScoreLabel,
    SidecarReport,
)

__all__ = [
    "Candidate",
    "ContextPack",
    "ContractModel",
    "EvidenceBlock",
    "EvidenceStatus",
    "FallbackReason",
    "HitReason",
    "L0Hints",
    "LookupResult",
    "RelevanceLevel",
    "RerankEntry",
    "RetrievalAttempt",
    "RetrievalLayer",
    "RetrievalTrace",
    "ScoreLabel",
    "SidecarReport",
]
