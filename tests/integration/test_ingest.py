"""Ingestion into real Milvus Lite with the real default embedder: frontmatter variants,
categories, chunk identity, incremental runs, prune, and every kind of bad file."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.embeddings.window import window_of
from langchain_lookup_knowledge.errors import ConfigurationError, StoreUnavailableError
from langchain_lookup_knowledge.ingest import IngestReport, ingest_folder
from langchain_lookup_knowledge.knowledge.chunking import CHUNKING_VERSION, chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.store.catalog_store import load_catalog
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from tests.conftest import TIDB_ZH, local_settings, require_shared
from tests.kb_helpers import write

FILLER = (
    "Check the service status, read the recent logs and compare the configuration with the "
    "last known good release before changing anything in production."
)


def long_doc(title: str, sections: int, word: str = "step") -> str:
    """A document of ``sections`` sections, each too big to share a 1200-character chunk."""
    parts = [f"# {title}\n"]
    for i in range(sections):
        paragraph = " ".join([FILLER, f"{word} {i}."] * 5)  # ~800 characters
        parts.append(f"## Section {i}\n\n{paragraph}\n")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def milvus_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One Milvus Lite database for the module; each test gets its own collection in it."""
    root = tmp_path_factory.mktemp("ingest_db")
    yield root / "milvus.db"
    close_all_clients()


@pytest.fixture
def kb_settings(milvus_db: Path, tmp_path: Path) -> LookupSettings:
    return local_settings(tmp_path, milvus_uri=str(milvus_db))


def chunk_rows(settings: LookupSettings, source: str | None = None) -> list[dict]:
    """The chunk rows really stored in Milvus (optionally for one source), by primary key."""
    client = open_client(settings)
    expr = f'source == "{source}"' if source else 'pk != ""'
    rows = client.query(
        settings.collection,
        filter=expr,
        output_fields=["pk", "text", "metadata", "category", "source"],
    )
    return sorted(rows, key=lambda r: r["pk"])


def catalog(settings: LookupSettings) -> dict:
    entries = load_catalog(open_client(settings), settings.resolved_catalog_collection)
    return {e.source: e for e in entries}


# --- one mixed knowledge folder, ingested once: variants and bad files -----------------------

GOOD = {
    "kubernetes/keywords-list.md": (
        "---\ntitle: Pod restarts\nkeywords: [crashloop, restart]\ntags: [pods]\n"
        "entities: [kubelet]\nsummary: Pods restart again and again.\n---\n"
        f"# Pod restarts\n\n{FILLER}\n"
    ),
    "kubernetes/keywords-string.md": (
        "---\ntitle: Disk almost full\nkeywords: 'disk, inode ,  full'\ncategory: storage\n---\n"
        f"# Disk almost full\n\n{FILLER}\n"
    ),
    "databases/domain-field.md": (
        f"---\ntitle: Replica lag\ndomain: postgres\ntags: 'replication, lag'\n---\n{FILLER}\n"
    ),
    "networking/no-frontmatter.md": f"Intro line.\n\n# DNS resolution fails\n\n{FILLER}\n",
    "networking/no-heading-file.md": f"{FILLER}\n",
    "aliases.md": (
        "---\ntitle: Node down\naliases:\n  - /old/url/node-down/\n  - https://example.com/node\n"
        "  - KubeNodeNotReady\n  - http://example.org/x\n---\n"
        f"# Node down\n\n{FILLER}\n"
    ),
    "extra-fields.md": (
        "---\ntitle: Certificate expiry\nowner: team-sre\nseverity: critical\nrevision: 3\n"
        "reviewed: 2024-05-01\n---\n"
        f"# Certificate expiry\n\n{FILLER}\n"
    ),
    "kubernetes/long.md": long_doc("Long runbook", 3),
}
MAX_FILE_BYTES = 6000
BAD = {
    "bad/malformed-yaml.md": ("---\ntitle: [unclosed\nkeywords: a\n---\nBody text.\n", "YAML"),
    "bad/binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
    "bad/latin1.md": ("# Caf\xe9\n\nR\xe9sum\xe9 du probl\xe8me.\n".encode("latin-1"), "UTF-8"),
    "bad/empty.md": ("", "empty"),
    "bad/blank.md": ("  \n\n\t\n", "empty"),
    "bad/frontmatter-only.md": ("---\ntitle: Nothing here\n---\n", "no content"),
    "bad/too-large.md": ("# Huge\n\n" + "x" * (MAX_FILE_BYTES + 10), "too large"),
    "bad/nested-keywords.md": ("---\nkeywords:\n  - {a: 1}\n---\n# T\nbody\n", "keywords"),
}


@pytest.fixture(scope="module")
def mixed(milvus_db: Path, tmp_path_factory: pytest.TempPathFactory, real_embeddings):
    root = tmp_path_factory.mktemp("mixed_kb")
    for rel, content in GOOD.items():
        write(root, rel, content)
    for rel, (content, _) in BAD.items():
        write(root, rel, content)
    write(root, "notes.txt", "not markdown")
    write(root, ".hidden/secret.md", "# Hidden\n\ntext")
    write(root, ".draft.md", "# Draft\n\ntext")
    settings = LookupSettings(
        data_dir=root,
        milvus_uri=str(milvus_db),
        collection="mixed",
        max_file_bytes=MAX_FILE_BYTES,
    )
    report = ingest_folder(root, settings, embeddings=real_embeddings, show_progress=False)
    return root, settings, report


def test_good_files_are_indexed_and_others_ignored(mixed):
    _, settings, report = mixed
    assert sorted(report.indexed) == sorted(GOOD)
    assert set(catalog(settings)) == set(GOOD)
    sources = {row["source"] for row in chunk_rows(settings)}
    assert sources == set(GOOD)  # not .txt, not hidden files or folders
    assert report.files_seen == len(GOOD) + len(BAD)


@pytest.mark.parametrize("rel", sorted(BAD))
def test_each_bad_file_is_reported_by_name_with_reason(mixed, rel):
    _, settings, report = mixed
    skipped = {s.source: s.reason for s in report.skipped}
    assert rel in skipped, f"{rel} not reported; skipped: {skipped}"
    assert BAD[rel][1].lower() in skipped[rel].lower()
    assert not chunk_rows(settings, rel)
    assert rel not in catalog(settings)


def test_skipped_files_appear_in_the_summary(mixed):
    _, _, report = mixed
    summary = report.to_dict()
    assert {s["source"] for s in summary["skipped"]} == set(BAD)
    assert all(s["reason"] for s in summary["skipped"])
    assert summary["indexed"] == len(GOOD)
    assert summary["chunksWritten"] == report.chunks_written == summary["totalChunks"]


def test_keywords_as_list_or_comma_string_and_tags(mixed):
    _, settings, _ = mixed
    entries = catalog(settings)
    listed = entries["kubernetes/keywords-list.md"]
    assert listed.keywords == ("crashloop", "restart", "pods")
    assert listed.entities == ("kubelet",)
    assert entries["kubernetes/keywords-string.md"].keywords == ("disk", "inode", "full")
    assert entries["databases/domain-field.md"].keywords == ("replication", "lag")
    meta = chunk_rows(settings, "kubernetes/keywords-list.md")[0]["metadata"]
    assert meta["keywords"] == ["crashloop", "restart", "pods"]
    assert meta["entities"] == ["kubelet"]


def test_category_from_frontmatter_domain_or_folder(mixed):
    _, settings, _ = mixed
    entries = catalog(settings)
    assert entries["kubernetes/keywords-list.md"].category == "kubernetes"  # folder
    assert entries["kubernetes/keywords-string.md"].category == "storage"  # category wins
    assert entries["databases/domain-field.md"].category == "postgres"  # domain wins
    assert entries["aliases.md"].category == ""  # top-level file, no frontmatter category
    # The category is a scalar field of every chunk (filters use it, not the JSON path).
    for row in chunk_rows(settings, "kubernetes/keywords-string.md"):
        assert row["category"] == "storage"
        assert row["metadata"]["category"] == "storage"


def test_title_from_frontmatter_heading_or_file_name(mixed):
    _, settings, _ = mixed
    entries = catalog(settings)
    assert entries["kubernetes/keywords-list.md"].title == "Pod restarts"
    assert entries["networking/no-frontmatter.md"].title == "DNS resolution fails"
    assert entries["networking/no-heading-file.md"].title == "no-heading-file"
    assert entries["databases/domain-field.md"].title == "Replica lag"


def test_aliases_drop_url_paths(mixed):
    _, settings, _ = mixed
    assert catalog(settings)["aliases.md"].aliases == ("KubeNodeNotReady",)
    assert chunk_rows(settings, "aliases.md")[0]["metadata"]["aliases"] == ["KubeNodeNotReady"]


def test_extra_frontmatter_fields_are_kept_as_metadata(mixed):
    root, settings, _ = mixed
    doc = parse_document((root / "extra-fields.md").read_bytes(), "extra-fields.md")
    assert doc.extra["owner"] == "team-sre"
    assert doc.extra["revision"] == 3
    meta = chunk_rows(settings, "extra-fields.md")[0]["metadata"]
    assert meta["owner"] == "team-sre"
    assert meta["severity"] == "critical"
    assert meta["revision"] == 3
    assert meta["reviewed"] == "2024-05-01"  # a YAML date, stored as JSON text
    assert meta["title"] == "Certificate expiry"  # known fields are never overridden


def test_chunk_identity_is_relative_path_and_ordinal(mixed):
    root, settings, _ = mixed
    rows = chunk_rows(settings, "kubernetes/long.md")
    doc = parse_document((root / "kubernetes/long.md").read_bytes(), "kubernetes/long.md")
    expected = [
        c.evidence_key for c in chunk_document(doc, settings.chunk_size, settings.chunk_overlap)
    ]
    assert len(expected) >= 3
    assert [r["pk"] for r in rows] == sorted(expected)
    assert expected == [f"kubernetes/long.md#{i}" for i in range(len(expected))]
    for row in rows:
        assert row["metadata"]["evidence_key"] == row["pk"]
        assert row["pk"] == f"{row['source']}#{row['metadata']['ordinal']}"
        assert row["metadata"]["breadcrumb"].startswith("Long runbook")
    assert catalog(settings)["kubernetes/long.md"].chunk_count == len(expected)


# --- incremental runs ------------------------------------------------------------------------


def test_unchanged_files_are_skipped_by_hash(kb_settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 2))
    write(kb, "b.md", f"# Beta\n\n{FILLER}\n")
    first = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert sorted(first.indexed) == ["a.md", "b.md"]
    assert first.chunks_written == 3

    second = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert second.chunks_written == 0
    assert second.indexed == []
    assert sorted(second.unchanged) == ["a.md", "b.md"]
    assert second.total_chunks == 3
    assert len(chunk_rows(kb_settings)) == 3


def test_changed_file_replaces_its_chunks(kb_settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 3))
    write(kb, "b.md", f"# Beta\n\n{FILLER}\n")
    ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert [r["pk"] for r in chunk_rows(kb_settings, "a.md")] == ["a.md#0", "a.md#1", "a.md#2"]
    old_hash = catalog(kb_settings)["a.md"].content_hash

    # Same structure, new words: same identities, new content, nothing duplicated.
    write(kb, "a.md", long_doc("Alpha runbook", 3, word="rewritten"))
    edited = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert edited.indexed == ["a.md"]
    assert edited.unchanged == ["b.md"]
    rows = chunk_rows(kb_settings, "a.md")
    assert [r["pk"] for r in rows] == ["a.md#0", "a.md#1", "a.md#2"]
    assert all("rewritten" in r["text"] for r in rows)
    assert catalog(kb_settings)["a.md"].content_hash != old_hash

    # Shrink to one chunk: the two stale chunks must go.
    write(kb, "a.md", f"# Alpha runbook\n\nshort now. {FILLER}\n")
    shrunk = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert shrunk.indexed == ["a.md"]
    assert shrunk.chunks_written == 1
    assert shrunk.stale_chunks_deleted == 2
    rows = chunk_rows(kb_settings, "a.md")
    assert [r["pk"] for r in rows] == ["a.md#0"]
    assert "short now" in rows[0]["text"]
    assert shrunk.total_chunks == 2
    assert catalog(kb_settings)["a.md"].chunk_count == 1
    assert [r["pk"] for r in chunk_rows(kb_settings, "b.md")] == ["b.md#0"]


def test_prune_removes_deleted_files(kb_settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(kb, "keep/a.md", f"# Keep\n\n{FILLER}\n")
    gone = write(kb, "drop/b.md", long_doc("Dropped", 2))
    ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert len(chunk_rows(kb_settings, "drop/b.md")) == 2
    gone.unlink()

    without = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert without.pruned == []
    assert len(chunk_rows(kb_settings, "drop/b.md")) == 2  # nothing removed without --prune
    assert "drop/b.md" in catalog(kb_settings)

    pruned = ingest_folder(kb, kb_settings, prune=True, embeddings=real_embeddings)
    assert pruned.pruned == ["drop/b.md"]
    assert chunk_rows(kb_settings, "drop/b.md") == []
    assert set(catalog(kb_settings)) == {"keep/a.md"}
    assert [r["pk"] for r in chunk_rows(kb_settings)] == ["keep/a.md#0"]
    assert pruned.total_chunks == 1


def test_rerun_after_a_killed_run_converges(kb_settings, tmp_path, real_embeddings):
    """A run killed after writing chunks but before the catalog entry redoes that document."""
    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 3))
    ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    client = open_client(kb_settings)
    # Simulate the crash window: the document shrank, its chunks were written, no catalog entry.
    client.delete(kb_settings.resolved_catalog_collection, filter='source == "a.md"')
    write(kb, "a.md", f"# Alpha runbook\n\n{FILLER}\n")
    again = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert again.indexed == ["a.md"]
    assert [r["pk"] for r in chunk_rows(kb_settings)] == ["a.md#0"]
    assert catalog(kb_settings)["a.md"].chunk_count == 1


# --- errors ---------------------------------------------------------------------------------


def test_missing_path_is_a_configuration_error(kb_settings, tmp_path):
    with pytest.raises(ConfigurationError, match="not found"):
        ingest_folder(tmp_path / "nope", kb_settings)
    file = write(tmp_path, "file.md", "# x\n")
    with pytest.raises(ConfigurationError, match="not a folder"):
        ingest_folder(file, kb_settings)


def test_database_in_a_missing_folder_is_unavailable(tmp_path, real_embeddings):
    kb = write(tmp_path, "kb/a.md", "# A\n\ntext\n").parent
    settings = LookupSettings(data_dir=tmp_path, milvus_uri=str(tmp_path / "no" / "such" / "x.db"))
    with pytest.raises(StoreUnavailableError, match="does not exist"):
        ingest_folder(kb, settings, embeddings=real_embeddings)
    assert not (tmp_path / "no").exists()


def test_default_data_folder_is_created_on_first_use(tmp_path, real_embeddings):
    kb = write(tmp_path, "kb/a.md", f"# A\n\n{FILLER}\n").parent
    data_dir = tmp_path / "fresh" / "data"
    settings = LookupSettings(data_dir=data_dir, collection="first_use")
    try:
        report = ingest_folder(kb, settings, embeddings=real_embeddings)
    finally:
        close_all_clients()
    assert isinstance(report, IngestReport)
    assert report.chunks_written == 1
    assert (data_dir / "milvus.db").exists()


# --- HTML comments and the chunking signature ---------------------------------------------

LICENSED = (
    "---\ntitle: Rate limiting\n---\n\n<!--\n#\n# Licensed to the Apache Software Foundation\n"
    "# limitations under the License.\n#\n-->\n\n## Enable it\n\n"
    f"Turn on limit-count on the route. {FILLER}\n\n"
    "```html\n<!-- an example comment stays -->\n```\n"
)


def test_html_comments_are_not_headings_or_content(kb_settings, tmp_path, real_embeddings):
    """A license header in an HTML comment (lines starting with #) is not a section, and the
    comment is not indexed; a comment inside a code fence is code and stays."""
    kb = tmp_path / "kb"
    write(kb, "gateway/rate.md", LICENSED)
    ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    rows = chunk_rows(kb_settings, "gateway/rate.md")
    assert rows
    for row in rows:
        assert "Licensed to" not in row["text"]
        assert "limitations under the License" not in row["metadata"]["breadcrumb"]
    assert rows[0]["metadata"]["breadcrumb"] == "Rate limiting > Enable it"
    assert any("<!-- an example comment stays -->" in r["text"] for r in rows)


def test_changing_the_chunk_size_rechunks_unchanged_files(kb_settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 3))
    first = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    assert first.indexed == ["a.md"]
    assert ingest_folder(kb, kb_settings, embeddings=real_embeddings).unchanged == ["a.md"]
    smaller = kb_settings.model_copy(update={"chunk_size": kb_settings.chunk_size // 2})
    again = ingest_folder(kb, smaller, embeddings=real_embeddings)
    assert again.indexed == ["a.md"]  # same bytes, chunked another way: written again
    assert again.chunks_written > first.chunks_written
    assert len(chunk_rows(smaller, "a.md")) == again.chunks_written  # no stale chunk left
    window = window_of(real_embeddings).name  # the embedder's tokenizer and window
    assert catalog(smaller)["a.md"].chunking == (
        f"v{CHUNKING_VERSION}/{smaller.chunk_size}/{smaller.chunk_overlap}/{window}"
    )


def test_another_embedder_window_rechunks_unchanged_files(kb_settings, tmp_path, real_embeddings):
    from langchain_lookup_knowledge.embeddings.window import EstimatedWindow

    class NarrowWindow:  # a fake only in the window it says: the real model embeds
        def __init__(self, inner):
            self.inner = inner

        def token_window(self):
            return EstimatedWindow(96, label="narrow")

        def embed_documents(self, texts):
            return self.inner.embed_documents(texts)

        def embed_query(self, text):
            return self.inner.embed_query(text)

    kb = tmp_path / "kb"
    write(kb, "a.md", long_doc("Alpha runbook", 3))
    first = ingest_folder(kb, kb_settings, embeddings=real_embeddings)
    again = ingest_folder(kb, kb_settings, embeddings=NarrowWindow(real_embeddings))
    assert again.indexed == ["a.md"]  # same bytes, another window: chunked again
    assert again.chunks_written > first.chunks_written
    assert catalog(kb_settings)["a.md"].chunking.endswith("/narrow96")


# --- categories from a side file ----------------------------------------------------------


def test_categories_file_sets_categories_frontmatter_still_wins(
    kb_settings, tmp_path, real_embeddings
):
    kb = tmp_path / "kb"
    write(kb, "backup.md", f"# Backup\n\n{FILLER}\n")
    write(kb, "ops/own.md", f"---\ncategory: storage\n---\n# Own\n\n{FILLER}\n")
    write(kb, "ops/unnamed.md", f"# Unnamed\n\n{FILLER}\n")
    write(kb, "faq.md", f"# FAQ\n\n{FILLER}\n")
    table = write(
        tmp_path,
        "toc.tsv",
        "path\ttoc_section\ttitle\n"
        "backup.md\t运维操作\tBackup\n"
        "ops/own.md\tIgnored\tOwn\n"
        "faq.md\t\tFAQ\n"
        "gone.md\tNowhere\tGone\n",
    )
    settings = kb_settings.model_copy(update={"categories_file": table})
    ingest_folder(kb, settings, embeddings=real_embeddings)
    categories = {source: e.category for source, e in catalog(settings).items()}
    assert categories == {
        "backup.md": "运维操作",  # from the table (second column)
        "ops/own.md": "storage",  # its frontmatter wins
        "ops/unnamed.md": "ops",  # not in the table: its folder
        "faq.md": "",  # empty cell, top-level file: no category
    }
    assert {r["category"] for r in chunk_rows(settings, "backup.md")} == {"运维操作"}

    # The table changes, the files do not: the re-categorized file is written again.
    csv_table = write(tmp_path, "toc.csv", "path,category\nbackup.md,Operations\n")
    again = ingest_folder(
        kb, settings.model_copy(update={"categories_file": csv_table}), embeddings=real_embeddings
    )
    assert again.indexed == ["backup.md"]
    assert {r["category"] for r in chunk_rows(settings, "backup.md")} == {"Operations"}


@pytest.mark.parametrize(
    ("content", "column", "message"),
    [
        (None, None, "categories file not found"),
        ("file\tcategory\na.md\tx\n", None, "no 'path' column (columns: file, category)"),
        ("path\tsection\na.md\tx\n", "sidebar", "no column 'sidebar' (columns: path, section)"),
    ],
)
def test_bad_categories_file_is_a_clear_error(
    kb_settings, tmp_path, real_embeddings, content, column, message
):
    kb = tmp_path / "kb"
    write(kb, "a.md", f"# A\n\n{FILLER}\n")
    table = tmp_path / "toc.tsv"
    if content is not None:
        table.write_text(content, encoding="utf-8")
    settings = kb_settings.model_copy(
        update={"categories_file": table, "categories_column": column}
    )
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        ingest_folder(kb, settings, embeddings=real_embeddings)
    assert not open_client(settings).has_collection(settings.collection)  # nothing half-written


def test_tidb_docs_take_their_toc_section_as_category(kb_settings, tmp_path, real_embeddings):
    """The real TiDB docs keep their sections in toc_categories.tsv, not in the files."""
    tidb = require_shared(TIDB_ZH)
    kb = tmp_path / "tidb"
    names = ["analyze-slow-queries.md", "alert-rules.md", "agg-distinct-optimization.md"]
    for name in names:
        write(kb, name, (tidb / name).read_bytes())
    table = tidb / "toc_categories.tsv"
    expected = {}
    for line in table.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        if cells[0] in names:
            expected[cells[0]] = cells[1]
    settings = kb_settings.model_copy(update={"categories_file": table})
    ingest_folder(kb, settings, embeddings=real_embeddings)
    got = {source: e.category for source, e in catalog(settings).items()}
    assert got == expected
    assert got["analyze-slow-queries.md"] == "故障诊断"


class BatchSpy(Embeddings):
    """The real embedder, recording the texts of each ``embed_documents`` call (a spy, not a
    fake: every vector is the model's)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_chunks_are_embedded_in_batches_of_similar_length(kb_settings, tmp_path, real_embeddings):
    kb = tmp_path / "kb"
    for i in range(6):  # long and short documents interleaved in ingest order
        write(kb, f"long{i}.md", long_doc(f"Long runbook {i}", 2, word=f"w{i}"))
        write(kb, f"short{i}.md", f"# Short {i}\n\nRestart service {i}.\n")
    spy = BatchSpy(real_embeddings)
    settings = kb_settings.model_copy(update={"embedding_batch_size": 4})
    report = ingest_folder(kb, settings, embeddings=spy)
    assert report.chunks_written == 18
    lengths = [[len(t) for t in batch] for batch in spy.batches]
    assert len(lengths) == 5
    for shorter, longer in itertools.pairwise(lengths):
        assert max(shorter) <= min(longer)  # a batch is padded to its longest text only
    # each chunk keeps its own vector, whatever batch it was embedded in
    rows = {r["pk"]: r for r in chunk_rows(settings)}
    client = open_client(settings)
    stored = client.query(
        settings.collection,
        filter='pk in ["short3.md#0", "long3.md#1"]',
        output_fields=["pk", "vector"],
    )
    assert len(stored) == 2
    texts = {t for batch in spy.batches for t in batch}
    for row in stored:
        text = next(t for t in texts if rows[row["pk"]]["text"] in t)
        expected = real_embeddings.embed_documents([text])[0]
        assert max(abs(a - b) for a, b in zip(row["vector"], expected, strict=True)) < 1e-5
