"""Knowledge files: parsing, chunking, and the folder walk; the bundled sample folder."""

from pathlib import Path

from langchain_lookup_knowledge.knowledge.chunking import Chunk, chunk_document, evidence_key
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument, parse_document
from langchain_lookup_knowledge.knowledge.loader import SkippedFile, iter_markdown_files

SAMPLE_KB = Path(__file__).resolve().parent.parent / "sample_kb"
"""The bundled sample knowledge base (the demo's, the bench's default)."""


def is_bundled_sample(folder: str | Path) -> bool:
    """Whether ``folder`` is the bundled sample, of this install or another one (a venv moved).

    Example:
        >>> is_bundled_sample(SAMPLE_KB), is_bundled_sample("/home/me/runbooks")
        (True, False)
    """
    path = Path(folder)
    return path.name == SAMPLE_KB.name and path.parent.name == SAMPLE_KB.parent.name


__all__ = [
    "SAMPLE_KB",
    "Chunk",
    "KnowledgeDocument",
    "SkippedFile",
    "chunk_document",
    "evidence_key",
    "is_bundled_sample",
    "iter_markdown_files",
    "parse_document",
]
