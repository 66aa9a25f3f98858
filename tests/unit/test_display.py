"""Names made safe to show (safe_name, safe_json), source prefixes refused with a clear error,
categories-file rows that give no file a category reported with their line and reason."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_lookup_knowledge.core.display import safe_json, safe_line, safe_name
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.knowledge.category_map import read_category_map
from langchain_lookup_knowledge.knowledge.loader import check_source_prefix

HOSTILE = [
    "a\nb",
    "a\r\nb",
    "\x1b[2J\x1b[31mred.md",
    "\x9b31mc1.md",  # C1 CSI: an escape sequence in one character
    "tab\there",
    "bell\x07",
    "del\x7f",
    "line\u2028sep",
    "para\u2029sep",
    "rtl\u202eevil.md",
    "caf\udce9.md",  # a byte that is not UTF-8, as the OS hands it over
    "nul\x00",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_safe_name_escapes_every_control_character_into_one_printable_line(name: str) -> None:
    shown = safe_name(name)
    assert shown.isprintable()
    assert "\n" not in shown
    assert "\x1b" not in shown
    shown.encode("utf-8")  # a lone surrogate would raise here, and in print()


@pytest.mark.parametrize("name", ["ops/disk.md", "节点/磁盘满了.md", "a b (c) [d] #e.md", ""])
def test_safe_name_leaves_printable_names_as_they_are(name: str) -> None:
    assert safe_name(name) == name


def test_safe_name_shows_the_escape_a_reader_can_recognise() -> None:
    assert safe_name("a\nb\x1b[0m\u202e") == "a\\nb\\x1b[0m\\u202e"
    assert safe_line("keep\ttabs") == "keep\ttabs"


@given(st.text())
def test_safe_name_is_always_one_printable_line(name: str) -> None:
    shown = safe_name(name)
    assert "\n" not in shown
    assert len(shown.splitlines()) <= 1
    assert all(unicodedata.category(c) not in ("Cc", "Zl", "Zp", "Cs") for c in shown), repr(shown)


@given(st.dictionaries(st.text(), st.text()))
def test_safe_json_is_the_same_value_with_nothing_a_terminal_acts_on(obj: dict[str, str]) -> None:
    text = safe_json(json.dumps(obj, ensure_ascii=False))
    assert json.loads(text) == obj
    assert all(unicodedata.category(c) not in ("Cc", "Zl", "Zp", "Cs") for c in text), repr(text)


@pytest.mark.parametrize(
    ("prefix", "problem"),
    [
        ("../escape", "'..' segment"),
        ("team/../../etc", "'..' segment"),
        ("./team", "'.' segment"),
        ("team\nsources: secrets.md", "control character"),
        ("team\x1b[31m", "control character"),
        ("team#1", "'#'"),
        ("team\\runbooks", "backslash"),
        ("team//runbooks", "empty segment"),
    ],
)
def test_source_prefix_is_refused_with_the_prefix_and_the_problem(
    prefix: str, problem: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_source_prefix(prefix)
    message = str(caught.value)
    assert message.startswith(f"source prefix '{safe_name(prefix)}': ")
    assert problem in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("prefix", "namespace"),
    [("team-a", "team-a"), ("/team-a/runbooks/", "team-a/runbooks"), ("", "")],
)
def test_source_prefix_names_a_namespace(prefix: str, namespace: str) -> None:
    assert check_source_prefix(prefix) == namespace


def test_categories_file_rows_that_give_no_category_are_reported(tmp_path: Path) -> None:
    table = tmp_path / "toc.tsv"
    table.write_text(
        "path\tsection\n"
        "ok.md\tOps\n"
        "../secrets.md\tOps\n"
        "/etc/passwd.md\tOps\n"
        "short.md\n"
        "\n"
        "\tOps\n"
        "empty-cell.md\t\n"
        ".\tOps\n"
        "typo.md\tOps\n",
        encoding="utf-8",
    )
    read = read_category_map(table)
    assert read.mapping == {"ok.md": "Ops", "typo.md": "Ops"}
    assert [(row.line, row.path) for row in read.ignored] == [
        (3, "../secrets.md"),
        (4, "/etc/passwd.md"),
        (5, "short.md"),
        (7, ""),
        (9, "."),
    ]
    assert "outside the ingested folder" in read.ignored[0].reason
    # a row naming no file of the folder is found once the folder is walked
    assert [(row.line, row.path) for row in read.unmatched({"ok.md"})] == [(10, "typo.md")]
