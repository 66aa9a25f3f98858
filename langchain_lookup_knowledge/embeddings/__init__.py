"""Embedding providers: the offline ONNX default, OpenAI-compatible, and a query cache."""

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.factory import build_embeddings, cached_embeddings
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles, OnnxSentenceEmbeddings
from langchain_lookup_knowledge.embeddings.window import TokenWindow, window_of

__all__ = [
    "CachedQueryEmbeddings",
    "ModelFiles",
    "OnnxSentenceEmbeddings",
    "TokenWindow",
    "build_embeddings",
    "cached_embeddings",
    "window_of",
]
