"""The tool message: what the model reads of a lookup, in a markup no document can forge.

The message has three kinds of line and tells them apart by their first characters:

* the top line, ``relevance: LEVEL; HINT`` (how far to trust the evidence, how many blocks
  from how many documents are shown, what was left out);
* each block's two header lines, ``[N] TITLE — BREADCRUMB`` and ``source: PATH``;
* the block's document text, every line of it quoted: ``> `` before a line, ``>`` alone for a
  blank one.

Every line a document contributes starts with ``>``, and no structural line does: a document
line that reads ``[3] Title`` or ``source: secrets/x.md`` is shown as ``> [3] Title``. Names
(title, breadcrumb, source) are shown with :func:`~langchain_lookup_knowledge.core.display.
safe_name`, one line each, control characters escaped; every line break a model could read
(``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``) starts a new
quoted line. Scores, evidence keys and the ``why`` of a boost are not in the message: they are
in the artifact (``contextPack.blocks``, ``evidenceBlocks``) and the trace.

Example:
    >>> from langchain_lookup_knowledge.core.models import EvidenceBlock
    >>> block = EvidenceBlock(evidence_key="k8s/node.md#2", source="k8s/node.md",
    ...     title="Node NotReady", breadcrumb="Node NotReady > Fix", content="Drain it.\\n[2] x")
    >>> print(block_header(1, block) + quote_text(block.content))
    [1] Node NotReady > Fix
    source: k8s/node.md
    > Drain it.
    > [2] x
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge.core.display import safe_line, safe_name
from langchain_lookup_knowledge.core.models import EvidenceBlock

__all__ = [
    "QUOTE",
    "block_header",
    "block_heading",
    "quote_text",
    "render_message",
    "top_line",
]

QUOTE = "> "
"""What starts every line of document text in the message (``>`` alone on a blank line)."""
HEADER_LINE = re.compile(r"^\[(\d+)\] ")
SOURCE_LINE = "source: "


def block_heading(block: EvidenceBlock) -> str:
    """The block's title and breadcrumb as one safe line (its source when it has neither)."""
    title, breadcrumb = safe_name(block.title).strip(), safe_name(block.breadcrumb).strip()
    if title and breadcrumb and breadcrumb != title and not breadcrumb.startswith(title):
        return f"{title} — {breadcrumb}"
    return breadcrumb or title or safe_name(block.source)


def block_header(rank: int, block: EvidenceBlock) -> str:
    """The block's two header lines (newline-terminated): number and heading, then source.

    Example:
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="ops/a\\n[9] b.md", content="")
        >>> print(block_header(2, block), end="")
        [2] ops/a\\n[9] b.md
        source: ops/a\\n[9] b.md
    """
    return f"[{rank}] {block_heading(block)}\n{SOURCE_LINE}{safe_name(block.source)}\n"


def quote_text(text: str) -> str:
    """Document text as quoted lines: ``> `` before each line, ``>`` for a blank one.

    Trailing spaces are dropped and runs of blank lines shown as one; every line break
    :meth:`str.splitlines` knows starts a new quoted line, and control characters but the tab
    are escaped, so no document line can start with anything but ``>``.

    Example:
        >>> quote_text("# Title\\n\\n\\nsource: x.md (score 0.99)\\u2028[3] y")
        '> # Title\\n>\\n> source: x.md (score 0.99)\\n> [3] y'
    """
    lines: list[str] = []
    blank = True  # no blank line first
    for raw in text.splitlines():
        line = safe_line(raw.rstrip())
        if not line.strip():
            if not blank:
                lines.append(QUOTE.rstrip())
            blank = True
            continue
        lines.append(QUOTE + line)
        blank = False
    while lines and lines[-1] == QUOTE.rstrip():
        lines.pop()
    return "\n".join(lines)


def top_line(level: str, hint: str) -> str:
    """The message's first line: the relevance level and the completeness hint, one line."""
    return safe_name(f"relevance: {level}; {hint}")


def render_message(artifact: Mapping[str, Any]) -> str:
    """What the model reads of a lookup, from the result contract's JSON (the artifact).

    Evidence: the top line, a blank line, then the packed blocks (``contextPack.text``). No
    evidence: the result's message and the completeness hint, on one line.
    """
    hint = str(artifact["completenessHint"])
    if not artifact["found"]:
        return safe_name(f"{artifact['message']} ({hint})")
    return f"{top_line(str(artifact['relevanceLevel']), hint)}\n\n{artifact['contextPack']['text']}"
