"""``LOOKUP_KNOWLEDGE_*`` variables that name no setting: a typo is told, not ignored in silence.

Example:
    >>> unknown_setting_variables({"LOOKUP_KNOWLEDGE_TOPK": "3", "HOME": "/root"})
    ['LOOKUP_KNOWLEDGE_TOPK is not a setting, ignored (did you mean LOOKUP_KNOWLEDGE_TOP_K?)']
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Mapping

from langchain_lookup_knowledge.settings.groups import REMOVED_SETTINGS, setting_names
from langchain_lookup_knowledge.settings.types import ENV_PREFIX

__all__ = [
    "removed_setting_variables",
    "take_unknown_setting_warnings",
    "unknown_setting_variables",
]

# Variables of the test suite's own fixtures, not settings.
_NOT_SETTINGS_PREFIX = f"{ENV_PREFIX}TEST_"
_warned_variables: set[str] = set()  # the unknown variables this process warned about
_warned_lock = threading.Lock()


def unknown_setting_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``LOOKUP_KNOWLEDGE_*`` variable that names no setting, with the
    nearest setting's variable when one is close."""
    return [warning for _, warning in _unknown_variables(environ)]


def take_unknown_setting_warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """:func:`unknown_setting_variables` of ``environ`` (default: the process environment)
    less the variables already warned about in this process, which are marked as warned: each
    typo is told once, by whoever asks first (the CLI prints it; ``LookupSettings()`` logs it)."""
    unknown = _unknown_variables(os.environ if environ is None else environ)
    with _warned_lock:
        fresh = [(name, warning) for name, warning in unknown if name not in _warned_variables]
        _warned_variables.update(name for name, _ in fresh)
    return [warning for _, warning in fresh]


def removed_setting_variables(environ: Mapping[str, str]) -> list[str]:
    """The removed settings a ``LOOKUP_KNOWLEDGE_*`` variable of ``environ`` still sets.

    Example:
        >>> removed_setting_variables({"LOOKUP_KNOWLEDGE_BM25_STEMMING": "true"})
        ['bm25_stemming']
    """
    given = {name.upper() for name in environ}
    return [name for name in REMOVED_SETTINGS if f"{ENV_PREFIX}{name.upper()}" in given]


def _unknown_variables(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(variable, warning) for each ``LOOKUP_KNOWLEDGE_*`` variable that names no setting."""
    fields = sorted(setting_names())
    unknown = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper.startswith(_NOT_SETTINGS_PREFIX):
            continue
        field = upper.removeprefix(ENV_PREFIX).lower()
        if field in fields or field in REMOVED_SETTINGS:
            continue
        close = difflib.get_close_matches(field, fields, n=1, cutoff=0.8)
        hint = f" (did you mean {ENV_PREFIX}{close[0].upper()}?)" if close else ""
        unknown.append((name, f"{name} is not a setting, ignored{hint}"))
    return unknown
