"""Walk a knowledge folder: every markdown file parsed, or skipped with a named reason."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from langchain_lookup_knowledge.knowledge.documents import (
    KnowledgeDocument,
    UnreadableFileError,
    parse_document,
)

MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class SkippedFile:
    """A file that was not indexed, and why (shown to the user by name)."""

    source: str
    reason: str


def iter_markdown_files(root: Path) -> Iterator[Path]:
    """Markdown files under ``root`` in a stable order; hidden files and folders are ignored."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in MARKDOWN_SUFFIXES:
            yield path


def load_document(
    path: Path, root: Path, max_bytes: int, categories: Mapping[str, str] | None = None
) -> KnowledgeDocument | SkippedFile:
    """Parse one file, or say why it is skipped (too big, binary, not UTF-8, empty, bad YAML).

    ``categories``: a categories file's mapping (relative path -> category), if any.
    """
    source = path.relative_to(root).as_posix()
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return SkippedFile(source, f"file too large ({size} bytes > limit {max_bytes})")
        raw = path.read_bytes()
    except OSError as exc:
        return SkippedFile(source, f"cannot read file: {exc.strerror or exc}")
    try:
        return parse_document(raw, source, (categories or {}).get(source))
    except UnreadableFileError as exc:
        return SkippedFile(source, str(exc))
