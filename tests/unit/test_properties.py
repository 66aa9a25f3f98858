"""Property tests (hypothesis): the filter expression builder against a real Milvus Lite parser,
the L0 matcher and the chunker on arbitrary unicode.

The expression property runs few examples on one shared collection (each is a Milvus round trip);
the pure-Python properties run more.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymilvus import DataType

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.filters import condition, filter_to_expr, quote_string
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.pipeline.l0 import L0Matcher, single_domain
from langchain_lookup_knowledge.store.connection import close_client, open_client

# --------------------------------------------------------------------------------------------
# Expression builder: what Milvus parses is exactly the value we quoted
# --------------------------------------------------------------------------------------------

# Values an attacker (a query, a frontmatter field, a caller) might send: quotes, backslashes,
# operators, control characters, line breaks, any script.
NASTY = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(
            [
                '"',
                "'",
                "\\",
                " or ",
                "==",
                "!=",
                " || ",
                "true",
                "\n",
                "\r",
                "\t",
                "\x00",
                "\x1b",
                "(",
                ")",
                "[",
                "]",
                "%",
                "中",
                "🔥",
                "a",
            ]
        ),
        max_size=12,
    ).map("".join),
)


class ValueTable:
    """A shared Milvus Lite collection: (pk, v VARCHAR, meta JSON) rows, and what it holds."""

    def __init__(self, root: Path) -> None:
        self.settings = LookupSettings(data_dir=root, milvus_uri=str(root / "props.db"))
        self.client = open_client(self.settings)
        self.name = "values"
        schema = self.client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("v", DataType.VARCHAR, max_length=2048)
        schema.add_field("meta", DataType.JSON)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=2)
        index = self.client.prepare_index_params()
        index.add_index("vec", index_type="FLAT", metric_type="L2")
        self.client.create_collection(
            self.name, schema=schema, index_params=index, consistency_level="Strong"
        )
        self.pks_by_value: dict[str, set[int]] = defaultdict(set)
        self._ids = itertools.count()

    def add(self, values: list[str]) -> None:
        rows = []
        for value in values:
            pk = next(self._ids)
            self.pks_by_value[value].add(pk)
            rows.append({"pk": pk, "v": value, "meta": {"k": value}, "vec": [0.0, 1.0]})
        self.client.insert(self.name, rows)

    def pks(self, expr: str) -> set[int]:
        rows = self.client.query(self.name, filter=expr, output_fields=["pk"], limit=16384)
        return {row["pk"] for row in rows}


@pytest.fixture(scope="module")
def value_table(tmp_path_factory):
    table = ValueTable(tmp_path_factory.mktemp("props"))
    yield table
    close_client(table.settings)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=NASTY, other=NASTY)
def test_quoted_value_matches_exactly_its_rows_in_milvus(value_table, value, other):
    # Neighbours that a broken escape would confuse with the value.
    value_table.add([value, other, value + '"', '"' + value, value + "\\", value[:-1]])
    expected = value_table.pks_by_value[value]
    assert value_table.pks(f"v == {quote_string(value)}") == expected
    assert value_table.pks(condition("v", value)) == expected
    assert value_table.pks(condition('meta["k"]', value)) == expected
    assert value_table.pks(filter_to_expr({"v": [value, other]})) == (
        expected | value_table.pks_by_value[other]
    )
    # A negated condition selects the complement: no value escapes its literal.
    everything = set().union(*value_table.pks_by_value.values())
    assert value_table.pks(f"not ({condition('v', value)})") == everything - expected


# --------------------------------------------------------------------------------------------
# L0 matcher: any catalog, any query, no crash, consistent hints
# --------------------------------------------------------------------------------------------

TERMS = st.lists(st.text(max_size=20), max_size=4).map(tuple)
ENTRY = st.builds(
    CatalogEntry,
    source=st.text(min_size=1, max_size=20),
    title=st.text(max_size=40),
    category=st.one_of(st.text(max_size=15), st.sampled_from(["kubernetes", "数据库", "a-b_c"])),
    keywords=TERMS,
    entities=TERMS,
    aliases=TERMS,
)
QUERY = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.sampled_from(
            [
                "pod",
                "Nodes",
                "数据库",
                "解析失败",
                "KubePodCrashLooping",
                " ",
                "-",
                "🔥",
                "\x00",
                "ǅ",
                "ﬁ",
                "İ",
                "ß",
            ]
        ),
        max_size=15,
    ).map("".join),
)


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(ENTRY, max_size=8), query=QUERY)
def test_l0_matcher_never_crashes_and_hints_come_from_the_catalog(entries, query):
    matcher = L0Matcher(entries)
    match = matcher.match(query)
    sources = {e.source for e in entries}
    assert set(match.matched) <= sources
    assert set(match.hints.matched_sources) <= sources
    domain = single_domain(match.hints)
    assert domain is None or domain in match.hints.domains
    assert matcher.match(query) == match  # deterministic


@settings(max_examples=100, deadline=None)
@given(entries=st.lists(ENTRY, min_size=1, max_size=6), data=st.data())
def test_l0_matches_an_entry_queried_by_its_own_keyword(entries, data):
    entry = data.draw(st.sampled_from(entries))
    words = [t for t in entry.keywords if t.strip()]
    matcher = L0Matcher(entries)
    for term in words:
        match = matcher.match(term)  # no crash whatever the term; usually it finds itself
        assert set(match.matched) <= {e.source for e in entries}


# --------------------------------------------------------------------------------------------
# Chunker: any body, no crash, every line covered
# --------------------------------------------------------------------------------------------

LINE = st.one_of(
    st.text(max_size=80),
    st.text(min_size=150, max_size=600),  # longer than a chunk: split with overlap
    st.sampled_from(
        [
            "# Title",
            "## Section",
            "### Deeper ##",
            "```",
            "~~~",
            "",
            "   ",
            "。",
            "First sentence. Second sentence. Third one.",
            "\t# not a heading",
        ]
    ),
    st.text(alphabet="数据库连接池满了。重启服务，检查日志", min_size=1, max_size=300),
)
BODY = st.lists(LINE, min_size=1, max_size=30).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(
    body=BODY,
    title=st.text(max_size=30),
    sizes=st.sampled_from([(200, 40), (1200, 150), (250, 60)]),
)
def test_chunks_cover_every_character_of_any_body(body, title, sizes):
    """Coverage: each chunk is the document's own text (whitespace aside), in order, and
    together the chunks cover every visible character of the body, seams included."""
    chunk_size, overlap = sizes
    doc = KnowledgeDocument(
        source="kb/doc.md", title=title or "doc", category="ops", body=body, content_hash="0"
    )
    chunks = chunk_document(doc, chunk_size, overlap)
    if not body.strip():
        assert chunks == []
        return
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len({c.evidence_key for c in chunks}) == len(chunks)
    assert all(c.evidence_key == f"kb/doc.md#{c.ordinal}" for c in chunks)
    # a code block may exceed chunk_size when it fits the embedder's window (256 tokens)
    assert all(c.text.strip() and len(c.text) <= max(chunk_size, 1024) for c in chunks)
    compact = "".join(body.split())
    covered = [False] * len(compact)
    hint = end = 0
    for chunk in chunks:
        piece = "".join(chunk.text.split())
        # in order, no gap: the furthest place that starts at or before the covered end
        at = compact.rfind(piece, hint, end + len(piece))
        at = compact.find(piece, hint) if at < 0 else at
        assert at >= 0, chunk.evidence_key
        covered[at : at + len(piece)] = [True] * len(piece)
        hint, end = at, max(end, at + len(piece))
    assert all(covered)
