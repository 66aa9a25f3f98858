"""Best chunks of the shown documents: which chunks of a shown document are added, where, and
only in the room the context budget has left."""

from __future__ import annotations

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.core.term_match import query_terms
from langchain_lookup_knowledge.pipeline.document_chunks import (
    MIN_EXCERPT,
    add_document_chunks,
    best_chunks,
    document_chunks_for_agent,
    excerpt,
)
from langchain_lookup_knowledge.pipeline.evidence import EvidenceSelection
from langchain_lookup_knowledge.pipeline.excerpt import MARKER
from langchain_lookup_knowledge.pipeline.expand import shown_size
from langchain_lookup_knowledge.pipeline.knee import agent_spare_room, pack_agent_context

QUESTION = "leader 读压力太大，想让查询读 follower 副本"
ANSWER = "SET SESSION tidb_replica_read = 'follower';"
FOLLOWER_READ = [
    (0, "Follower Read", "Follower Read 让 follower 副本分担 leader 的读压力。"),
    (
        1,
        "Follower Read > 实现机制",
        "Follower Read 使用 ReadIndex 协议，读到 leader 已提交的数据。",
    ),
    (2, "Follower Read > 限制", "Follower Read 不支持写入。"),
    (3, "Follower Read > 使用方式", f"开启后查询读 follower 副本：\n\n```sql\n{ANSWER}\n```"),
    (4, "Follower Read > 监控", "监控面板展示 Region 的数量。"),
]


def _block(key: str, content: str, score: float) -> EvidenceBlock:
    return EvidenceBlock(
        evidence_key=key, source=key.split("#")[0], title=key, content=content, score=score
    )


def _selection(*blocks: EvidenceBlock) -> EvidenceSelection:
    return EvidenceSelection(blocks=list(blocks), final_count=len(blocks))


def _fetch(documents, asked=None):
    def fetch(sources):
        if asked is not None:
            asked.append(list(sources))
        return {s: documents[s] for s in sources if s in documents}

    return fetch


def test_the_chunk_holding_the_rarest_question_terms_comes_first():
    terms = query_terms(QUESTION)
    picks = best_chunks(FOLLOWER_READ, terms, exclude={0}, count=2)
    assert picks[0] == (3, FOLLOWER_READ[3][2])  # 查询, follower, 副本: its section is the usage
    assert all(ordinal != 0 for ordinal, _ in picks)
    # a chunk holding fewer than two of the terms is never picked, however many are asked for
    assert 4 not in [o for o, _ in best_chunks(FOLLOWER_READ, terms, exclude=set(), count=9)]
    assert best_chunks(FOLLOWER_READ, [], exclude=set(), count=2) == []


def test_the_shown_documents_answering_chunk_joins_its_first_block_in_document_order():
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9)
    other = _block("hot-spots.md#4", "读热点可以打散到多个 TiKV。", 0.8)
    selection = _selection(intro, other)
    asked: list[list[str]] = []
    grown = add_document_chunks(
        selection, _fetch({"follower-read.md": FOLLOWER_READ}, asked), 1, 2000, QUESTION
    )
    assert asked == [["follower-read.md", "hot-spots.md"]]  # one read for the shown documents
    content = grown.blocks[0].content
    assert content.startswith(FOLLOWER_READ[0][2])
    assert f"{MARKER}\n\n开启后查询读 follower 副本" in content  # chunks 1-2 left out between
    assert ANSWER in content
    assert grown.blocks[0].evidence_key == intro.evidence_key
    assert grown.blocks[0].score == intro.score
    assert grown.blocks[1] == other  # its document was not read: nothing of it to add
    assert grown.matched_blocks == [intro, other]  # the decision reads what retrieval matched


def test_a_later_blocks_document_grows_and_the_decision_still_reads_its_match():
    other = _block("hot-spots.md#4", "读热点可以打散到多个 TiKV。", 0.9)
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.8)
    selection = _selection(other, intro)
    grown = add_document_chunks(
        selection, _fetch({"follower-read.md": FOLLOWER_READ}), 1, 2000, QUESTION
    )
    assert ANSWER in grown.blocks[1].content
    assert grown.blocks[0] == other
    assert grown.matched_first is None
    assert grown.matched_blocks == [other, intro]


def test_nothing_is_added_past_the_room_and_nothing_without_room_or_chunks():
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9)
    selection = _selection(intro)
    fetch = _fetch({"follower-read.md": FOLLOWER_READ})
    for room in (MIN_EXCERPT, 200, 400):
        grown = add_document_chunks(selection, fetch, 3, room, QUESTION)
        assert shown_size(grown.blocks[0].content) - shown_size(intro.content) <= room
    assert add_document_chunks(selection, fetch, 3, 0, QUESTION) is selection
    assert add_document_chunks(selection, fetch, 0, 2000, QUESTION) is selection
    assert add_document_chunks(selection, _fetch({}), 3, 2000, QUESTION) is selection


def test_a_chunk_too_long_for_the_room_shows_the_lines_holding_the_question():
    long_chunk = "\n".join(
        [*(f"背景说明第 {i} 行，与问题无关。" for i in range(20)), "查询读 follower 副本：", ANSWER]
    )
    chunks = [FOLLOWER_READ[0], (7, "Follower Read > 使用方式", long_chunk)]
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9)
    selection = _selection(intro)
    room = 160
    grown = add_document_chunks(selection, _fetch({"follower-read.md": chunks}), 1, room, QUESTION)
    content = grown.blocks[0].content
    assert ANSWER in content
    assert "背景说明第 0 行" not in content
    assert content.count(MARKER) == 1  # the gap before the run: one marker line, not two
    assert shown_size(content) - shown_size(intro.content) <= room
    assert excerpt(long_chunk, query_terms(QUESTION), 10) is None  # no line fits


def test_a_chunk_a_block_shows_already_is_not_added_again():
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9)
    usage = _block("other.md#1", f"见 Follower Read：\n\n{FOLLOWER_READ[3][2]}", 0.8)
    selection = _selection(intro, usage)
    grown = add_document_chunks(
        selection, _fetch({"follower-read.md": FOLLOWER_READ}), 1, 2000, QUESTION
    )
    assert ANSWER not in grown.blocks[0].content


def test_a_failed_read_leaves_the_selection_as_it_was():
    selection = _selection(_block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9))

    def failing_fetch(sources):  # a fake that forces the store failure
        raise TimeoutError("store timed out")

    assert add_document_chunks(selection, failing_fetch, 3, 2000, QUESTION) is selection


def test_the_message_shows_what_it_showed_before_uncut_and_within_budget(tmp_path):
    settings = LookupSettings(
        milvus_uri=str(tmp_path / "kb.db"), context_budget_chars=700, best_document_chunks=3
    )
    blocks = [
        _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.9),
        _block("hot-spots.md#4", "读热点可以打散到多个 TiKV。" * 3, 0.8),
        _block("follower-read.md#2", FOLLOWER_READ[2][2], 0.7),
    ]
    selection = _selection(*blocks)
    room = agent_spare_room(blocks, settings)
    assert room > 0
    before = pack_agent_context(blocks, settings, QUESTION)
    fetch = _fetch({"follower-read.md": FOLLOWER_READ})
    grown = document_chunks_for_agent(selection, fetch, settings, QUESTION)
    after = pack_agent_context(grown.blocks, settings, QUESTION)
    assert ANSWER in after.text
    assert not after.truncated
    assert after.used <= settings.context_budget_chars
    assert after.used - before.used <= room
    for block in blocks:
        assert block.content in after.text.replace("> ", "").replace(">\n", "\n")
    assert grown.blocks[2] == blocks[2]  # its document grows in its first block only

    # no room left: the same selection, and so the same message
    full = settings.model_copy(update={"context_budget_chars": before.used})
    assert agent_spare_room(blocks, full) == 0
    assert document_chunks_for_agent(selection, fetch, full, QUESTION) is selection
    off = settings.model_copy(update={"best_document_chunks": 0})
    assert document_chunks_for_agent(selection, fetch, off, QUESTION) is selection


def test_a_lookup_reads_and_grows_the_first_blocks_document_only(tmp_path):
    settings = LookupSettings(milvus_uri=str(tmp_path / "kb.db"), best_document_chunks=3)
    other = _block("hot-spots.md#4", "读热点可以打散到多个 TiKV。", 0.9)
    intro = _block("follower-read.md#0", FOLLOWER_READ[0][2], 0.85)
    asked: list[list[str]] = []
    fetch = _fetch({"follower-read.md": FOLLOWER_READ, "hot-spots.md": []}, asked)
    # the answering document's block second: a lookup adds nothing to it, nor reads it
    second = document_chunks_for_agent(_selection(other, intro), fetch, settings, QUESTION)
    assert second.blocks == [other, intro]
    assert asked == [["hot-spots.md"]]
    grown = document_chunks_for_agent(_selection(intro, other), fetch, settings, QUESTION)
    assert ANSWER in grown.blocks[0].content
    assert asked[-1] == ["follower-read.md"]
