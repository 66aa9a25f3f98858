"""Reading markdown text: code fences, HTML comments, headings.

Example:
    >>> first_heading("intro\\n# Disk full\\n")
    'Disk full'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = [
    "MARKDOWN_HEADING",
    "fenced_lines",
    "first_heading",
    "is_fence",
    "longest_heading",
    "strip_html_comments",
]


MARKDOWN_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def is_fence(line: str) -> bool:
    """Whether ``line`` opens or closes a markdown code fence (``` or ~~~)."""
    return line.lstrip().startswith(("```", "~~~"))


def fenced_lines(lines: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """Each line with whether it is code: a fence line, or a line between two.

    Example:
        >>> [code for _, code in fenced_lines(["a", "```", "# x", "```", "b"])]
        [False, True, True, True, False]
    """
    in_fence = False
    for line in lines:
        fence = is_fence(line)
        if fence:
            in_fence = not in_fence
        yield line, fence or in_fence


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

    def flush() -> None:
        if prose:
            out.append(_HTML_COMMENT.sub("", "".join(prose)))
            prose.clear()

    for line, code in fenced_lines(body.splitlines(keepends=True)):
        if code:
            flush()
            out.append(line)
        else:
            prose.append(line)
    flush()
    return "".join(out)


def first_heading(body: str) -> str | None:
    """The text of the first markdown heading outside code fences."""
    for line, code in fenced_lines(body.splitlines()):
        match = None if code else MARKDOWN_HEADING.match(line)
        if match:
            return match.group(2).strip()
    return None


def longest_heading(body: str) -> int:
    """Length of the longest markdown heading text outside code fences (0: none)."""
    longest = 0
    for line, code in fenced_lines(body.splitlines()):
        match = None if code or not line.startswith("#") else MARKDOWN_HEADING.match(line)
        if match:
            longest = max(longest, len(match.group(2)))
    return longest
