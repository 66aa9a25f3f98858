"""How a lookup judges its own answer (``relevanceScore``, ``found``, ``relevanceLevel``): the
judgement model and what it reads.

Example:
    >>> DecisionSettings().judge_model_file is None
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_lookup_knowledge.settings.types import UnitInterval

__all__ = ["DecisionSettings"]


class DecisionSettings(BaseModel):
    """The judgement of a lookup: its model, the evidence floor and the vocabulary rules."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    min_evidence_similarity: UnitInterval = Field(
        default=0.20,
        description="Candidates below this dense similarity are no evidence blocks (in a "
        "lookup and in the knowledge base's profile measured at ingest).",
    )
    judge_model_file: Path | None = Field(
        default=None,
        description="The judgement model that scores every lookup (relevanceScore, and found "
        "and relevanceLevel by its thresholds), as written by `lookup-knowledge judge fit` "
        "(None: the one shipped with the package).",
    )
    evidence_vocabulary_rules: Literal["exact", "operator"] = Field(
        default="exact",
        description="Which question words the judgement counts as seen by the KB vocabulary. "
        "exact: a KB term, or part of a longer one ('notready' of KubeNodeNotReady); operator: "
        "also how operators write them: a typo of 6+ letters one edit from a KB term "
        "('seperate'), a CamelCase word whose parts the KB holds ('ContainerCreating'), two KB "
        "words run together ('resourcequota'), and a pasted value with a digit ('node7', "
        "'eth0', '429') is no unseen name.",
    )
