"""Tables are read without their alignment padding (markdown tables, SQL output in code);
nothing else changes. A table line too long for a chunk is cut between cells."""

from __future__ import annotations

import re

from langchain_lookup_knowledge.knowledge.chunking import (
    chunk_document,
    default_window,
    embedding_text,
)
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.tables import compact_tables

WIDE = "-" * 600
_WORD = re.compile(r"[^\W_]{2,}")  # two letters or digits
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


def _border(*widths: int) -> str:
    return "+" + "+".join("-" * w for w in widths) + "+"


EXPLAIN = f"""\
```sql
mysql> EXPLAIN ANALYZE SELECT * FROM t WHERE a > 1;
{_border(24, 9, 600)}
| id                     | estRows | execution info{" " * 585}|
{_border(24, 9, 600)}
| TableReader_7          | 3.33    | time:170ms, loops:2{" " * 580}|
| └─Selection_6          | 3.33    | tikv_task:{{time:0s}}{" " * 580}|
|   └─TableFullScan_5    | 10.00   |{" " * 601}|
{_border(24, 9, 600)}
3 rows in set (0.01 sec)
```
"""


def test_sql_output_tables_in_code_are_written_without_their_padding() -> None:
    out = compact_tables(EXPLAIN)
    assert out == (
        "```sql\n"
        "mysql> EXPLAIN ANALYZE SELECT * FROM t WHERE a > 1;\n"
        "+---+---+---+\n"
        "| id | estRows | execution info |\n"
        "+---+---+---+\n"
        "| TableReader_7 | 3.33 | time:170ms, loops:2 |\n"
        "| └─Selection_6 | 3.33 | tikv_task:{time:0s} |\n"
        "|   └─TableFullScan_5 | 10.00 | |\n"  # the operator tree's depth is kept
        "+---+---+---+\n"
        "3 rows in set (0.01 sec)\n"
        "```\n"
    )


def test_an_output_row_that_does_not_match_its_border_is_shown_as_written() -> None:
    row = "| t     | a | b | c  |"  # a pipe in a value: four cells under a border of three
    multi = "| v     | CREATE TABLE `v` ("  # a value over several lines
    text = f"```\n{_border(7, 5, 8)}\n{row}\n{multi}\n  `a` int\n) |\n{_border(7, 5, 8)}\n```"
    out = compact_tables(text)
    assert f"\n{row}\n{multi}\n  `a` int\n) |\n" in out
    assert out.count("+---+---+---+") == 2


def test_code_that_is_no_output_table_is_shown_as_written() -> None:
    text = "```diff\n+---\n+title: x\n```\n```sh\nls |  grep  a  |  wc\n| a    | b |\n```\n"
    assert compact_tables(text) == text


def test_quoted_and_mistyped_borders_are_compacted() -> None:
    quoted = f"> ```sql\n> {_border(10, 20)}\n> | a          | b    |\n> {_border(10, 20)}\n> ```"
    assert "> +---+---+\n> | a | b |\n> +---+---+" in compact_tables(quoted)
    cut = "```\n+----------+--------\n| a        | b      |\n+----------+-------|\n```"
    assert compact_tables(cut) == "```\n+---+---+\n| a | b |\n+---+---+\n```"


def test_a_delimiter_cell_with_spaces_between_its_dashes() -> None:
    text = "| Name | Description |\n| ---- | ------- ------- -------|\n| ttl | Time. |"
    assert compact_tables(text) == "| Name | Description |\n| --- | --- |\n| ttl | Time. |"


def test_a_wide_output_table_chunks_into_rows_with_words() -> None:
    doc = parse_document(("# EXPLAIN\n\n## Plan\n\n" + EXPLAIN).encode(), "explain.md")
    chunks = chunk_document(doc)
    assert all(_WORD.search(c.text) for c in chunks)
    text = "\n".join(c.text for c in chunks)
    assert "----" not in text
    assert "| └─Selection_6 | 3.33 | tikv_task:{time:0s} |" in text


def test_a_table_line_longer_than_the_window_is_cut_between_cells() -> None:
    cells = [f"option_{i} sets the limit {i} of the route" for i in range(40)]
    row = "| " + " | ".join(cells) + " |"
    doc = parse_document(f"# Options\n\n```\n{_border(5, 5)}\n{row}\n```".encode(), "o.md")
    chunks = chunk_document(doc)
    window = default_window()
    assert all(window.count([embedding_text(c, doc)])[0] <= window.max_tokens for c in chunks)
    pieces = [c.text.removesuffix("\n```") for c in chunks if "option_" in c.text]
    assert len(pieces) > 1
    assert all(p.startswith("| option_") for p in pieces)  # every piece starts at a cell
    assert " ".join(pieces) == row  # a chunk's text is stripped: the space before a pipe


def test_a_closing_border_and_fence_take_the_last_row_when_the_chunk_before_is_full() -> None:
    # 17 rows and a last row of 15 words leave no room for the border and the fence after it.
    rows = "".join(
        f"| TableReader_{i} | {i}.00 | keep order:false, stats:pseudo, rows:{i} |\n"
        for i in range(17)
    )
    border = _border(30, 12, 40)
    text = (
        f"# Plans\n\nThe plan:\n\n```sql\n{border}\n| id | estRows | operator info |\n{border}\n"
        f"{rows}| Last | 1.00 | {'x ' * 15}|\n{border}\n```\n\n## Next\n\n"
        + " ".join(f"Read the plan number {i} from the bottom up." for i in range(25))
    )
    doc = parse_document(text.encode(), "plans.md")
    chunks = chunk_document(doc)
    window = default_window()
    assert all(_WORD.search(c.text) for c in chunks)
    assert all(window.count([embedding_text(c, doc)])[0] <= window.max_tokens for c in chunks)
    last = next(c.text for c in chunks if "| Last |" in c.text)
    assert last == f"| Last | 1.00 | {'x ' * 15}|\n+---+---+---+\n```"
