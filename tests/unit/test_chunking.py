"""Heading-aware chunking: breadcrumbs, bounded size with overlap, stable ``evidenceKey``."""

from __future__ import annotations

import re

import pytest

from langchain_lookup_knowledge.knowledge.chunking import (
    chunk_document,
    default_window,
    embedding_text,
    evidence_key,
    split_sections,
)
from langchain_lookup_knowledge.knowledge.documents import parse_document


def _doc(text: str, source: str = "ops/disk.md"):
    return parse_document(text.encode("utf-8"), source)


def _paragraphs(word: str, count: int, width: int = 60) -> str:
    line = (f"{word} " * (width // (len(word) + 1))).strip() + "."
    return "\n\n".join(f"{line} {i}" for i in range(count))


def test_evidence_key_is_relative_source_and_ordinal():
    assert evidence_key("node/disk-full.md", 3) == "node/disk-full.md#3"
    doc = _doc("# Disk\n\n## Meaning\nFull.\n\n## Fix\nClean up.", "node/disk-full.md")
    chunks = chunk_document(doc)
    assert [c.evidence_key for c in chunks] == ["node/disk-full.md#0"]
    assert chunks[0].source == "node/disk-full.md"
    assert chunks[0].ordinal == 0


def test_breadcrumb_is_title_section_subsection():
    body = (
        "---\ntitle: Disk full\n---\n# Disk full\n\nIntro.\n\n## Mitigation\n\n"
        + _paragraphs("clean", 12)
        + "\n\n### Log rotation\n\n"
        + _paragraphs("rotate", 12)
    )
    chunks = chunk_document(_doc(body), chunk_size=400, overlap=40)
    crumbs = [c.breadcrumb for c in chunks]
    # The H1 equal to the title is not repeated in the breadcrumb.
    assert crumbs[0] == "Disk full"
    assert "Disk full > Mitigation" in crumbs
    assert "Disk full > Mitigation > Log rotation" in crumbs
    rotate = [c for c in chunks if c.breadcrumb.endswith("Log rotation")]
    assert rotate
    assert all("rotate" in c.text for c in rotate)
    assert all(c.title == "Disk full" for c in chunks)


def test_chunks_are_bounded_and_ordinals_consecutive():
    doc = _doc("# Big\n\n" + _paragraphs("word", 80))
    chunks = chunk_document(doc, chunk_size=300, overlap=30)
    assert len(chunks) > 5
    assert all(len(c.text) <= 300 for c in chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert [c.evidence_key for c in chunks] == [f"ops/disk.md#{i}" for i in range(len(chunks))]


def test_long_unbroken_text_is_split_into_contiguous_pieces():
    # No sentence and no word break: nothing to repeat as overlap, nothing lost.
    text = "".join(chr(ord("a") + i % 26) for i in range(1000))
    chunks = chunk_document(_doc(text), chunk_size=200, overlap=40)
    assert len(chunks) >= 5
    assert all(len(c.text) <= 200 for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_small_sections_are_packed_together():
    doc = _doc("# T\n\n## A\nalpha\n\n## B\nbeta\n\n## C\ngamma")
    chunks = chunk_document(doc, chunk_size=1000, overlap=100)
    assert len(chunks) == 1
    assert all(w in chunks[0].text for w in ("alpha", "beta", "gamma"))


def test_headings_inside_code_fences_do_not_split():
    body = "# Title\n\n## Real\n\n```bash\n# not a heading\necho hi\n```\n\n## Next\ntext"
    sections = split_sections(_doc(body).body, "Title")
    paths = [s.path for s in sections]
    assert ("Title", "Real") in paths
    assert not any("not a heading" in " ".join(p) for p in paths)
    real = next(s for s in sections if s.path == ("Title", "Real"))
    assert "# not a heading" in real.text


def test_a_long_cjk_document_is_cut_at_sentence_ends():
    body = "# 磁盘已满\n\n" + "".join(f"第{i}步清理日志文件释放空间。" for i in range(120))
    chunks = chunk_document(_doc(body, "zh/disk.md"), chunk_size=1000, overlap=100)
    assert len(chunks) >= 4
    assert all(c.text.endswith("。") for c in chunks)


def test_a_short_cjk_document_that_fits_the_window_stays_one_chunk():
    sections = ["## 含义\n\nJob 完成失败。", "## 影响\n\n处理计划任务失败。"]
    sections.append("## 诊断\n\n" + "检查 Job 的 Pod 事件和日志，找出失败原因。" * 4)
    body = "# KubeJobFailed\n\n" + "\n\n".join(sections)
    chunks = chunk_document(_doc(body, "zh/job.md"), chunk_size=1000, overlap=100)
    assert len(chunks) == 1
    assert "计划任务失败" in chunks[0].text
    assert "找出失败原因" in chunks[0].text
    longer = body + "\n\n## 缓解\n\n" + "删除失败的 Job 后告警消失。" * 40
    assert len(chunk_document(_doc(longer, "zh/job.md"), chunk_size=1000, overlap=100)) >= 3


def test_chunking_is_deterministic():
    doc = _doc("# X\n\n" + _paragraphs("stable", 40))
    first = chunk_document(doc, chunk_size=250, overlap=25)
    again = chunk_document(_doc("# X\n\n" + _paragraphs("stable", 40)), chunk_size=250, overlap=25)
    assert first == again


def test_embedding_text_carries_breadcrumb_terms_and_summary_on_first_chunk():
    raw = (
        "---\ntitle: Disk full\nkeywords: [inode]\naliases: [NodeFilesystemAlmostOutOfSpace]\n"
        "summary: The disk is almost full.\n---\n# Disk full\n\n" + _paragraphs("word", 30)
    )
    doc = _doc(raw)
    chunks = chunk_document(doc, chunk_size=300, overlap=30)
    first, second = embedding_text(chunks[0], doc), embedding_text(chunks[1], doc)
    assert first.startswith("Disk full")
    assert "inode" in first
    assert "NodeFilesystemAlmostOutOfSpace" in first
    assert "The disk is almost full." in first
    assert "The disk is almost full." not in second


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [(40, 0, "chunk_size"), (300, 150, "overlap"), (300, -1, "overlap")],
)
def test_invalid_chunk_parameters_are_rejected(size, overlap, message):
    with pytest.raises(ValueError, match=message):
        chunk_document(_doc("# T\ntext"), chunk_size=size, overlap=overlap)


_WORD = re.compile(r"[^\W_]{2,}")
_METADATA = "\n\n## Metadata\n\n" + " ".join(
    f"Set the log format number {i} with plugin metadata." for i in range(25)
)


def _fits_the_window(doc, chunks) -> bool:
    window = default_window()
    return all(window.count([embedding_text(c, doc)])[0] <= window.max_tokens for c in chunks)


def test_a_closing_fence_stays_with_the_code_it_closes():
    # 34 lines and a last value of 32 characters fill the chunk to the fence's line.
    lines = "".join(f'  "key_{i}": "value number {i}",\n' for i in range(34))
    body = (
        "# Log format\n\n## Example\n\nThe plugin writes this entry:\n\n"
        f'```json\n{{\n{lines}  "last": "{"x" * 32}"\n}}\n```' + _METADATA
    )
    doc = _doc(body, "plugins/logger.md")
    chunks = chunk_document(doc)
    assert all(_WORD.search(c.text) for c in chunks)
    closing = next(c for c in chunks if c.text.endswith("```") or "```\n\n## Metadata" in c.text)
    assert '"last"' in closing.text
    assert _fits_the_window(doc, chunks)
    assert "".join(c.text for c in chunks).count("```") == 2


def test_a_closing_admonition_mark_joins_the_chunk_before_it():
    prose = " ".join(f"Entry {i} is buffered before it is sent." for i in range(21))
    body = f"# Logger\n\n## Attributes\n\n:::note\n\n{prose} Then {'very ' * 23}late.\n\n:::"
    doc = _doc(body + _METADATA, "plugins/logger.md")
    chunks = chunk_document(doc)
    assert all(_WORD.search(c.text) for c in chunks)
    assert any(c.text.endswith("late.\n\n:::") for c in chunks)
    assert _fits_the_window(doc, chunks)


def test_a_piece_without_a_word_at_the_start_joins_the_chunk_after_it():
    # The first section is only ":::"; the next one does not fit beside it whole.
    body = ":::\n\n## Details\n\n" + " ".join(f"Point {i} explains the notes." for i in range(80))
    doc = _doc(body, "notes.md")
    chunks = chunk_document(doc)
    assert len(chunks) > 1
    assert chunks[0].text.startswith(":::\n\n## Details\n\nPoint 0 ")
    assert all(_WORD.search(c.text) for c in chunks)
    assert _fits_the_window(doc, chunks)
