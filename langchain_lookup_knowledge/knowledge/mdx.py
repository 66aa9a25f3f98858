"""Docusaurus MDX tab markup read as the text it renders.

Docusaurus documentation (MDX) shows alternatives side by side in tabs::

    import Tabs from '@theme/Tabs';

    <Tabs groupId="api" defaultValue="admin-api" values={[
      {label: 'Admin API', value: 'admin-api'},
      {label: 'ADC', value: 'adc'},
    ]}>
    <TabItem value="admin-api">
    ...
    </TabItem>
    </Tabs>

A reader sees tab titles and their contents, never the component syntax; left in, it fills
chunks, the embedder's window and the agent's message with lines that say nothing (seven or
eight a tab group). :func:`strip_tab_markup` keeps the contents, turns each ``<TabItem>`` into
its title in bold, and drops the component lines and the ``@theme`` imports. Code fences are
code and stay as they are; a tag that never closes is left as text.

Example:
    >>> print(strip_tab_markup(
    ...     "<Tabs values={[{label: 'Admin API', value: 'api'}]}>\\n"
    ...     "<TabItem value=\\"api\\">\\n\\ncurl ...\\n\\n</TabItem>\\n</Tabs>\\n"))
    **Admin API**
    <BLANKLINE>
    curl ...
    <BLANKLINE>
    <BLANKLINE>
"""

from __future__ import annotations

import re

from langchain_lookup_knowledge.knowledge.markdown_text import fenced_lines

__all__ = ["strip_tab_markup"]

_THEME_IMPORT = re.compile(r"""^import\s+[\w{}\s,*]+\s+from\s+['"]@theme/[^'"]+['"];?\s*$""")
_TABS_START = re.compile(r"^\s*<Tabs(\s|>|$)")
_TAB_ITEM = re.compile(r"^\s*<TabItem\b(?P<attrs>[^>]*)>\s*$")
_CLOSING = re.compile(r"^\s*</(Tabs|TabItem)\s*>\s*$")
_ATTR = re.compile(r"""(?P<name>value|label)\s*=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')""")
_CHOICE = re.compile(
    r"""\{\s*label\s*:\s*(["'])(?P<label>[^"']*)\1\s*,\s*value\s*:\s*(["'])(?P<value>[^"']*)\3"""
)
_MAX_TAG_LINES = 40
"""A ``<Tabs`` opening longer than this is not one: left as text."""


def _opening_end(lines: list[str], start: int) -> int | None:
    """The index of the line closing the ``<Tabs`` opening at ``start`` (its ``>`` outside
    ``{...}``), or None when it does not close within :data:`_MAX_TAG_LINES` lines."""
    depth = 0
    for index in range(start, min(len(lines), start + _MAX_TAG_LINES)):
        line = lines[index]
        depth += line.count("{") - line.count("}")
        if depth <= 0 and line.rstrip().endswith(">"):
            return index
    return None


def _attrs(text: str) -> dict[str, str]:
    return {m["name"]: m["dq"] if m["dq"] is not None else m["sq"] for m in _ATTR.finditer(text)}


def strip_tab_markup(body: str) -> str:
    """``body`` with Docusaurus tab components read as their titles and contents (see module)."""
    if "<Tab" not in body and "@theme/" not in body:
        return body
    lines = body.splitlines(keepends=True)
    code = [is_code for _, is_code in fenced_lines(lines)]
    out: list[str] = []
    labels: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        if code[index]:
            out.append(line)
            index += 1
            continue
        if _THEME_IMPORT.match(line) or _CLOSING.match(line):
            index += 1
            continue
        if _TABS_START.match(line):
            end = _opening_end(lines, index)
            if end is not None:
                opening = "".join(lines[index : end + 1])
                labels |= {m["value"]: m["label"] for m in _CHOICE.finditer(opening)}
                index = end + 1
                continue
        item = _TAB_ITEM.match(line)
        if item:
            attrs = _attrs(item["attrs"])
            value = attrs.get("value", "")
            title = attrs.get("label") or labels.get(value) or value
            if title:
                out.append(f"**{title}**\n")
            index += 1
            continue
        out.append(line)
        index += 1
    return "".join(out)
