"""Docusaurus tab markup is read as tab titles and their contents, nothing else changes."""

from __future__ import annotations

from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.mdx import strip_tab_markup

TABBED = """\
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

## Enable the plugin

<Tabs
groupId="api"
defaultValue="admin-api"
values={[
{label: 'Admin API', value: 'admin-api'},
{label: 'ADC', value: 'adc'}
]}>

<TabItem value="admin-api">

Send the request with `nodelay` set:

```shell
curl http://127.0.0.1:9180/apisix/admin/routes/1 -X PUT -d '{"nodelay": true}'
```

</TabItem>

<TabItem value="adc" label="ADC file">

Update the ADC YAML with `nodelay: true`.

</TabItem>
</Tabs>

Then send requests.
"""


def test_tabs_become_their_titles_and_contents() -> None:
    out = strip_tab_markup(TABBED)
    assert "<Tab" not in out
    assert "</Tab" not in out
    assert "@theme" not in out
    assert "values={[" not in out
    assert "groupId" not in out
    lines = out.splitlines()
    # the title from the group's values list, then its content, in document order
    assert lines.index("**Admin API**") < lines.index("Send the request with `nodelay` set:")
    # a TabItem's own label wins over the group's
    assert "**ADC file**" in lines
    assert "**ADC**" not in lines
    assert lines.index("**ADC file**") < lines.index("Update the ADC YAML with `nodelay: true`.")
    assert lines[-1] == "Then send requests."


def test_every_content_line_is_kept_in_order() -> None:
    markup = ("<Tab", "</Tab", "import ", "groupId", "defaultValue", "values={[", "{label", "]}>")
    content = [line for line in TABBED.splitlines() if not line.startswith(markup)]
    out = strip_tab_markup(TABBED).splitlines()
    positions = [out.index(line) for line in content if line]
    assert positions == sorted(positions)


def test_code_fences_are_code() -> None:
    body = 'Example:\n\n```jsx\n<Tabs groupId="x">\n<TabItem value="a">\n</TabItem>\n```\n'
    assert strip_tab_markup(body) == body


def test_an_opening_that_never_closes_stays_text() -> None:
    body = "<Tabs\n" + "".join(f"line {i} {{\n" for i in range(50)) + "end\n"
    assert strip_tab_markup(body) == body


def test_text_without_tabs_is_returned_unchanged() -> None:
    body = "## Disk full\n\nimport os from the stdlib is fine here.\n<details>x</details>\n"
    assert strip_tab_markup(body) is body


def test_ingested_chunks_carry_no_tab_markup() -> None:
    doc = parse_document(("---\ntitle: limit-req\n---\n" + TABBED).encode(), "plugins/limit-req.md")
    chunks = chunk_document(doc)
    text = "\n".join(c.text for c in chunks)
    assert "<TabItem" not in text
    assert "@theme/Tabs" not in text
    assert "**Admin API**" in text
    assert "nodelay: true" in text
