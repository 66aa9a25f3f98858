"""Raw HTML in markdown is read as its text at ingest: tags, attributes and styling dropped,
tables as markdown rows, code untouched, hostile markup neither losing text nor costing
more than linear time."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.document_tables import document_tables
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.html_text import html_as_text

TAG = re.compile(r"</?[A-Za-z][\w-]*(\s[^>]*)?/?>")
ATTRIBUTE = re.compile(r"\w+=\"[^\"]*\"|style=|width:")

REFERENCE = """\
# Certificate API

<div style={{textAlign: 'center'}}>
<img src="diagram.png" alt="diagram" style={{width: "64px"}} />
</div>

<table>
  <thead>
    <tr><th>Field</th><th>Description</th></tr>
  </thead>
  <tbody>
    <tr>
      <td><code>duration</code></td>
      <td style="width: 64px">Requested lifetime.<br/>Default <b>90d</b> &amp; renewed at 2/3.</td>
    </tr>
    <tr><td><a href="#issuer">issuerRef</a></td><td>The issuer &lt;name&gt; to use.</td></tr>
  </tbody>
</table>

Set `<td>` aside: ``<div class="x">`` is code.

```html
<table><tr><td style="width: 1px">code stays</td></tr></table>
```
"""


def test_a_generated_reference_reads_as_text_and_markdown_rows() -> None:
    out = html_as_text(REFERENCE)
    prose = out.split("```html")[0]
    assert "| Field | Description |" in out
    assert "| --- | --- |" in out
    assert "| duration | Requested lifetime. Default 90d & renewed at 2/3. |" in out
    assert "| issuerRef | The issuer <name> to use. |" in out
    # no tag, attribute or style fragment outside code
    without_code = re.sub(r"``.*?``|`[^`]*`", "", prose)
    assert TAG.search(without_code.replace("<name>", "")) is None, without_code
    assert ATTRIBUTE.search(without_code) is None, without_code
    # code spans and fenced code are left as written
    assert 'Set `<td>` aside: ``<div class="x">`` is code.' in out
    assert '<table><tr><td style="width: 1px">code stays</td></tr></table>' in out
    assert out.startswith("# Certificate API\n\n| Field")


def test_a_parsed_html_table_is_a_markdown_table_of_the_document() -> None:
    doc = parse_document(REFERENCE.encode(), "reference/certificate.md")
    chunks = chunk_document(doc)
    tables = document_tables([(c.ordinal, c.breadcrumb, c.text) for c in chunks])
    assert len(tables) == 1
    assert tables[0].header == "| Field | Description |"
    assert [row.split(" | ")[0] for row in tables[0].rows] == ["| duration", "| issuerRef"]
    prose = [re.sub(r"``.*?``|`[^`]*`", "", c.text.split("```")[0]) for c in chunks]
    assert all("style" not in text and "<td" not in text for text in prose)


def test_markup_inside_a_markdown_table_row_keeps_the_row_one_line() -> None:
    body = (
        "| Name | Description |\n| --- | --- |\n"
        "| mode | One of:<br />• `a`: first<br/>• `b`: second <ul><li>x</li><li>y</li></ul> |\n"
        "| pipe | a &#124; b |\n"
    )
    lines = html_as_text(body).splitlines()
    assert lines[2] == "| mode | One of: • `a`: first • `b`: second; x; y |"
    assert lines[3] == "| pipe | a \\| b |"
    assert len(lines) == 4


def test_rowspan_cells_are_repeated_in_the_rows_they_span() -> None:
    body = (
        "<table><tr><th>Kind</th><th>Cost</th></tr>"
        '<tr><td rowspan="2">Read</td><td>one batch</td></tr><tr><td>one request</td></tr>'
        "<tr><td>CPU</td><td>3 ms</td></tr></table>"
    )
    assert html_as_text(body).splitlines() == [
        "| Kind | Cost |",
        "| --- | --- |",
        "| Read | one batch |",
        "| Read | one request |",
        "| CPU | 3 ms |",
    ]


def test_nested_tables_are_read_inside_their_cell() -> None:
    body = (
        "<table><tr><th>Key</th><th>Values</th></tr><tr><td>k</td><td>before"
        "<table><tr><td>i1</td><td>i2</td></tr><tr><td>i3</td></tr></table>"
        " after</td></tr></table>"
    )
    lines = html_as_text(body).splitlines()
    assert lines[2] == "| k | before; i1, i2; i3 after |"


def test_blocks_headings_lists_and_tabs() -> None:
    body = (
        "<details>\n<summary>Full context</summary>\n\nThe disk fills up.\n</details>\n"
        '<h2 id="fix">Fix <code>it</code></h2>\n'
        "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"
        '<SimpleTab>\n<div label="AWS KMS">\n\nUse a key.\n</div>\n</SimpleTab>\n'
        "line one<br/>line two\n"
    )
    lines = html_as_text(body).splitlines()
    assert lines[:3] == ["Full context", "", "The disk fills up."]
    assert "## Fix it" in lines
    assert lines.index("- one") + 1 == lines.index("- two")
    assert lines.index("**AWS KMS**") < lines.index("Use a key.")
    assert lines[-2:] == ["line one", "line two"]


def test_script_and_style_content_is_dropped_and_nothing_else() -> None:
    out = html_as_text(
        "Before <script>var a = '<b>x</b>'; if (a > 1) {}</script> middle "
        "<style>p { width: 64px }</style>after."
    )
    assert out == "Before middle after."


@pytest.mark.parametrize(
    "text",
    [
        "<cluster-name> and <CLUSTER> and <your_token>",
        "see <https://example.com/x?a=1&b=2> now",
        "DROP TABLE <table name>; and a < b > c, x<5",
        "<b>bold never closed, <address> alone",
        "before <script>never closed\n\nstill here",
        "<a title='unclosed quote>still text\n\nnext paragraph",
        "R&D, &copy without a semicolon, &unknown;",
        "<!DOCTYPE html> <?xml ?> <![CDATA[ x ]]> <!-- unclosed",
    ],
)
def test_text_that_is_no_markup_stays(text: str) -> None:
    assert html_as_text(text) == text


def test_hostile_markup_loses_no_text() -> None:
    words = [f"word{i}" for i in range(40)]
    hostile = (
        f"<div>{words[0]} <span>{words[1]}\n"  # unclosed
        f'<a title="x > y" href="u">{words[2]}</a> {words[3]}\n'  # > inside quotes
        f'<img style={{{{width: "64px"}}}} onload={{() => a > b}}/>{words[4]}\n'
        f"<table><tr><td>{words[5]}<td>{words[6]}<tr><td>{words[7]}</table>\n"  # unclosed cells
        f"<table><tr><td><table><tr><td>{words[8]}</td></tr></table>{words[9]}</td></tr>"
        f"</table>\n<p>{words[10]}<p>{words[11]}\n"
        f"<script>{'nothing ' * 5}</script>{words[12]}\n"
        f"<td>{words[13]}</td> <tr>{words[14]}\n"  # table parts outside any table
        + " ".join(f"<i>{w}</i>" for w in words[15:])
    )
    out = html_as_text(hostile)
    missing = [w for w in words if w not in out]
    assert missing == [], out
    assert "nothing" not in out
    assert ATTRIBUTE.search(out) is None, out
    assert TAG.search(out) is None, out


def _generated_table(rows: int) -> str:
    return (
        "<table>\n<tr><th>Name</th><th>Type</th><th>Description</th></tr>\n"
        + "".join(
            f'<tr><td style="width: 64px">field_{i}</td><td><code>string</code></td>'
            f"<td>Field {i}.<br/>Default &lt;none&gt;.</td></tr>\n"
            for i in range(rows)
        )
        + "</table>\n"
    )


def test_a_2_mb_generated_table_is_read_whole() -> None:
    text = _generated_table(17_000)
    assert len(text) > 2_000_000
    lines = html_as_text(text).splitlines()
    assert lines[0] == "| Name | Type | Description |"
    assert lines[2] == "| field_0 | string | Field 0. Default <none>. |"
    assert lines[17_001] == "| field_16999 | string | Field 16999. Default <none>. |"


HOSTILE: dict[str, Callable[[int], str]] = {
    "generated table": lambda n: _generated_table(n // 110),
    "tags that never end": lambda n: "<a x " * (n // 5),
    "unclosed double quotes": lambda n: '<a x="' * (n // 6),
    "unclosed single quotes": lambda n: "<a x='" * (n // 6),
    "unclosed braces": lambda n: "<a s={{ " * (n // 8),
    "mixed quotes": lambda n: "<a b=\"c' {d ` " * (n // 14),
    "backtick runs": lambda n: "".join("`" * (i % 50 + 1) + " <b " for i in range(n // 30)),
    "unclosed tables": lambda n: "<table><tr><td>x " * (n // 18),
    "unclosed scripts": lambda n: "<script>x " * (n // 10),
    "entities": lambda n: "&#12" * (n // 4),
    "list items in a row": lambda n: "| a | " + "<li>x</li>" * (n // 10) + " |\n",
    "one long cell": lambda n: "<table><tr><td>" + "<li>x" * (n // 5) + "</table>",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_input_takes_linear_time(kind: str) -> None:
    """Four times the input costs about four times the time (sixteen if it were quadratic)."""

    def seconds(size: int) -> float:
        text = HOSTILE[kind](size)
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            html_as_text(text)
            best = min(best, time.perf_counter() - start)
        return best

    small, large = seconds(50_000), seconds(200_000)
    assert large < max(9 * small, 0.05), (kind, small, large)
