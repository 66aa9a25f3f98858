"""The configuration reference (``docs/configuration.md``), generated from :class:`LookupSettings`.

Every setting's environment variable, type, default and description come from the settings model
itself, grouped as the model groups them, so the reference cannot drift from the code: the test
suite renders it again and compares.

Example:
    >>> from langchain_lookup_knowledge.settings_reference import render_reference
    >>> "LOOKUP_KNOWLEDGE_TOP_K" in render_reference()
    True

Regenerate with ``python -m langchain_lookup_knowledge.settings_reference > docs/configuration.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from langchain_lookup_knowledge.settings import ENV_PREFIX, GROUPS, REMOVED_SETTINGS, LookupSettings

_INTRO = """\
# Configuration reference

Every setting of `LookupSettings`, by group. Each can be given as an argument
(`LookupSettings(top_k=3)`), inside its group (`LookupSettings(retrieval={"top_k": 3})`) or as its
environment variable (`LOOKUP_KNOWLEDGE_TOP_K=3`); an argument wins over the variable. Read it
flat (`settings.top_k`) or by group (`settings.retrieval.top_k`). Values that are lists or
mappings are JSON in the variable. A bad value, or settings that cannot work together, raise one
`ConfigurationError` naming each.

This page is generated from the settings model
(`python -m langchain_lookup_knowledge.settings_reference > docs/configuration.md`);
a test fails when it differs from the code.
"""


def _groups() -> list[tuple[str, list[str]]]:
    """(group name, field names): the settings' groups by concern, in their order."""
    return [(name, list(model.model_fields)) for name, model in GROUPS.items()]


def _type_name(info: FieldInfo) -> str:
    annotation: Any = info.annotation
    origin = get_origin(annotation)
    if origin is Literal:
        return " | ".join(repr(value) for value in get_args(annotation))
    if origin is Union and all(get_origin(arg) is Literal for arg in get_args(annotation)):
        return " | ".join(repr(value) for arg in get_args(annotation) for value in get_args(arg))
    if origin is not None or not hasattr(annotation, "__name__"):
        text = str(annotation)
    else:
        text = annotation.__name__
    for noise in ("typing.", "pathlib.", "pydantic.types.", "annotated_types."):
        text = text.replace(noise, "")
    return text.replace("NoneType", "None")


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return "(computed)"
    value = info.default
    if value is PydanticUndefined:
        return "(required)"
    if isinstance(value, Path):
        return f"`{value.as_posix().replace(str(Path.home().as_posix()), '~')}`"
    return f"`{value!r}`" if value is not None else "unset"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_reference() -> str:
    """The whole configuration reference as markdown."""
    parts = [_INTRO]
    for group, names in _groups():
        parts.append(f"\n## {group.capitalize()}\n")
        parts.append("| setting | environment variable | type | default | what it does |")
        parts.append("| --- | --- | --- | --- | --- |")
        for name in names:
            info = LookupSettings.model_fields[name]
            parts.append(
                f"| `{name}` | `{ENV_PREFIX}{name.upper()}` | `{_cell(_type_name(info))}` "
                f"| {_cell(_default(info))} | {_cell(info.description or '')} |"
            )
    if REMOVED_SETTINGS:
        parts.append("\n## Removed\n")
        parts.append("Given as an argument or a variable, each is an error that says why.\n")
        parts.extend(f"- `{name}`: {why}." for name, why in REMOVED_SETTINGS.items())
    return "\n".join(parts) + "\n"


if __name__ == "__main__":  # pragma: no cover - the documented regeneration command
    print(render_reference(), end="")
