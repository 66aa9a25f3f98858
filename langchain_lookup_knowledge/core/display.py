"""Names made safe to show: one owner for every place a person or a model reads a name.

A file name, a title, a source path or a question can hold control characters: a newline that
starts a line of its own (in a terminal, in the tool message), an ESC sequence that rewrites the
screen, a C1 control, a bidirectional override that reorders what follows, a byte that is not
UTF-8. :func:`safe_name` shows each of them as a visible escape (``\\n``, ``\\x1b``,
``\\u202e``, ``\\udce9``) and leaves every printable character, CJK included, as it is; the
result is one line.

Example:
    >>> safe_name("ops/disk\\n[2] Forged.md")
    'ops/disk\\\\n[2] Forged.md'
    >>> safe_name("\\x1b[31mred\\x1b[0m.md"), safe_name("节点/磁盘.md")
    ('\\\\x1b[31mred\\\\x1b[0m.md', '节点/磁盘.md')
"""

from __future__ import annotations

import unicodedata

__all__ = ["safe_json", "safe_line", "safe_name"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Bidirectional embeddings, overrides and isolates: they reorder the text that follows them.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _unsafe(char: str, keep_tab: bool) -> bool:
    if char == "\t":
        return not keep_tab
    # Cc: C0, DEL and C1 controls; Zl / Zp: the line and paragraph separators; Cs: a lone
    # surrogate (a file name's byte that is not UTF-8), which no terminal can be sent.
    return unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cs") or char in _BIDI


def safe_line(text: str, *, keep_tab: bool = True) -> str:
    """``text`` with every control character escaped, tabs kept (one line of a document).

    Example:
        >>> safe_line("a\\tb\\x07c")
        'a\\tb\\\\x07c'
    """
    if text.isprintable():  # the common case: nothing to escape
        return text
    return "".join(_escape(c) if _unsafe(c, keep_tab) else c for c in text)


def safe_name(text: str) -> str:
    """``text`` as one line with its control characters escaped: how every name is shown.

    Use it wherever a name (file, source, title, breadcrumb, collection, question) reaches a
    terminal, a log line or the text a model reads.
    """
    return safe_line(str(text), keep_tab=False)


# What JSON text may hold raw (``json.dumps(..., ensure_ascii=False)`` escapes C0 only) and a
# terminal must not get: DEL, C1, the line/paragraph separators, bidi controls, lone surrogates.
_JSON_ESCAPES = {
    code: f"\\u{code:04x}"
    for code in (0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *map(ord, _BIDI), *range(0xD800, 0xE000))
}


def safe_json(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with what :func:`safe_name` escapes
    written as ``\\uXXXX`` escapes: the same JSON value, safe on a terminal.

    Example:
        >>> import json
        >>> text = safe_json(json.dumps({"source": "a\\x9b2J.md"}, ensure_ascii=False))
        >>> text, json.loads(text)["source"] == "a\\x9b2J.md"
        ('{"source": "a\\\\u009b2J.md"}', True)
    """
    return dumped.translate(_JSON_ESCAPES)
