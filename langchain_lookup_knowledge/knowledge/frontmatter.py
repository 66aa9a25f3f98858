"""YAML frontmatter read within bounds (depth, size, time): one hostile file costs only itself.

Example:
    >>> split_frontmatter("---\\ntitle: Disk full\\n---\\n# Disk full\\n", "disk.md")[0]
    {'title': 'Disk full'}
"""

from __future__ import annotations

import re
import time
from typing import Any

import yaml

__all__ = [
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "MAX_YAML_SECONDS",
    "UnreadableFileError",
    "YamlLimitError",
    "frontmatter_and_body",
    "load_bounded_yaml",
    "split_frontmatter",
]


_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)


_EMPTY_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")


# YAML frontmatter parsing: nesting depth, nodes after alias expansion (a "billion laughs"
# alias bomb is 9 lines), and seconds.
MAX_YAML_DEPTH = 64


MAX_YAML_NODES = 100_000


MAX_YAML_SECONDS = 30.0


class UnreadableFileError(ValueError):
    """A knowledge file that cannot be indexed; the message is the reason shown to the user."""


class YamlLimitError(yaml.YAMLError):
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
                raise YamlLimitError(f"nested deeper than {MAX_YAML_DEPTH} levels")
            if time.monotonic() > self._deadline:
                raise YamlLimitError(f"took longer than {MAX_YAML_SECONDS:g}s to parse")
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
            raise YamlLimitError(f"expands to more than {MAX_YAML_NODES:,} values (YAML aliases)")
        sizes[id(node)] = total
        return total

    size(root)


def load_bounded_yaml(text: str) -> Any:
    loader = _BoundedSafeLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    r"""Return (frontmatter mapping, body). Malformed YAML raises :class:`UnreadableFileError`.

    Example:
        >>> split_frontmatter("<!-- Licensed ... -->\n---\ntitle: Disk\n---\nText", "a.md")
        ({'title': 'Disk'}, 'Text')
    """
    meta, body, _ = frontmatter_and_body(text, source)
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


def frontmatter_and_body(text: str, source: str) -> tuple[dict[str, Any], str, list[str]]:
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
        data = load_bounded_yaml(match.group(1))
    except YamlLimitError as exc:
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
