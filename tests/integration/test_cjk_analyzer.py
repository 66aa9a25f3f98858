"""A Chinese knowledge base full of code and config examples still gets the jieba analyzer.

APISIX's Chinese manual is 0.24 CJK by characters (its JSON, YAML and curl examples are Latin):
a share-of-characters cut-off gave it the ``standard`` analyzer, which keeps a Chinese sentence
as one token, so BM25 could not match a word of it and the CJK rule never applied. Vectors come
from the FAKE deterministic ``DirectionEmbeddings`` (tests/fakes.py), so BM25 alone decides.
"""

from __future__ import annotations

from pathlib import Path

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.lexical import LexicalForm
from langchain_lookup_knowledge.core.text import cjk_count, latin_word_count
from langchain_lookup_knowledge.evaluation.baseline import bm25_analyzer_params
from langchain_lookup_knowledge.ingest import choose_analyzer, ingest_folder
from langchain_lookup_knowledge.knowledge.chunking import cjk_ratio
from langchain_lookup_knowledge.knowledge.documents import parse_document
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.models import LookupResult
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.schema import describe_chunk_collection
from tests.fakes import DirectionEmbeddings
from tests.kb_helpers import every_block_judge_model, write

CONFIG = (
    "```json\n"
    '{"uri": "/index.html", "plugins": {"limit-count": {"count": 2, "time_window": 60, '
    '"rejected_code": 503, "key_type": "var", "key": "remote_addr"}}, "upstream": '
    '{"type": "roundrobin", "nodes": {"127.0.0.1:1980": 1}}}\n'
    "```\n"
)
KB = {
    "plugins/limit-count.md": (
        "---\ntitle: limit-count\n---\n# limit-count\n\n## 描述\n\n"
        "在指定的时间范围内限制请求总数，超过阈值后拒绝请求并记录 RateLimitExceeded 事件。"
        "可以按客户端地址、消费者或者请求头"
        "分别计数，多个网关节点之间可以通过共享存储统一计数。\n\n## 启用插件\n\n"
        "下面的示例在路由上启用插件，每个客户端地址一分钟内最多两个请求：\n\n" + CONFIG * 2
    ),
    "plugins/ip-restriction.md": (
        "---\ntitle: ip-restriction\n---\n# ip-restriction\n\n## 描述\n\n"
        "通过白名单或黑名单的网段允许或者禁止访问。名单可以写单个地址，也可以写网段；同时配置"
        "白名单和黑名单时只有白名单生效，被拒绝的请求返回自定义的状态码和提示信息。\n\n"
        "## 启用插件\n\n"
        "下面的示例在路由上启用插件，只允许内网网段访问这个路由的所有请求：\n\n" + CONFIG * 2
    ),
}


def _docs() -> list:
    return [parse_document(text.encode(), rel) for rel, text in KB.items()]


def test_a_chinese_manual_with_code_gets_jieba_english_text_does_not():
    sample = "".join(d.body for d in _docs())
    assert cjk_ratio(sample) < 0.3  # what the old cut-off read as "not Chinese"
    assert cjk_count(sample) > latin_word_count(sample)
    assert choose_analyzer(LookupSettings(), _docs()) == "jieba"
    assert bm25_analyzer_params([sample]) == {"tokenizer": "jieba"}
    english = parse_document(b"# Disk full\n\nThe node disk is full: rotate logs.", "disk.md")
    assert choose_analyzer(LookupSettings(), [english]) == "standard"
    assert bm25_analyzer_params([english.body]) == {"type": "standard"}
    assert choose_analyzer(LookupSettings(bm25_analyzer="standard"), _docs()) == "standard"


def test_a_chinese_question_finds_its_document_by_bm25(tmp_path: Path):
    kb = tmp_path / "kb"
    for rel, text in KB.items():
        write(kb, rel, text)
    settings = LookupSettings(
        data_dir=tmp_path,
        milvus_uri=str(tmp_path / "milvus.db"),
        collection="zh",
        record_invocations=False,
        judge_model_file=every_block_judge_model(tmp_path),
    )
    fake = DirectionEmbeddings()
    ingest_folder(kb, settings, embeddings=fake, show_progress=False)
    try:
        layout = describe_chunk_collection(open_client(settings), settings, None)
        assert layout.analyzer == "jieba"
        # English identifiers inside the Chinese text also index their words.
        assert layout.lexical_form == LexicalForm(stem=False, split_identifiers=True)
        graph = build_lookup_graph(settings, embeddings=fake)
        for question, expected in (
            ("怎么限制请求总数", "plugins/limit-count.md"),
            ("禁止某个网段访问", "plugins/ip-restriction.md"),
            ("日志里一直有 rate limit exceeded", "plugins/limit-count.md"),
        ):
            result = LookupResult.model_validate(graph.invoke({"query": question})["result"])
            assert result.evidence_blocks, question
            assert result.evidence_blocks[0].source == expected
            assert any("CJK question" in note for note in result.retrieval_trace.notes)
    finally:
        close_all_clients()
