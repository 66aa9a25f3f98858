"""Reading markdown text: code fences, HTML comments, headings.

Example:
    >>> first_heading("intro\\n# Disk full\\n")
    'Disk full'
"""

from __future__ import annotations

import re

__all__ = [
    "MARKDOWN_HEADING",
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
            match = MARKDOWN_HEADING.match(line)
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
            match = MARKDOWN_HEADING.match(line)
            if match:
                longest = max(longest, len(match.group(2)))
    return longest
