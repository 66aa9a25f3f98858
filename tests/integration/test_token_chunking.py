"""Chunks sized with the embedder's tokenizer and cut where the document's structure is.

Real tokenizer (the bundled all-MiniLM-L6-v2's), real document shapes: headings, lists, code
fences, tables, Chinese prose, a long header, a 2 MB file without a paragraph break.
"""

from __future__ import annotations

import itertools
import re
import time

import pytest
from tokenizers import Tokenizer

from langchain_lookup_knowledge.embeddings.onnx import ModelFiles
from langchain_lookup_knowledge.embeddings.window import EstimatedWindow, window_of
from langchain_lookup_knowledge.knowledge.chunking import (
    chunk_document,
    chunking_signature,
    embedding_text,
)
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.knowledge.sentences import inside_word, sentence_spans

WINDOW = 256


@pytest.fixture(scope="module")
def count():
    tokenizer = Tokenizer.from_file(str(ModelFiles.pinned_default().tokenizer))
    tokenizer.no_truncation()
    return lambda text: len(tokenizer.encode(text).ids)


def _doc(text: str, source: str = "docs/plugin.md"):
    return parse_document(text.encode("utf-8"), source)


def _prose(count: int, topic: str = "route") -> str:
    return " ".join(
        f"The {topic} number {i} forwards requests to upstream node{i} with a timeout of {i}s."
        for i in range(count)
    )


def _located(doc, chunks):
    """Where each chunk's text starts and ends in the document body."""
    spans, hint = [], 0
    for chunk in chunks:
        start = doc.body.find(chunk.text[:60], hint)
        assert start >= 0, chunk.evidence_key
        end = doc.body.find(chunk.text[-60:], start) + len(chunk.text[-60:])
        spans.append((start, end))
        hint = start + 1
    return spans


PLUGIN_DOC = (
    "---\ntitle: limit-count\nkeywords: [Apache APISIX, API Gateway, Plugin, Limit Count, "
    "rate limiting, quota, redis, redis-cluster]\ndescription: Limit requests.\n---\n"
    "# limit-count\n\n## Description\n\n" + _prose(14, "plugin") + "\n\n## Attributes\n\n"
    "| Name | Type | Required | Description |\n| --- | --- | --- | --- |\n"
    + "".join(
        f"| key_{i} | string | False | The key number {i} of the counter. |\n" for i in range(30)
    )
    + "\n## Enable Plugin\n\nCreate a route:\n\n```shell\ncurl http://127.0.0.1:9180/apisix/"
    'admin/routes/1 -X PUT -d \'\n{\n  "uri": "/index.html",\n  "plugins": {\n'
    '    "limit-count": {\n      "count": 2,\n      "time_window": 60,\n'
    '      "rejected_code": 503,\n      "key_type": "var",\n      "key": "remote_addr"\n'
    "    }\n  }\n}'\n```\n\n## Steps\n\n"
    + "\n".join(f"- Step {i}: check the counter {i} in redis and reset it." for i in range(25))
    + "\n\n## Long code\n\n```lua\n"
    + "".join(f"local value_{i} = ngx.shared.counter:get('key_{i}') or {i}\n" for i in range(60))
    + "```\n"
)


def test_every_chunk_with_its_header_fits_the_window(count):
    doc = _doc(PLUGIN_DOC)
    chunks = chunk_document(doc)
    assert len(chunks) >= 5
    for chunk in chunks:
        assert count(embedding_text(chunk, doc)) <= WINDOW, chunk.evidence_key
    assert [c.evidence_key for c in chunks] == [f"docs/plugin.md#{i}" for i in range(len(chunks))]


def test_no_chunk_starts_or_ends_inside_a_word():
    doc = _doc(PLUGIN_DOC)
    for start, end in _located(doc, chunk_document(doc)):
        assert not inside_word(doc.body, start)
        assert not inside_word(doc.body, end)


def test_a_code_block_that_fits_is_never_cut():
    doc = _doc(PLUGIN_DOC)
    fence = PLUGIN_DOC[PLUGIN_DOC.index("```shell") : PLUGIN_DOC.index("```\n\n## Steps") + 3]
    holding = [c for c in chunk_document(doc) if 'limit-count": {' in c.text]
    assert len(holding) == 1
    assert fence in holding[0].text


def test_a_code_block_longer_than_the_window_is_cut_at_line_ends():
    doc = _doc(PLUGIN_DOC)
    lines = set(PLUGIN_DOC.splitlines())
    code = [c for c in chunk_document(doc) if "ngx.shared.counter" in c.text]
    assert len(code) >= 2
    for chunk in code:
        assert all(line in lines for line in chunk.text.splitlines()), chunk.evidence_key


def test_list_items_and_table_rows_stay_whole():
    doc = _doc(PLUGIN_DOC)
    lines = set(PLUGIN_DOC.splitlines())
    for chunk in chunk_document(doc):
        for line in chunk.text.splitlines():
            if line.startswith(("- Step", "| key_")):
                assert line in lines


def test_a_heading_starts_a_chunk_when_its_section_does_not_fit_the_one_before():
    doc = _doc(PLUGIN_DOC)
    chunks = chunk_document(doc)
    steps = next(c for c in chunks if "Step 0:" in c.text)
    assert steps.text.startswith("## Steps")
    assert steps.breadcrumb == "limit-count > Steps"


def test_overlap_repeats_whole_sentences():
    doc = _doc("# Routes\n\n" + _prose(60))
    chunks = chunk_document(doc, chunk_size=1000, overlap=150)
    assert len(chunks) >= 3
    for left, right in itertools.pairwise(chunks):
        assert right.text.startswith("The route number")
        head = right.text[: right.text.index(".") + 1]
        assert head in left.text  # the first sentence of the next chunk repeats the last one
        assert left.text.rstrip().endswith(".")


def _findings(count: int, words: int) -> str:
    """Sentences of ``words`` words each, longer than the default overlap (150 characters)."""
    filler = " ".join(f"cohort{w}" for w in range(words))
    return " ".join(
        f"Finding {i} shows that {filler} in patients of group {i}." for i in range(count)
    )


def test_overlap_carries_the_last_sentence_when_it_is_longer_than_the_overlap():
    doc = _doc("# Results\n\n" + _findings(30, 25))
    chunks = chunk_document(doc, chunk_size=1000, overlap=150)
    assert len(chunks) >= 3
    for left, right in itertools.pairwise(chunks):
        head = right.text[: right.text.index(".") + 1]
        assert len(head) > 150
        assert left.text.endswith(head)  # the next chunk opens with the last sentence


def test_overlap_never_carries_a_sentence_longer_than_half_a_chunk():
    doc = _doc("# Results\n\n" + _findings(12, 70))
    chunks = chunk_document(doc, chunk_size=1000, overlap=150)
    assert len(chunks) >= 3
    for left, right in itertools.pairwise(chunks):
        head = right.text[: right.text.index(".") + 1]
        assert len(head) > 500
        assert head not in left.text


def test_chinese_prose_is_cut_at_sentence_ends(count):
    sentences = "".join(
        f"第{i}步：检查 TiKV 节点 tikv-{i} 的磁盘使用率并清理过期数据。" for i in range(80)
    )
    doc = _doc(f"# 磁盘\n\n{sentences}", "zh/disk.md")
    chunks = chunk_document(doc)
    assert len(chunks) >= 4
    for chunk in chunks:
        assert chunk.text.endswith("。")
        assert count(embedding_text(chunk, doc)) <= WINDOW


def test_a_header_with_many_terms_keeps_room_for_the_text(count):
    terms = ", ".join(f"term{i} alias{i}" for i in range(60))
    doc = _doc(f"---\ntitle: T\nkeywords: [{terms}]\n---\n# T\n\n" + _prose(20))
    chunks = chunk_document(doc)
    for chunk in chunks:
        embedded = embedding_text(chunk, doc)
        assert count(embedded) <= WINDOW
        header = embedded[: embedded.index("\n\n")]
        assert count(header) <= WINDOW // 2
    assert "route number 19" in chunks[-1].text


def test_a_2mb_file_without_a_paragraph_break_is_chunked_in_bounded_time(count):
    words = ("pod", "restart", "kubelet", "node", "memory", "limit", "eviction", "scheduler")
    body = "# Big\n\n" + " ".join(f"{words[i * 7 % 8]}{i % 13}" for i in range(250_000))
    assert len(body) > 2_000_000
    doc = _doc(body, "big.md")
    started = time.perf_counter()
    chunks = chunk_document(doc)
    elapsed = time.perf_counter() - started
    print(f"2 MB, one paragraph: {len(chunks)} chunks in {elapsed:.1f} s")
    assert 1500 < len(chunks) < 4000
    assert (
        "".join(c.text + " " for c in chunks).split() == doc.body.split()
    )  # no overlap: no sentence
    for chunk in chunks[:: len(chunks) // 20]:
        assert count(embedding_text(chunk, doc)) <= WINDOW


def test_the_window_comes_from_the_embedder_and_signs_the_chunking():
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_lookup_knowledge.embeddings.factory import build_embeddings
    from langchain_lookup_knowledge.settings import LookupSettings

    local = window_of(build_embeddings(LookupSettings()))
    assert local.max_tokens == WINDOW
    assert local.count(["disk full"]) == [4]  # [CLS] disk full [SEP]
    remote = window_of(
        build_embeddings(
            LookupSettings(
                embedding_provider="openai",
                openai_base_url="http://emb.invalid/v1",
                openai_max_tokens=2048,
            )
        )
    )
    assert remote.max_tokens == 2048
    assert window_of(DeterministicFakeEmbedding(size=4), 300).max_tokens == 300
    signatures = {chunking_signature(1000, 150, w.name) for w in (local, remote)}
    assert len(signatures) == 2


def test_a_smaller_window_gives_smaller_chunks():
    doc = _doc("# Routes\n\n" + _prose(40))
    small = chunk_document(doc, window=EstimatedWindow(128))
    large = chunk_document(doc, window=EstimatedWindow(512))
    assert len(small) > len(large)
    assert all(EstimatedWindow(128).count([embedding_text(c, doc)])[0] > 0 for c in small)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Set it. Then restart.", ["Set it. ", "Then restart."]),
        ("Use e.g. curl. Or wget.", ["Use e.g. curl. ", "Or wget."]),
        ("Version v1.2 is out. Upgrade now.", ["Version v1.2 is out. ", "Upgrade now."]),
        ("Call J. Smith today.", ["Call J. Smith today."]),
        ("Edit config.yaml and restart.", ["Edit config.yaml and restart."]),
        ("先停止服务。再重启！好了吗？是的", ["先停止服务。", "再重启！", "好了吗？", "是的"]),
        ("如果 a != b 就退出。", ["如果 a != b 就退出。"]),
    ],
)
def test_sentence_rule(text, expected):
    assert [text[s:e] for s, e in sentence_spans(text)] == expected


def test_chunk_texts_are_the_documents_own_text():
    doc = _doc(PLUGIN_DOC)
    normalized = re.sub(r"\s+", " ", doc.body)
    for chunk in chunk_document(doc):
        for part in chunk.text.split("\n\n"):
            assert re.sub(r"\s+", " ", part) in normalized
