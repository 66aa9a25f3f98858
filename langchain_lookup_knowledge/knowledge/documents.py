"""Read one markdown file with YAML frontmatter into a :class:`KnowledgeDocument`.

Frontmatter fields understood: ``title``; ``keywords`` / ``tags``; ``category`` / ``domain``;
``entities``; ``aliases``; ``summary`` / ``description``. Any other field is kept in ``extra``.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)
_EMPTY_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")

# Bounds on what one file may cost or put into a row (Milvus VARCHAR limits: 65,535 for the
# chunk text, which also carries the breadcrumb and the document's terms). Longer values are
# truncated, and the document's warnings say so by name.
MAX_TITLE_CHARS = 500
MAX_HEADING_CHARS = 500
MAX_SUMMARY_CHARS = 2000
MAX_TERMS = 64
MAX_TERM_CHARS = 100
# YAML frontmatter parsing: nesting depth, nodes after alias expansion (a "billion laughs"
# alias bomb is 9 lines), and seconds.
MAX_YAML_DEPTH = 64
MAX_YAML_NODES = 100_000
MAX_YAML_SECONDS = 30.0
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


class UnreadableFileError(ValueError):
    """A knowledge file that cannot be indexed; the message is the reason shown to the user."""


class _YamlLimitError(yaml.YAMLError):
    """Frontmatter beyond a parsing bound (depth, expanded size, time)."""


class _BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with bounds: nesting depth, alias-expanded node count, parse time.

    PyYAML's composer recurses per nesting level (a RecursionError at ~330 levels) and shares
    aliased nodes, which any later walk (JSON metadata, terms) expands: 9 lines of aliases are
    10^9 nodes.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._deadline = time.monotonic() + MAX_YAML_SECONDS

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _YamlLimitError(f"nested deeper than {MAX_YAML_DEPTH} levels")
            if time.monotonic() > self._deadline:
                raise _YamlLimitError(f"took longer than {MAX_YAML_SECONDS:g}s to parse")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_expanded_size(node)
        return node


def _check_expanded_size(root: yaml.Node) -> None:
    """Raise when ``root`` would have more than MAX_YAML_NODES nodes with aliases expanded."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # a recursive alias counts once
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > MAX_YAML_NODES:
            raise _YamlLimitError(f"expands to more than {MAX_YAML_NODES:,} values (YAML aliases)")
        sizes[id(node)] = total
        return total

    size(root)


def _load_yaml(text: str) -> Any:
    loader = _BoundedSafeLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


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


def split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    r"""Return (frontmatter mapping, body). Malformed YAML raises :class:`UnreadableFileError`.

    Example:
        >>> split_frontmatter("<!-- Licensed ... -->\n---\ntitle: Disk\n---\nText", "a.md")
        ({'title': 'Disk'}, 'Text')
    """
    meta, body, _ = _split_frontmatter(text, source)
    return meta, body


def _leading_comments_end(text: str) -> int:
    """Where the HTML comments (and blank space) at the very start of ``text`` end; 0: none."""
    pos, end = 0, 0
    while True:
        start = len(text) - len(text[pos:].lstrip())
        if not text.startswith("<!--", start):
            return end
        close = text.find("-->", start + 4)
        if close < 0:
            return end
        pos = end = close + 3


def _split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str, list[str]]:
    """(frontmatter, body, warnings). Frontmatter after leading HTML comments (a licence
    header) is read too; a ``---`` block there that is not a YAML mapping stays body text,
    with a warning."""
    text = text.lstrip("\ufeff")
    after_comments = _leading_comments_end(text)
    head = text[after_comments:].lstrip() if after_comments else text
    empty = _EMPTY_FRONTMATTER.match(head)
    if empty:
        return {}, head[empty.end() :], []
    match = _FRONTMATTER.match(head)
    if not match:
        return {}, text, []
    try:
        data = _load_yaml(match.group(1))
    except _YamlLimitError as exc:
        raise UnreadableFileError(f"YAML frontmatter {exc}") from None
    except yaml.YAMLError as exc:
        if after_comments:
            return {}, text, [_COMMENTED_BLOCK_NOT_YAML]
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise UnreadableFileError(f"malformed YAML frontmatter{where}") from None
    except RecursionError:
        raise UnreadableFileError("YAML frontmatter nested too deeply") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        if after_comments:
            return {}, text, [_COMMENTED_BLOCK_NOT_YAML]
        raise UnreadableFileError(
            f"frontmatter must be a mapping of fields, got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, head[match.end() :], []


_COMMENTED_BLOCK_NOT_YAML = (
    "the '---' block after the leading HTML comment is not YAML frontmatter: read as text"
)


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


def longest_heading(body: str) -> int:
    """Length of the longest markdown heading text outside code fences (0: none)."""
    longest, in_fence = 0, False
    for line in body.splitlines():
        if is_fence(line):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            match = _HEADING.match(line)
            if match:
                longest = max(longest, len(match.group(2)))
    return longest


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
    meta, body, warnings = _split_frontmatter(text, source)
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
