"""What ``eval queries`` scores beside the pipeline: named setting variants and ablations.

Example:
    >>> "first_chunk" in ABLATIONS
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge.core.rerank_weights import RerankWeights
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.scoring import (
    K,
)
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = ["ABLATIONS", "ablation_overrides", "variant_overrides"]


_L0_BOOSTS = ("l0_title", "l0_keyword", "l0_alias", "l0_entity", "domain_match")


ABLATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "l0_filter": ("L0 category filter", {"l0_category_filter": False}),
    "retry_guard": (
        "retry guard (an unreliable filtered attempt ranks last)",
        {"l0_retry_guard": False},
    ),
    "l0_boosts": ("L0 boosts (title, keyword, alias, entity, domain)", {"_weights": _L0_BOOSTS}),
    "term_boosts": (
        "query-term boosts (coverage, title overlap)",
        {"_weights": ("query_term_coverage", "title_term_overlap")},
    ),
    "first_chunk": ("first-chunk boost", {"_weights": ("first_chunk",)}),
    "rank_mix": ("fused rank in the rerank base", {"_similarity_only": True}),
    "doc_cap": ("per-document cap", {"per_document_cap": K}),
    "list_depth": (
        "hybrid list depth (each list only candidate_k x hybrid_fetch_factor deep)",
        {"hybrid_list_depth": 0},
    ),
    "cjk_rule": ("CJK rule (BM25 alone for a Chinese question)", {"_cjk_rule_off": True}),
}
"""Name -> (what is switched off, settings overrides). ``_``-keys are resolved per run."""


def variant_overrides(settings: LookupSettings, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A variant's settings overrides, its ``rerank_weights`` on top of the user's own.

    Raises:
        ConfigurationError: an unknown setting, or a value the settings refuse.

    Example:
        >>> user = LookupSettings(rerank_weights={"l0_title": 0.2})
        >>> variant_overrides(user, {"rerank_weights": {"bm25_share": 0.2}, "rrf_k": 20})
        {'rerank_weights': {'l0_title': 0.2, 'bm25_share': 0.2}, 'rrf_k': 20}
    """
    unknown = sorted(set(overrides) - set(LookupSettings.model_fields))
    if unknown:
        raise ConfigurationError(f"variant: unknown setting {unknown[0]!r}")
    out = dict(overrides)
    if "rerank_weights" in out:
        out["rerank_weights"] = dict(settings.rerank_weights) | dict(out["rerank_weights"])
    try:
        checked = LookupSettings.model_validate(settings.model_dump() | out)
        RerankWeights.from_overrides(checked.rerank_weights)
    except ValueError as exc:  # pydantic's ValidationError is one
        raise ConfigurationError(f"variant {dict(overrides)}: {exc}") from None
    return out


def ablation_overrides(settings: LookupSettings, name: str) -> dict[str, Any]:
    """The settings overrides that switch component ``name`` of :data:`ABLATIONS` off.

    Example:
        >>> ablation_overrides(LookupSettings(), "first_chunk")
        {'rerank_weights': {'first_chunk': 0.0}}
        >>> ablation_overrides(LookupSettings(), "list_depth")
        {'hybrid_list_depth': 0}
    """
    if name not in ABLATIONS:
        raise ConfigurationError(f"unknown ablation {name!r}: use one of {', '.join(ABLATIONS)}")
    out: dict[str, Any] = {}
    for key, value in ABLATIONS[name][1].items():
        if key == "_weights":
            out["rerank_weights"] = dict(settings.rerank_weights) | dict.fromkeys(value, 0.0)
        elif key == "_similarity_only":
            dense_only = {"similarity_share": 1.0, "bm25_share": 0.0}
            out["rerank_weights"] = dict(settings.rerank_weights) | dense_only
        elif key == "_cjk_rule_off":
            out["cjk_retrieval_mode"] = settings.retrieval_mode
        else:
            out[key] = value
    return out
