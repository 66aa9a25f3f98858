"""How a lookup judges its own answer: ``found``, ``relevanceLevel`` and ``relevanceScore``.

Example:
    >>> DecisionSettings().evidence_decision
    'profiled'
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_lookup_knowledge.settings.types import UnitInterval

__all__ = ["DecisionSettings"]


def _default_evidence_model(
    *, relevance: bool = False, fallback: bool = False
) -> dict[str, dict[str, float]]:
    from langchain_lookup_knowledge.core.evidence_model import (
        DEFAULT_EVIDENCE_MODEL,
        DEFAULT_FALLBACK_EVIDENCE_MODEL,
        DEFAULT_RELEVANCE_MODEL,
    )

    model = (
        DEFAULT_RELEVANCE_MODEL
        if relevance
        else DEFAULT_FALLBACK_EVIDENCE_MODEL
        if fallback
        else DEFAULT_EVIDENCE_MODEL
    )
    return {family: dict(weights) for family, weights in model.items()}


class DecisionSettings(BaseModel):
    """The evidence decision and the relevance level, and the models behind them."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    min_evidence_similarity: UnitInterval = Field(
        default=0.20,
        description="Candidates below this similarity are not evidence. Off-topic questions "
        "score <= 0.18 with the default embedder; relevant hits BM25 found can be as low as 0.21.",
    )
    high_relevance: UnitInterval = Field(
        default=0.62, description="relevanceLevel high under relevance_decision=similarity."
    )
    medium_relevance: UnitInterval = Field(
        default=0.45,
        description="relevanceLevel medium under relevance_decision=similarity.",
    )
    evidence_decision: Literal["profiled", "calibrated", "similarity"] = Field(
        default="profiled",
        description="profiled: found, relevanceLevel and completenessHint follow from one "
        "relevanceScore (0..1, how likely the first block answers the question): a model "
        "fitted across knowledge bases reads the lookup's sorted scores, term coverage, the "
        "legs' agreement and the question's terms the KB never names, each relative to the "
        "knowledge base's own profile measured at ingest (what its pseudo-questions and "
        "off-topic probes score); thresholds in the shipped judge_model.json. calibrated: a "
        "confidence fitted on the dev question sets (evidence_model). similarity: any block "
        "above min_evidence_similarity is evidence. relevanceScore is given under each.",
    )
    relevance_decision: Literal["auto", "calibrated", "similarity"] = Field(
        default="auto",
        description="Where relevanceLevel comes from. auto: the evidence decision's own (the "
        "relevanceScore thresholds under profiled, relevance_model under calibrated, the top "
        "similarity under similarity); calibrated: relevance_model against high_confidence / "
        "medium_confidence; similarity: the top similarity against high_relevance / "
        "medium_relevance.",
    )
    judge_model_file: Path | None = Field(
        default=None,
        description="A judgement model written by `lookup-knowledge judge fit` (None: the "
        "shipped one, fitted across six knowledge bases).",
    )
    evidence_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(),
        description="Logistic weights of the calibrated decision per retrieval family (hybrid; "
        "dense: dense alone; sparse: BM25 alone; lexical: a question the embedder cannot read; "
        "a missing family falls back to dense) and signal; fitted by benchmarks/fit_decision.py.",
    )
    fallback_evidence_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(fallback=True),
        description="evidence_model of a collection without a KB vocabulary (re-ingest adds "
        "one): the same families, no vocabulary signal.",
    )
    relevance_model: dict[str, dict[str, float]] = Field(
        default_factory=lambda: _default_evidence_model(relevance=True),
        description="Logistic weights of relevanceLevel under the calibrated decision: the "
        "confidence that the first block answers the question (same families and signals).",
    )
    evidence_vocabulary_rules: Literal["exact", "operator"] = Field(
        default="exact",
        description="Calibrated decision: which question words count as seen by the KB "
        "vocabulary. exact: a KB term, or part of a longer one ('notready' of "
        "KubeNodeNotReady); operator: also how operators write them: a typo of 6+ letters one "
        "edit from a KB term ('seperate'), a CamelCase word whose parts the KB holds "
        "('ContainerCreating'), two KB words run together ('resourcequota'), and a pasted "
        "value with a digit ('node7', 'eth0', '429') is no unseen name.",
    )
    evidence_term_rule: Literal["lexical", "all"] = Field(
        default="lexical",
        description="Calibrated decision: the paths whose first block is no evidence when it "
        "holds none of the question's terms. lexical: BM25-only and lexical lookups; all: "
        "every path (hybrid and dense too).",
    )
    found_confidence: UnitInterval = Field(
        default=0.5,
        description="Calibrated decision: below this confidence the lookup answers found=false.",
    )
    high_confidence: UnitInterval = Field(
        default=0.7588, description="relevanceLevel high under relevance_decision=calibrated."
    )
    medium_confidence: UnitInterval = Field(
        default=0.3175, description="relevanceLevel medium under relevance_decision=calibrated."
    )

    @field_validator("evidence_model", "fallback_evidence_model", "relevance_model")
    @classmethod
    def _evidence_model_is_known(
        cls, value: dict[str, dict[str, float]]
    ) -> dict[str, dict[str, float]]:
        from langchain_lookup_knowledge.core.evidence_model import validate_evidence_model

        validate_evidence_model(value)  # names the unknown family / signal or the bad weight
        return value
