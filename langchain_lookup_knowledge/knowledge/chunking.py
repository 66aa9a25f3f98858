"""Heading-aware chunking with breadcrumbs and a stable chunk identity (``evidenceKey``).

Sections (split at markdown headings outside code fences) are packed into chunks of whole
blocks that fit the embedder's window with the header it reads (:mod:`packing`), at most
``chunk_size`` characters each. The identity of a chunk is ``<source>#<ordinal>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from langchain_lookup_knowledge.core.text import is_cjk_char
from langchain_lookup_knowledge.embeddings.window import HuggingFaceWindow, TokenWindow
from langchain_lookup_knowledge.knowledge.documents import MAX_HEADING_CHARS, KnowledgeDocument
from langchain_lookup_knowledge.knowledge.markdown_text import MARKDOWN_HEADING, fenced_lines
from langchain_lookup_knowledge.knowledge.packing import pack_sections, split_span

BREADCRUMB_SEPARATOR = " > "
CHUNKING_VERSION = 10
"""Bumped whenever the same file would be chunked differently (2: HTML comments dropped;
3: frontmatter after a licence comment, empty frontmatter, bounded headings and terms;
4: a CJK document that fits in one Latin-sized chunk is one chunk; 5: chunks of whole blocks
and sentences sized with the embedder's tokenizer; 6: Docusaurus tab markup read as tab titles;
7: the overlap carries the last sentence even when it is longer than ``chunk_overlap``;
8: markdown tables without their alignment padding; 9: SQL output tables in code without their
padding, a table line cut between cells, no chunk without a word; 10: raw HTML read as text,
HTML tables as markdown tables)."""
DEFAULT_WINDOW_TOKENS = 256
"""The bundled all-MiniLM-L6-v2 reads 256 word pieces, special tokens included."""


@dataclass(frozen=True)
class Section:
    """A run of body text under one heading path."""

    path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Chunk:
    """One indexed unit. ``text`` is what is embedded and shown as evidence content."""

    evidence_key: str
    source: str
    ordinal: int
    title: str
    breadcrumb: str
    category: str
    text: str


def chunking_signature(chunk_size: int, chunk_overlap: int, window: str = "") -> str:
    """How a document was chunked; a document chunked another way is re-ingested.

    ``window``: the embedder window's name (another tokenizer or window re-chunks).

    Example:
        >>> chunking_signature(1000, 150, "hf:minilm/256")
        'v10/1000/150/hf:minilm/256'
    """
    tail = f"/{window}" if window else ""
    return f"v{CHUNKING_VERSION}/{chunk_size}/{chunk_overlap}{tail}"


def evidence_key(source: str, ordinal: int) -> str:
    """The stable chunk identity: ``<relative source path>#<ordinal>``."""
    return f"{source}#{ordinal}"


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among the non-space characters of ``text``."""
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return 0.0
    return sum(1 for c in visible if is_cjk_char(c)) / len(visible)


def split_sections(body: str, title: str) -> list[Section]:
    """Split a markdown body at headings; the document title heads every path."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []

    def flush() -> None:
        text = "\n".join(lines).strip("\n")
        if text.strip():
            names = [name for _, name in stack]
            if names and names[0].strip().lower() == title.strip().lower():
                names = names[1:]
            sections.append(Section(path=(title, *names), text=text))
        lines.clear()

    for line, code in fenced_lines(body.splitlines()):
        match = None if code else MARKDOWN_HEADING.match(line)
        if match:
            flush()
            level = len(match.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match.group(2).strip()[:MAX_HEADING_CHARS]))
        lines.append(line)
    flush()
    return sections


def chunk_document(
    doc: KnowledgeDocument,
    chunk_size: int = 1000,
    overlap: int = 150,
    window: TokenWindow | None = None,
) -> list[Chunk]:
    """Chunk one document to fit ``window`` (default: the bundled model's 256 word pieces).

    A chunk holds whole blocks (headings, paragraphs, list items, tables, code fences) of one or
    more sections, at most ``chunk_size`` characters (a code block may exceed that when it fits
    the window), and, behind the header the dense model reads with it (:func:`embedding_text`),
    fits the embedder's window counted with its own tokenizer. See :mod:`packing`.

    Example:
        >>> from langchain_lookup_knowledge.knowledge.documents import parse_document
        >>> doc = parse_document(b"# Disk\\n## Meaning\\nFull.\\n## Fix\\nClean.", "node/disk.md")
        >>> [c.evidence_key for c in chunk_document(doc)]
        ['node/disk.md#0']
    """
    if chunk_size < 50:
        raise ValueError(f"chunk_size must be >= 50, got {chunk_size}")
    if not 0 <= overlap < chunk_size // 2:
        raise ValueError(f"overlap must be within 0..{chunk_size // 2 - 1}, got {overlap}")
    window = window or default_window()
    sections = [(s.path, s.text) for s in split_sections(doc.body, doc.title)]

    headers: dict[tuple[tuple[str, ...], bool], str] = {}

    def header_of(path: tuple[str, ...], ordinal: int) -> str:
        key = (path, ordinal == 0)
        if key not in headers:
            headers[key] = embedding_header(breadcrumb_of(path), doc, ordinal, window)
        return headers[key]

    chunks: list[Chunk] = []
    for ordinal, (path, text) in enumerate(
        pack_sections(sections, window, header_of, chunk_size, overlap)
    ):
        chunks.append(
            Chunk(
                evidence_key=evidence_key(doc.source, ordinal),
                source=doc.source,
                ordinal=ordinal,
                title=doc.title,
                breadcrumb=breadcrumb_of(path),
                category=doc.category,
                text=text,
            )
        )
    return chunks


def breadcrumb_of(path: tuple[str, ...]) -> str:
    """A section path as the breadcrumb chunks carry (empty parts left out).

    Example:
        >>> breadcrumb_of(("Disk full", "", "Fix"))
        'Disk full > Fix'
    """
    return BREADCRUMB_SEPARATOR.join(p for p in path if p)


def embedding_header(
    breadcrumb: str, doc: KnowledgeDocument, ordinal: int, window: TokenWindow | None = None
) -> str:
    """The header the dense model reads before a chunk: breadcrumb, the document's terms, and
    its summary on the first chunk; cut at a word start to at most half of ``window``."""
    header = [breadcrumb]
    terms = [*doc.aliases, *doc.keywords]
    if terms:
        header.append(", ".join(terms))
    if ordinal == 0 and doc.summary:
        header.append(doc.summary)
    text = "\n".join(header)
    window = window or default_window()
    half = window.max_tokens // 2
    if window.count([text])[0] <= half:
        return text
    base = window.count([""])[0]
    first = split_span(text, 0, len(text), max(4, half - base), len(text), window, base)[0]
    return text[: first[1]].rstrip()


def embedding_text(chunk: Chunk, doc: KnowledgeDocument, window: TokenWindow | None = None) -> str:
    """What the dense model reads for a chunk: breadcrumb and document terms, then the text.

    ``window``: the one the chunk was made for (its header is bounded to half of it).
    """
    return embedding_header(chunk.breadcrumb, doc, chunk.ordinal, window) + "\n\n" + chunk.text


@lru_cache(maxsize=1)
def default_window() -> TokenWindow:
    """The bundled all-MiniLM-L6-v2's window: 256 word pieces, counted with its tokenizer."""
    from langchain_lookup_knowledge.embeddings.onnx import ModelFiles

    return HuggingFaceWindow(ModelFiles.pinned_default().tokenizer, DEFAULT_WINDOW_TOKENS)
