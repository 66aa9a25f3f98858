"""docs/configuration.md is the settings model rendered: it fails when a setting changes unseen."""

from __future__ import annotations

from pathlib import Path

from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.settings_reference import render_reference

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_reference_matches_the_settings_model() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render_reference(), (
        "docs/configuration.md is stale: regenerate it with "
        "`python -m langchain_lookup_knowledge.settings_reference > docs/configuration.md`"
    )


def test_every_setting_is_listed_once_with_its_variable() -> None:
    text = render_reference()
    for name in LookupSettings.model_fields:
        assert text.count(f"| `{name}` | `LOOKUP_KNOWLEDGE_{name.upper()}` |") == 1, name
