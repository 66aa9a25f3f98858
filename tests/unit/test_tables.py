"""Markdown tables are read without their alignment padding; nothing else changes."""

from __future__ import annotations

from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.tables import compact_tables

WIDE = "-" * 600
ATTRIBUTES = f"""\
# http-logger

## Attributes

| Name                   | Type    | Required | Default | Description{" " * 300}|
|------------------------|---------|----------|---------|{WIDE}|
| uri                    | string  | True     |         | URI of the HTTP(S) server.{" " * 285}|
| timeout                | integer | False    | 3       | Keep-alive time.{" " * 295}|

Send logs with the plugin enabled.
"""


def test_padding_and_wide_delimiters_are_removed() -> None:
    out = compact_tables(ATTRIBUTES)
    assert "| Name | Type | Required | Default | Description |" in out
    assert "| --- | --- | --- | --- | --- |" in out
    assert "| uri | string | True | | URI of the HTTP(S) server. |" in out
    assert "| timeout | integer | False | 3 | Keep-alive time. |" in out
    assert "--------" not in out
    assert "# http-logger\n\n## Attributes\n\n" in out
    assert out.endswith("\nSend logs with the plugin enabled.\n")


def test_alignment_colons_and_tables_without_outer_pipes() -> None:
    assert compact_tables("a | b | c\n:-----|:----:|-----:\n1 | 2 | 3") == (
        "a | b | c\n:--- | :---: | ---:\n1 | 2 | 3"
    )


def test_a_one_column_delimiter_without_its_closing_pipe() -> None:
    assert compact_tables("| Name\n|----------\n| ttl") == "| Name\n| ---\n| ttl"


def test_what_is_not_a_table_row_stays() -> None:
    text = (
        "Setext heading\n---------------\n\n***\n\n"
        "text  with   spaces  and a pipe  |  in prose\n\n"
        "```\n| a    | b |\n|------|---|\n```\n"
        "    | indented   | code? |\n"
    )
    out = compact_tables(text)
    assert out.startswith("Setext heading\n---------------\n\n***\n\n")
    assert "text  with   spaces  and a pipe  |  in prose" in out  # not a row: no leading pipe
    assert "```\n| a    | b |\n|------|---|\n```\n" in out  # code is code
    assert compact_tables("no table here") == "no table here"


def test_escaped_pipes_and_cell_content_keep_their_spaces() -> None:
    row = "| `a  b` | x \\|  y |"
    assert compact_tables(row) == "| `a  b` | x \\|  y |"


def test_line_endings_are_kept() -> None:
    assert compact_tables("| a    | b |\r\n|---|---|\r\n") == "| a | b |\r\n| --- | --- |\r\n"


def test_a_wide_table_chunks_into_rows_under_their_header() -> None:
    doc = parse_document(ATTRIBUTES.encode(), "plugins/http-logger.md")
    chunks = chunk_document(doc)
    texts = [c.text for c in chunks]
    assert not any(set(t.replace("|", "").strip()) <= {"-", " "} for t in texts)
    table = next(t for t in texts if "| uri |" in t)
    assert "| Name | Type | Required | Default | Description |\n| --- |" in table
    assert "| timeout | integer |" in table
