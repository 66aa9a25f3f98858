"""Read one markdown file with YAML frontmatter into a :class:`KnowledgeDocument`.

Frontmatter fields understood: ``title``; ``keywords`` / ``tags``; ``category`` / ``domain``;
``entities``; ``aliases``; ``summary`` / ``description``. Any other field is kept in ``extra``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from langchain_lookup_knowledge.knowledge.frontmatter import (
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    MAX_YAML_SECONDS,
    UnreadableFileError,
    YamlLimitError,
    frontmatter_and_body,
    load_bounded_yaml,
    split_frontmatter,
)
from langchain_lookup_knowledge.knowledge.html_text import html_as_text
from langchain_lookup_knowledge.knowledge.markdown_text import (
    first_heading,
    is_fence,
    longest_heading,
    strip_html_comments,
)
from langchain_lookup_knowledge.knowledge.mdx import strip_tab_markup
from langchain_lookup_knowledge.knowledge.tables import compact_tables

__all__ = [
    "MAX_HEADING_CHARS",
    "MAX_SUMMARY_CHARS",
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "MAX_YAML_SECONDS",
    "DocumentTerms",
    "KnowledgeDocument",
    "UnreadableFileError",
    "YamlLimitError",
    "decode_knowledge_bytes",
    "first_heading",
    "frontmatter_and_body",
    "is_fence",
    "load_bounded_yaml",
    "longest_heading",
    "parse_document",
    "split_frontmatter",
    "strip_html_comments",
]


# Bounds on what one file may cost or put into a row (Milvus VARCHAR limits: 65,535 for the
# chunk text, which also carries the breadcrumb and the document's terms). Longer values are
# truncated, and the document's warnings say so by name.
MAX_TITLE_CHARS = 500
MAX_HEADING_CHARS = 500
MAX_SUMMARY_CHARS = 2000
MAX_TERMS = 64
MAX_TERM_CHARS = 100


@dataclass(frozen=True)
class DocumentTerms:
    """What a document is and is called: its path, title, category and frontmatter terms.

    The fields L0 matches on, shared by a parsed :class:`KnowledgeDocument` and its
    :class:`~langchain_lookup_knowledge.knowledge.catalog.CatalogEntry`.
    """

    source: str
    title: str
    category: str
    keywords: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class KnowledgeDocument(DocumentTerms):
    """One knowledge file, parsed. ``source`` is its POSIX path relative to the ingested folder.

    Its own fields (``body``, ``content_hash``, ...) are keyword-only.
    """

    body: str
    content_hash: str
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """What was changed to index the file (a truncated field, frontmatter read as text)."""

    @property
    def stem(self) -> str:
        """The file name without its suffix (what evaluation files call a document)."""
        return PurePosixPath(self.source).stem


def _bounded_terms(
    value: Any, field_name: str, source: str, warnings: list[str]
) -> tuple[str, ...]:
    """:func:`_as_terms`, at most MAX_TERMS terms of MAX_TERM_CHARS characters (warned)."""
    terms = _as_terms(value, field_name, source)
    if len(terms) > MAX_TERMS:
        warnings.append(
            f"frontmatter '{field_name}' truncated to its first {MAX_TERMS} of {len(terms)} terms"
        )
        terms = terms[:MAX_TERMS]
    if any(len(t) > MAX_TERM_CHARS for t in terms):
        warnings.append(
            f"frontmatter '{field_name}' terms truncated to {MAX_TERM_CHARS} characters each"
        )
        terms = tuple(dict.fromkeys(t[:MAX_TERM_CHARS] for t in terms))
    return terms


def _truncated(text: str, limit: int, what: str, warnings: list[str]) -> str:
    if len(text) <= limit:
        return text
    warnings.append(f"{what} truncated to {limit:,} of {len(text):,} characters")
    return text[:limit]


def _as_terms(value: Any, field_name: str, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = [part for part in re.split(r"[,，;；]", value)]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise UnreadableFileError(
            f"frontmatter field '{field_name}' must be a list or a string, "
            f"got {type(value).__name__} ({source})"
        )
    terms: dict[str, None] = {}  # ordered, and O(1) to deduplicate 20,000 terms
    for item in items:
        if isinstance(item, dict | list):
            raise UnreadableFileError(
                f"frontmatter field '{field_name}' holds a nested {type(item).__name__} ({source})"
            )
        text = str(item).strip() if item is not None else ""
        if text:
            terms[text] = None
    return tuple(terms)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value).strip()


def decode_knowledge_bytes(raw: bytes) -> str:
    """UTF-8 text of a knowledge file, or :class:`UnreadableFileError` with the reason."""
    if b"\x00" in raw[:8192]:
        raise UnreadableFileError("binary file (contains NUL bytes)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(
            f"not UTF-8 text (invalid byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from exc


def parse_document(
    raw: bytes, source: str, default_category: str | None = None
) -> KnowledgeDocument:
    """Parse a knowledge file's bytes. ``source`` is the relative POSIX path.

    Category: the frontmatter's ``category``/``domain``, else ``default_category`` (from a
    categories file), else the first folder of ``source``.

    Example:
        >>> doc = parse_document(b"---\\ntitle: Disk full\\n---\\nFree space.", "node/disk.md")
        >>> (doc.title, doc.category)
        ('Disk full', 'node')
    """
    text = decode_knowledge_bytes(raw)
    if not text.strip():
        raise UnreadableFileError("empty file")
    meta, body, warnings = frontmatter_and_body(text, source)
    body = compact_tables(html_as_text(strip_tab_markup(strip_html_comments(body))))
    if not body.strip():
        raise UnreadableFileError("no content after the frontmatter")
    parts = PurePosixPath(source).parts
    folder_category = parts[0] if len(parts) > 1 else ""
    category = (
        _as_text(meta.get("category", meta.get("domain")))
        or (default_category or "").strip()
        or folder_category
    )
    title = _as_text(meta.get("title")) or first_heading(body) or Path(source).stem
    title = _truncated(title, MAX_TITLE_CHARS, "title", warnings)
    category = _truncated(category, MAX_TERM_CHARS, "category", warnings)
    keywords = _bounded_terms(meta.get("keywords"), "keywords", source, warnings) + tuple(
        t for t in _bounded_terms(meta.get("tags"), "tags", source, warnings)
    )
    if longest_heading(body) > MAX_HEADING_CHARS:
        warnings.append(f"headings longer than {MAX_HEADING_CHARS} characters truncated")
    known = {
        "title",
        "keywords",
        "tags",
        "category",
        "domain",
        "entities",
        "aliases",
        "summary",
        "description",
    }
    extra = {k: v for k, v in meta.items() if k not in known}
    return KnowledgeDocument(
        source=source,
        title=title,
        category=category,
        body=body,
        content_hash=hashlib.sha256(raw).hexdigest(),
        keywords=tuple(dict.fromkeys(keywords)),
        entities=_bounded_terms(meta.get("entities"), "entities", source, warnings),
        # Static-site generators use `aliases` for old URLs (/kubememovercommit/): not names.
        aliases=tuple(
            a
            for a in _bounded_terms(meta.get("aliases"), "aliases", source, warnings)
            if not a.startswith(("/", "http://", "https://"))
        ),
        summary=_truncated(
            _as_text(meta.get("summary", meta.get("description"))),
            MAX_SUMMARY_CHARS,
            "summary",
            warnings,
        ),
        extra=extra,
        warnings=tuple(warnings),
    )
