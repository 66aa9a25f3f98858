"""Safe Milvus boolean expressions from structured filters: no value can change their meaning.

Field names are validated against an identifier pattern (or a ``metadata["key"]`` JSON path whose
key is escaped); values become quoted, escaped string literals or plain numbers and booleans.

Example:
    >>> CategoryFilter("db").to_expr("category")
    'category == "db"'
    >>> filter_to_expr({"tenant": 'a" or 1==1', "level": [1, 2]})
    '(tenant == "a\\\\" or 1==1") and (level in [1, 2])'

A list on a JSON path becomes an OR of equalities: Milvus (Lite and 2.3) accepts ``in`` only
on a scalar field ("left side of 'in' must be a field reference").

    >>> filter_to_expr({'metadata["tenant"]': ["a", "b"]})
    '(metadata["tenant"] == "a" or metadata["tenant"] == "b")'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_lookup_knowledge.errors import UnsafeFilterError

FilterValue = str | int | float | bool | Sequence[str | int | float | bool]
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}\Z")
_JSON_PATH = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,254})\[(.+)\]\Z")
# A JSON key: any text but quotes, backslashes, brackets and control characters.
_JSON_KEY = re.compile(r'^[^"\'\\\[\]\x00-\x1f\x7f]{1,255}\Z')
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def validate_identifier(name: str, what: str = "field name") -> str:
    """Return ``name`` if it is a plain Milvus identifier, else raise :class:`UnsafeFilterError`."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise UnsafeFilterError(
            f"invalid {what} {name!r}: use letters, digits and underscores, starting with a letter"
        )
    return name


def quote_string(value: str) -> str:
    """A double-quoted Milvus string literal: nothing inside can end it or change the expression.

    Milvus's expression parser knows the escapes ``\\\\ \\" \\n \\r \\t`` (it rejects ``\\u``,
    ``\\x`` and octal ones) and forbids raw CR/LF inside a literal; every other character,
    control characters included, is literal text there (checked against Milvus Lite and 2.3).
    """
    out = ['"']
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise UnsafeFilterError(f"filter value {value!r} contains a lone surrogate")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def literal(value: str | int | float | bool) -> str:
    """A Milvus literal for one scalar value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise UnsafeFilterError(f"filter value {value} is outside the 64-bit integer range")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnsafeFilterError(f"filter value {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return quote_string(value)
    raise UnsafeFilterError(f"unsupported filter value type {type(value).__name__}: {value!r}")


def field_ref(field: str) -> str:
    """A field reference: ``name`` or ``metadata["key"]`` (the key escaped)."""
    match = _JSON_PATH.match(field)
    if match:
        inner = match.group(2)
        quoted = len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'"
        key = inner[1:-1] if quoted else inner
        if not _JSON_KEY.match(key):
            raise UnsafeFilterError(
                f"invalid JSON key {key!r} in {field!r}: no quotes, backslashes, brackets or "
                "control characters"
            )
        return f"{validate_identifier(match.group(1))}[{quote_string(key)}]"
    return validate_identifier(field)


def condition(field: str, value: FilterValue) -> str:
    """``field == value``; for a list, ``field in [...]`` on a scalar field and an OR of
    equalities on a JSON path (combine the result with :func:`and_exprs`, which parenthesises).
    """
    ref = field_ref(field)
    if isinstance(value, str | int | float | bool):
        return f"{ref} == {literal(value)}"
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        values = list(value)
        if not values:
            raise UnsafeFilterError(f"filter on {field!r} has an empty list of values")
        literals = [literal(v) for v in values]
        if _JSON_PATH.match(field):
            return " or ".join(f"{ref} == {lit}" for lit in literals)
        return f"{ref} in [{', '.join(literals)}]"
    raise UnsafeFilterError(f"unsupported filter value for {field!r}: {value!r}")


def filter_to_expr(filters: Mapping[str, FilterValue] | None) -> str | None:
    """AND of one condition per mapping entry; None for no filter."""
    if not filters:
        return None
    parts = [condition(field, value) for field, value in filters.items()]
    return " and ".join(f"({p})" for p in parts)


def and_exprs(*exprs: str | None) -> str | None:
    """AND the non-empty expressions together (each parenthesised)."""
    present = [e for e in exprs if e]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return " and ".join(f"({e})" for e in present)


@dataclass(frozen=True)
class CategoryFilter:
    """The L0-derived category filter: the only filter a retry may relax."""

    category: str

    def to_expr(self, category_field: str | None, metadata_field: str = "metadata") -> str:
        """Expression on the scalar field, or on ``metadata["category"]`` without one."""
        field = category_field or f'{metadata_field}["category"]'
        return condition(field, self.category)
