"""Embedding providers: the offline ONNX default, OpenAI-compatible, and a query cache."""

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.factory import build_embeddings
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles, OnnxSentenceEmbeddings

__all__ = ["CachedQueryEmbeddings", "ModelFiles", "OnnxSentenceEmbeddings", "build_embeddings"]
