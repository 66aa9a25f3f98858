"""Retrieval quality and speed measurements: ``lookup-knowledge eval`` and ``bench``."""

from langchain_lookup_knowledge.evaluation.metrics import (
    aggregate,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
)

__all__ = ["aggregate", "mrr_at_k", "ndcg_at_k", "recall_at_k"]
