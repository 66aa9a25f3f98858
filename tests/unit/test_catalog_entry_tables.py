"""The catalog keeps each document's table count; an entry written without it reads as unknown."""

from __future__ import annotations

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry


def _entry(tables: int | None) -> CatalogEntry:
    return CatalogEntry(source="a.md", title="A", category="ops", chunk_count=2, tables=tables)


def test_a_counted_entry_reads_back_its_table_count() -> None:
    row = _entry(3).to_row()
    assert row["info"]["tables"] == 3
    assert CatalogEntry.from_row(row) == _entry(3)
    assert CatalogEntry.from_row(_entry(0).to_row()).tables == 0


def test_an_entry_written_without_the_count_reads_as_unknown_not_as_no_table() -> None:
    row = _entry(None).to_row()
    assert "tables" not in row["info"]
    entry = CatalogEntry.from_row(row)
    assert entry.tables is None
    assert entry.problems == ()


def test_a_damaged_count_is_unknown_and_named() -> None:
    for bad in ("3", -1, 2.5, True):
        row = _entry(None).to_row()
        row["info"]["tables"] = bad
        entry = CatalogEntry.from_row(row)
        assert entry.tables is None
        assert entry.problems == (f"'tables' is {type(bad).__name__}, not a count",)


def test_the_view_knows_only_the_documents_counted_without_tables() -> None:
    from langchain_lookup_knowledge.pipeline.catalog_view import CatalogView

    entries = [
        CatalogEntry(source=s, title=s, category="", tables=t)
        for s, t in [("none.md", 0), ("some.md", 2), ("old.md", None)]
    ]
    assert CatalogView(entries).without_tables() == frozenset({"none.md"})
