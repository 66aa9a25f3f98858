"""Knowledge files: parsing, chunking, and the folder walk."""

from langchain_lookup_knowledge.knowledge.chunking import Chunk, chunk_document, evidence_key
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument, parse_document
from langchain_lookup_knowledge.knowledge.loader import SkippedFile, iter_markdown_files

__all__ = [
    "Chunk",
    "KnowledgeDocument",
    "SkippedFile",
    "chunk_document",
    "evidence_key",
    "iter_markdown_files",
    "parse_document",
]
