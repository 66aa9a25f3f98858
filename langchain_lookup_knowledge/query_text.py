"""The text rule for a question: what characters a lookup accepts, and what it does with the rest.

A question reaches the tool from a model, a JSON body or a terminal, so it can hold what no
tokenizer, database driver or JSON encoder accepts: lone UTF-16 surrogates (``"\\ud800"``, from a
JavaScript string cut in half or ``surrogateescape``-decoded bytes) and control characters. They
carry no meaning: each becomes a space, a surrogate *pair* is joined into its character, and the
caller is told how many were replaced.

Example:
    >>> clean_query_text("etcd \\ud800 is\\x00slow", max_chars=100)
    ('etcd   is slow', ['query had 1 invalid character(s) (lone surrogates) replaced by spaces'])
    >>> clean_query_text("smile \\ud83d\\ude00", max_chars=100)[0] == "smile \\U0001F600"
    True
"""

from __future__ import annotations

import re
from typing import Any

from langchain_lookup_knowledge.errors import InvalidQueryError

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def join_surrogates(text: str) -> tuple[str, int]:
    """``text`` with surrogate pairs joined and lone surrogates replaced by spaces; the count.

    Example:
        >>> join_surrogates("a\\udc80b")
        ('a b', 1)
    """
    if not _LONE_SURROGATE.search(text):
        return text, 0
    # A valid high+low pair round-trips through UTF-16 into one character.
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    lone = len(_LONE_SURROGATE.findall(joined))
    return _LONE_SURROGATE.sub(" ", joined), lone


def clean_query_text(query: Any, max_chars: int) -> tuple[str, list[str]]:
    """The question as the pipeline searches it, and notes for the trace.

    Raises :class:`InvalidQueryError` for a non-string or a question with no readable character.
    """
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    notes: list[str] = []
    text, lone = join_surrogates(query)
    if lone:
        notes.append(f"query had {lone} invalid character(s) (lone surrogates) replaced by spaces")
    text = _CONTROL.sub(" ", text).strip()
    if not text:
        if lone:
            raise InvalidQueryError(
                "query has no readable characters (only invalid lone surrogates): "
                "ask a question in words"
            )
        raise InvalidQueryError("query is empty: ask a question in words")
    if len(text) > max_chars:
        notes.append(f"query truncated from {len(text)} to {max_chars} characters")
        text = text[:max_chars]
    return text, notes
