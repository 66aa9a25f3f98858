"""Moved to :mod:`langchain_lookup_knowledge.core.filters`: settings validate filters, so filters
sit below ``store`` (which reads settings). This path keeps working for code that imports it."""

from langchain_lookup_knowledge.core.filters import (
    CategoryFilter,
    FilterValue,
    and_exprs,
    condition,
    field_ref,
    filter_to_expr,
    literal,
    quote_string,
    validate_identifier,
)

__all__ = [
    "CategoryFilter",
    "FilterValue",
    "and_exprs",
    "condition",
    "field_ref",
    "filter_to_expr",
    "literal",
    "quote_string",
    "validate_identifier",
]
