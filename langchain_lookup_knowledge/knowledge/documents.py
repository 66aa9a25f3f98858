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

import yaml

_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


class UnreadableFileError(ValueError):
    """A knowledge file that cannot be indexed; the message is the reason shown to the user."""


@dataclass(frozen=True)
class KnowledgeDocument:
    """One knowledge file, parsed. ``source`` is its POSIX path relative to the ingested folder."""

    source: str
    title: str
    category: str
    body: str
    content_hash: str
    keywords: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        """The file name without its suffix (what evaluation files call a document)."""
        return PurePosixPath(self.source).stem


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
    terms: list[str] = []
    for item in items:
        if isinstance(item, dict | list):
            raise UnreadableFileError(
                f"frontmatter field '{field_name}' holds a nested {type(item).__name__} ({source})"
            )
        text = str(item).strip() if item is not None else ""
        if text and text not in terms:
            terms.append(text)
    return tuple(terms)


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value).strip()


def split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    """Return (frontmatter mapping, body). Malformed YAML raises :class:`UnreadableFileError`."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text.lstrip("\ufeff")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise UnreadableFileError(f"malformed YAML frontmatter{where}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UnreadableFileError(
            f"frontmatter must be a mapping of fields, got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, text[match.end() :]


_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def is_fence(line: str) -> bool:
    """Whether ``line`` opens or closes a markdown code fence (``` or ~~~)."""
    return line.lstrip().startswith(("```", "~~~"))


def strip_html_comments(body: str) -> str:
    r"""``body`` without its HTML comments (``<!-- ... -->``), which markdown never renders.

    Comments inside code fences are code and stay. Lines starting with ``#`` inside a comment
    (a license header) would otherwise read as headings.

    Example:
        >>> strip_html_comments("<!--\n# Licensed to ...\n-->\n## Why\nText")
        '\n## Why\nText'
    """
    if "<!--" not in body:
        return body
    out: list[str] = []
    prose: list[str] = []
    in_fence = False

    def flush() -> None:
        if prose:
            out.append(_HTML_COMMENT.sub("", "".join(prose)))
            prose.clear()

    for line in body.splitlines(keepends=True):
        fence = is_fence(line)
        if fence and not in_fence:
            flush()
        (out if in_fence or fence else prose).append(line)
        if fence:
            in_fence = not in_fence
    flush()
    return "".join(out)


def first_heading(body: str) -> str | None:
    """The text of the first markdown heading outside code fences."""
    in_fence = False
    for line in body.splitlines():
        if is_fence(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            match = _HEADING.match(line)
            if match:
                return match.group(2).strip()
    return None


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
    meta, body = split_frontmatter(text, source)
    body = strip_html_comments(body)
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
    keywords = _as_terms(meta.get("keywords"), "keywords", source) + tuple(
        t for t in _as_terms(meta.get("tags"), "tags", source)
    )
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
        entities=_as_terms(meta.get("entities"), "entities", source),
        # Static-site generators use `aliases` for old URLs (/kubememovercommit/): not names.
        aliases=tuple(
            a
            for a in _as_terms(meta.get("aliases"), "aliases", source)
            if not a.startswith(("/", "http://", "https://"))
        ),
        summary=_as_text(meta.get("summary", meta.get("description"))),
        extra=extra,
    )
