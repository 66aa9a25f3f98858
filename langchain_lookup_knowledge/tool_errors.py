"""What the agent reads when a lookup cannot run: one line per kind of failure, and what to do.

Example:
    >>> from langchain_lookup_knowledge.core.models import RetrievalError
    >>> "retrying will not help" in tool_error_message(RetrievalError(kind="damaged", message="x"))
    True
"""

from __future__ import annotations

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.core.models import RetrievalError

__all__ = [
    "DAMAGED_ERROR",
    "EMPTY_QUERY_ERROR",
    "INVALID_ARGS_ERROR",
    "MISCONFIGURED_ERROR",
    "UNAVAILABLE_ERROR",
    "tool_error_message",
]


EMPTY_QUERY_ERROR = "lookup_knowledge needs a non-empty `query`: ask a question in words."


INVALID_ARGS_ERROR = "lookup_knowledge takes one argument, `query` (a non-empty string): {detail}"


UNAVAILABLE_ERROR = (
    "Knowledge retrieval unavailable right now ({detail}). Try again later or answer without "
    "the knowledge base, saying so."
)


DAMAGED_ERROR = (
    "The knowledge base is damaged ({detail}); retrying will not help until an operator "
    "rebuilds it. Answer without the knowledge base and tell the user it needs attention."
)


MISCONFIGURED_ERROR = (
    "Knowledge retrieval is misconfigured ({detail}); retrying will not help until an operator "
    "fixes it. Answer without the knowledge base and tell the user it needs attention."
)


def tool_error_message(error: RetrievalError) -> str:
    """What the model reads when retrieval could not run: retry only for a transient fault."""
    templates = {"configuration": MISCONFIGURED_ERROR, "damaged": DAMAGED_ERROR}
    return templates.get(error.kind, UNAVAILABLE_ERROR).format(detail=safe_name(error.message))
