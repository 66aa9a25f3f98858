"""Settings that must agree with each other, and one line naming every bad setting.

Example:
    >>> [rule.explanation for rule in RULES_OF["chunk_overlap"]]
    ['chunk_overlap must be below chunk_size // 2']
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping

from pydantic import ValidationError
from pydantic_settings import SettingsError

from langchain_lookup_knowledge.redaction import redact
from langchain_lookup_knowledge.settings.store import FIELD_NAME_SETTINGS
from langchain_lookup_knowledge.settings.types import ENV_PREFIX

__all__ = ["RULES_OF", "DisagreementError", "Rule", "describe", "describe_unparsable", "shown"]

_HIDDEN_VALUES = frozenset({"milvus_token", "openai_api_key", "invocation_db_url"})


class Rule:
    """Settings that must agree: ``holds(*their values)``, else ``explanation``."""

    def __init__(self, *fields: str, holds: Callable[..., bool], explanation: str) -> None:
        self.fields = fields
        self.holds = holds
        self.explanation = explanation


class DisagreementError(ValueError):
    """Settings that cannot work together (its message names each, with its value)."""


_RULES = (
    Rule(
        "top_k",
        "candidate_k",
        holds=lambda top_k, candidate_k: candidate_k is None or candidate_k >= top_k,
        explanation="candidate_k (the rerank pool) must be at least top_k, or unset for 3 x top_k",
    ),
    Rule(
        "chunk_size",
        "chunk_overlap",
        holds=lambda size, overlap: overlap < size // 2,
        explanation="chunk_overlap must be below chunk_size // 2",
    ),
    Rule(
        "collection",
        "catalog_collection",
        holds=lambda collection, catalog: catalog != collection,
        explanation="catalog_collection must differ from collection (the L0 catalog is its own "
        "collection)",
    ),
    Rule(
        "embedding_provider",
        "openai_base_url",
        "openai_api_key",
        holds=lambda provider, url, key: provider != "openai" or url is not None or key is not None,
        explanation="embedding_provider=openai needs openai_api_key (or openai_base_url for a "
        "keyless OpenAI-compatible server)",
    ),
    *(
        Rule(
            a,
            b,
            holds=lambda x, y: x is None or x != y,
            explanation="each names a different Milvus field",
        )
        for a, b in itertools.combinations(FIELD_NAME_SETTINGS, 2)
    ),
)
RULES_OF: dict[str, list[Rule]] = {}
"""The rules each setting takes part in."""
for _rule in _RULES:
    for _name in _rule.fields:
        RULES_OF.setdefault(_name, []).append(_rule)


def shown(field: str, value: object) -> str:
    """A setting's value as an error message may show it (secrets and URL passwords hidden)."""
    if field in _HIDDEN_VALUES and value is not None:
        return "<hidden>"
    return redact(repr(value))


def describe_unparsable(error: SettingsError) -> str:
    """A variable whose value is not the JSON its setting needs, named with the parse error."""
    field = str(error).split('field "', 1)[-1].split('"', 1)[0] if 'field "' in str(error) else ""
    where = f"{field} (from {ENV_PREFIX}{field.upper()})" if field else "a setting"
    cause = f": {error.__cause__}" if error.__cause__ is not None else ""
    return f"LookupSettings: {where} is not valid JSON{cause}"


def describe(error: ValidationError, given: Mapping[str, object]) -> str:
    """One line naming every bad setting of ``error`` with its value (and its env var)."""
    problems = []
    for item in error.errors(include_url=False):
        cause = item.get("ctx", {}).get("error")
        if isinstance(cause, DisagreementError):
            problems.append(str(cause))
            continue
        field = str(item["loc"][0]) if item["loc"] else "settings"
        env = f"{ENV_PREFIX}{field.upper()}"
        origin = f" (from {env})" if field not in given and env in os.environ else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"{field}={shown(field, item.get('input'))}{origin}: {message}")
    return "LookupSettings: " + "; ".join(dict.fromkeys(problems))
