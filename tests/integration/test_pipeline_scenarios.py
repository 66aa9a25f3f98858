"""One test per scenario of the spec (rag-knowledge-retrieval.md), named after it.

A tiny knowledge base is ingested once into real Milvus Lite with the FAKE
``DirectionEmbeddings`` (tests/fakes.py): every chunk carries a ``[[axis=weight]]`` directive,
so its similarity to a query naming that axis is exactly the weight. Rankings, the
reference-threshold decision and the retry are therefore forced by the data, not by luck.
L0 matches come from the frontmatter (unique keywords such as ``diskfill``).

Similarities in the fixture KB (axis: chunk = similarity):
    alpha:   compute/scheduler-backlog.md #0/#1/#2 = 0.90/0.88/0.86,
             compute/worker-restarts.md #0 = 0.80 (keyword restartloop, entity kubeletx)
    beta:    storage/disk-fill.md = 0.90 (keyword diskfill)
    gamma:   storage/low-vault.md = 0.38 (keyword lowvault; below reference 0.45),
             network/gamma-route.md = 0.85
    delta:   network/dns-delta.md = 0.85
    zeta:    network/quasar-hinted.md = 0.70 (keyword quasarlink), network/quasar-plain.md = 0.72
    epsilon: nothing
    storage/vault-lock.md: beta = 0.10 (keyword vaultlock; never usable evidence)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.pipeline.details import SUMMARY_CONTENT_CHARS
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.models import LookupResult
from langchain_lookup_knowledge.recording import SqlInvocationRecorder
from langchain_lookup_knowledge.store.connection import close_all_clients
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
from tests.conftest import BLOCK_KEYS, CONTRACT_KEYS
from tests.fakes import DirectionEmbeddings, WideWindowDirectionEmbeddings, call

FILLER = (
    "Operators read the service logs, compare the running configuration with the last good "
    "release and write down every change before touching production systems. "
)


def section(heading: str, directive: str, size: int = 800) -> str:
    body = (FILLER * (size // len(FILLER) + 1))[:size]
    return f"## {heading}\n\n{body.strip()} [[{directive}]]\n"


def doc(
    title: str,
    directive: str,
    *,
    keywords: list[str] | None = None,
    entities: list[str] | None = None,
    sections: list[tuple[str, str]] | None = None,
) -> str:
    front = [f"title: {title}"]
    if keywords:
        front.append(f"keywords: [{', '.join(keywords)}]")
    if entities:
        front.append(f"entities: [{', '.join(entities)}]")
    head = "---\n" + "\n".join(front) + "\n---\n"
    if sections:
        return head + f"# {title}\n\n" + "\n".join(section(h, d) for h, d in sections)
    return head + f"# {title}\n\n## Symptoms\n\n{FILLER} [[{directive}]]\n"


KB = {
    "compute/worker-restarts.md": doc(
        "Worker Restarts", "alpha=0.80", keywords=["restartloop"], entities=["kubeletx"]
    ),
    "compute/scheduler-backlog.md": doc(
        "Scheduler Backlog",
        "",
        sections=[("Queue", "alpha=0.90"), ("Workers", "alpha=0.88"), ("Limits", "alpha=0.86")],
    ),
    "storage/disk-fill.md": doc("Volume Capacity", "beta=0.90", keywords=["diskfill"]),
    "storage/low-vault.md": doc("Archive Tier", "gamma=0.38", keywords=["lowvault"]),
    "storage/vault-lock.md": doc("Lock Table", "beta=0.10", keywords=["vaultlock"]),
    "network/gamma-route.md": doc("Route Table", "gamma=0.85"),
    "network/dns-delta.md": doc("Resolver Outage", "delta=0.85"),
    "network/quasar-hinted.md": doc("Link Flap", "zeta=0.70", keywords=["quasarlink"]),
    "network/quasar-plain.md": doc("Packet Loss", "zeta=0.72"),
}


@pytest.fixture(scope="module")
def fake() -> DirectionEmbeddings:
    return WideWindowDirectionEmbeddings()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, fake) -> Iterator[LookupSettings]:
    root = tmp_path_factory.mktemp("scenario_store")
    kb = root / "kb"
    for rel, text in KB.items():
        path = kb / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settings = LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection="scenarios",
        record_invocations=False,
        per_document_cap=2,
        top_k=5,
    )
    report = ingest_folder(kb, settings, embeddings=fake, show_progress=False)
    assert sorted(report.indexed) == sorted(KB)
    assert report.chunks_written == len(KB) + 2  # scheduler-backlog has three chunks
    yield settings
    close_all_clients()


def run(store: LookupSettings, fake, query: str, **overrides: Any) -> dict[str, Any]:
    graph = build_lookup_graph(store.model_copy(update=overrides), embeddings=fake)
    return graph.invoke({"query": query})


def lookup(store: LookupSettings, fake, query: str, **overrides: Any) -> LookupResult:
    return LookupResult.model_validate(run(store, fake, query, **overrides)["result"])


@pytest.fixture
def recorded(store, fake, tmp_path):
    """Run a lookup with the SQLite recorder on; return (result, persisted row)."""
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"

    def _run(query: str, **overrides: Any) -> tuple[LookupResult, dict[str, Any]]:
        recorder = SqlInvocationRecorder(url)
        before = len(recorder.rows())
        result = lookup(
            store, fake, query, record_invocations=True, invocation_db_url=url, **overrides
        )
        rows = recorder.rows()  # newest first
        assert len(rows) == before + 1
        assert rows[0]["query"] == query
        assert result.retrieval_trace.recording["status"] == "ok"
        return result, rows[0]

    return _run


def keys(result: LookupResult) -> list[str]:
    return [b.evidence_key for b in result.evidence_blocks]


# --- L0 is a hint provider ------------------------------------------------------------------


def test_l0_produces_traceable_hint_data(store, fake):
    result = lookup(store, fake, "worker restarts restartloop kubeletx alpha")
    hints = result.l0_hints
    assert hints.matched_titles == ["Worker Restarts"]
    assert hints.matched_keywords == ["restartloop"]
    assert hints.domains == ["compute"]
    assert hints.entities == ["kubeletx"]
    as_json = result.to_json_dict()["l0Hints"]
    assert set(as_json) >= {"matchedTitles", "matchedKeywords", "domains", "entities"}


def test_l0_does_not_bypass_semantic_retrieval(store, fake):
    result = lookup(store, fake, "alpha restartloop")
    assert result.l0_hints.matched_sources == ["compute/worker-restarts.md"]
    attempts = result.retrieval_trace.attempts
    assert len(attempts) >= 1
    assert attempts[0].candidates > 0
    assert result.found
    assert result.evidence_blocks[0].hit_reasons[0].kind == "l1_similarity"

    disabled = lookup(store, fake, "alpha restartloop", l1_enabled=False)
    assert disabled.retrieval_trace.attempts == []
    assert disabled.evidence_blocks == []
    assert not disabled.found
    assert disabled.evidence_status == "no_evidence"
    assert disabled.l0_hints.matched_keywords == ["restartloop"]  # hints still traced


def test_l0_docs_never_become_evidence(store, fake):
    # vault-lock.md matches L0 by keyword but its chunk is not similar to the query.
    result = lookup(store, fake, "epsilon vaultlock")
    assert result.l0_hints.matched_sources == ["storage/vault-lock.md"]
    assert not result.found
    assert result.evidence_blocks == []
    assert result.context_pack.included_sources == []
    assert "storage/vault-lock.md" not in result.context_pack.text
    assert result.retrieval_trace.final_count == 0

    only_l0 = lookup(store, fake, "epsilon vaultlock", l1_enabled=False)
    assert only_l0.evidence_blocks == []
    assert only_l0.l0_hints.matched_keywords == ["vaultlock"]


# --- L0 domain as an optional L1 filter ----------------------------------------------------


def test_single_domain_filter(store, fake):
    result = lookup(store, fake, "alpha restartloop")
    assert result.l0_hints.domains == ["compute"]
    first = result.retrieval_trace.attempts[0]
    assert first.name == "filtered"
    assert first.filter is not None
    assert 'category == "compute"' in first.filter
    assert {b.category for b in result.evidence_blocks} == {"compute"}


@pytest.mark.parametrize(
    ("query", "domains"),
    [("alpha", []), ("alpha restartloop diskfill", ["compute", "storage"])],
    ids=["zero_domains", "two_domains"],
)
def test_ambiguous_domain_fallback(store, fake, query, domains):
    result = lookup(store, fake, query)
    assert result.l0_hints.domains == domains
    attempts = result.retrieval_trace.attempts
    assert [a.name for a in attempts] == ["unfiltered"]
    assert attempts[0].filter is None
    assert result.retrieval_trace.fallback_reason is None


# --- persisted L0 hints ---------------------------------------------------------------------


def test_retrieval_details_include_l0_hints(recorded):
    _, row = recorded("worker restarts restartloop kubeletx alpha")
    details = row["retrieval_details"]
    assert details["l0_matched_titles"] == ["Worker Restarts"]
    assert details["l0_matched_keywords"] == ["restartloop"]
    assert details["l0_domains"] == ["compute"]
    assert details["l0_entities"] == ["kubeletx"]
    assert details["query_transform"]["category_filter"] == "compute"


def test_retrieval_layer_reflects_cooperating_retrieval(recorded):
    result, row = recorded("alpha restartloop")
    hinted = next(b for b in result.evidence_blocks if b.source == "compute/worker-restarts.md")
    assert hinted.retrieval_layer == "L0+L1"
    assert any(r.kind.startswith("l0_") for r in hinted.hit_reasons)
    assert result.retrieval_layer == "L0+L1"
    assert row["retrieval_layer"] == "L0+L1"
    assert row["retrieval_details"]["retrieval_layer"] == "L0+L1"

    # Without L0 hints the same kind of lookup is plain L1.
    plain, plain_row = recorded("alpha")
    assert plain.l0_hints.empty
    assert {b.retrieval_layer for b in plain.evidence_blocks} == {"L1"}
    assert plain_row["retrieval_layer"] == "L1"


# --- evidence blocks ------------------------------------------------------------------------


def test_evidence_block_contains_source_metadata(store, fake):
    result = lookup(store, fake, "alpha")
    assert result.found
    block = next(
        b for b in result.evidence_blocks if b.evidence_key == "compute/scheduler-backlog.md#1"
    )
    assert block.source == "compute/scheduler-backlog.md"
    assert block.title == "Scheduler Backlog"
    assert block.breadcrumb == "Scheduler Backlog > Workers"
    assert block.category == "compute"
    assert block.retrieval_layer == "L1"
    assert "[[alpha=0.88]]" in block.content
    assert block.hit_reasons
    assert block.hit_reasons[0].kind == "l1_similarity"
    assert block.score_label is not None
    assert block.score_label.similarity == pytest.approx(0.88, abs=1e-3)
    for other in result.evidence_blocks:
        assert other.source
        assert other.title
        assert other.breadcrumb
        assert other.content
        assert other.hit_reasons
    wire = result.to_json_dict()["evidenceBlocks"][0]
    assert set(wire) >= BLOCK_KEYS


def test_evidence_blocks_are_primary_contract(store, fake):
    result = lookup(store, fake, "alpha")
    wire = result.to_json_dict()
    assert "primary" not in wire
    assert "supplement" not in wire
    assert not any("primary" in k.lower() or "supplement" in k.lower() for k in wire)
    # The agent-facing text is made of the evidence blocks (their sources and contents), best
    # first; the pack names each shown block's evidence key, which the text itself leaves out.
    shown = result.context_pack.blocks
    assert shown
    keys = [block.evidence_key for block in result.evidence_blocks]
    assert [packed.evidence_key for packed in shown] == keys[: len(shown)]
    for packed in shown:
        assert f"source: {packed.source}\n" in result.context_pack.text
        assert packed.evidence_key not in result.context_pack.text
    tool = create_lookup_knowledge_tool(store, embeddings=fake)
    message = tool.invoke(call("alpha", "c1"))
    assert result.context_pack.text in message.content
    assert message.artifact["evidenceBlocks"] == wire["evidenceBlocks"]


# --- dedup ------------------------------------------------------------------------------------


def test_chunk_level_dedup_keeps_distinct_chunks(store, fake):
    result = lookup(store, fake, "alpha")
    assert keys(result)[:2] == ["compute/scheduler-backlog.md#0", "compute/scheduler-backlog.md#1"]
    same_source = [b for b in result.evidence_blocks if b.source == "compute/scheduler-backlog.md"]
    assert len(same_source) == 2  # distinct chunks kept, then the per-document cap of 2
    assert "compute/scheduler-backlog.md#2" not in keys(result)
    assert "compute/worker-restarts.md#0" in keys(result)
    assert len(set(keys(result))) == len(keys(result))


def test_same_evidence_key_collapses_to_one_block_whose_reasons_add_up(store, fake):
    # The filtered attempt (storage) and the unfiltered retry both return low-vault.md#0.
    result = lookup(store, fake, "gamma lowvault")
    trace = result.retrieval_trace
    assert [a.name for a in trace.attempts] == ["filtered", "unfiltered_retry"]
    assert keys(result).count("storage/low-vault.md#0") == 1
    block = next(b for b in result.evidence_blocks if b.evidence_key == "storage/low-vault.md#0")
    [similarity] = [r for r in block.hit_reasons if r.kind == "l1_similarity"]  # the best one's
    assert sum(r.contribution for r in block.hit_reasons) == pytest.approx(block.score)
    assert any(r.kind == "l0_keyword" for r in block.hit_reasons)
    # a deliberate fusion: the trace names the attempts whose candidates became blocks
    assert trace.selected_attempt == "unfiltered_retry"
    attempt = similarity.detail.rsplit("attempt=", 1)[1]
    assert attempt in trace.contributing_attempts
    assert set(trace.contributing_attempts) <= {"filtered", "unfiltered_retry"}


def test_after_an_unreliable_filtered_attempt_its_domain_boosts_nothing(store, fake):
    # storage (the filtered attempt's category, from the lowvault keyword) was judged weak
    result = lookup(store, fake, "gamma lowvault")
    assert [a.name for a in result.retrieval_trace.attempts] == ["filtered", "unfiltered_retry"]
    reasons = [r for b in result.evidence_blocks for r in b.hit_reasons]
    assert "l0_domain" not in [r.kind for r in reasons]
    assert all(
        r.detail.endswith("attempt=unfiltered_retry") for r in reasons if r.kind == "l1_similarity"
    )
    trusting = lookup(store, fake, "gamma lowvault", l0_retry_guard=False)
    assert "l0_domain" in [r.kind for b in trusting.evidence_blocks for r in b.hit_reasons]


def test_postprocess_count_tracking(recorded):
    result, row = recorded("gamma lowvault")
    details = row["retrieval_details"]
    retry_candidates = sum(a.candidates for a in result.retrieval_trace.attempts)
    assert details["candidate_count"] == retry_candidates
    assert details["final_count"] == len(result.evidence_blocks)
    assert details["candidate_count"] > details["final_count"] > 0
    assert result.retrieval_trace.candidate_count == details["candidate_count"]
    assert result.retrieval_trace.final_count == details["final_count"]


# --- persisted evidence summaries ---------------------------------------------------------


def test_evidence_summaries_are_persisted(recorded):
    result, row = recorded("alpha restartloop")
    summaries = row["retrieval_details"]["evidence_blocks"]
    assert [s["source"] for s in summaries] == [b.source for b in result.evidence_blocks]
    for summary, block in zip(summaries, result.evidence_blocks, strict=True):
        assert summary["title"] == block.title
        assert summary["retrieval_layer"] == block.retrieval_layer
        assert summary["score"] == pytest.approx(block.score, abs=1e-3)
        assert summary["hit_reasons"]
        assert any("l1_similarity" in r for r in summary["hit_reasons"])


def test_full_content_not_duplicated_into_details(recorded):
    result, row = recorded("alpha")
    details = row["retrieval_details"]
    long_blocks = [b for b in result.evidence_blocks if len(b.content) > SUMMARY_CONTENT_CHARS]
    assert long_blocks  # the scheduler chunks are ~800 characters
    stored = json.dumps(details, ensure_ascii=False)
    for block in long_blocks:
        assert block.content not in stored
    for summary in details["evidence_blocks"]:
        assert "content" not in summary
        assert len(summary.get("content_preview", "")) <= SUMMARY_CONTENT_CHARS
    assert result.context_pack.text not in stored


# --- filtered retrieval and its retry ------------------------------------------------------


def test_filtered_retrieval_succeeds_without_retry(store, fake):
    result = lookup(store, fake, "beta diskfill")
    trace = result.retrieval_trace
    assert [a.name for a in trace.attempts] == ["filtered"]
    assert trace.attempts[0].status == "ok"
    assert trace.attempts[0].top_similarity >= store.reference_threshold
    assert trace.fallback_reason is None
    assert trace.selected_attempt == "filtered"
    assert keys(result)[0] == "storage/disk-fill.md#0"


def test_filtered_no_evidence_retries_without_filter(store, fake):
    result = lookup(store, fake, "delta diskfill")
    trace = result.retrieval_trace
    assert [a.name for a in trace.attempts] == ["filtered", "unfiltered_retry"]
    assert 'category == "storage"' in trace.attempts[0].filter
    assert trace.attempts[0].status == "empty"
    assert trace.attempts[1].filter is None  # no L0 filter on the retry
    assert trace.fallback_reason == "filtered_vector_no_evidence"
    assert trace.selected_attempt == "unfiltered_retry"
    assert result.found
    assert keys(result)[0] == "network/dns-delta.md#0"


@pytest.mark.parametrize(
    ("mode", "retrieval_mode"),
    [("auto", "hybrid"), ("sdk", "hybrid"), ("vectorstore", "dense"), ("sdk", "dense")],
)
def test_filtered_low_quality_retries_without_filter(store, fake, mode, retrieval_mode):
    result = lookup(store, fake, "gamma lowvault", mode=mode, retrieval_mode=retrieval_mode)
    trace = result.retrieval_trace
    assert trace.path_used == ("sdk" if mode == "sdk" else "vectorstore")
    assert trace.retrieval_mode == retrieval_mode
    first, retry = trace.attempts
    assert first.name == "filtered"
    assert first.status == "low_quality"
    assert first.top_similarity == pytest.approx(0.38, abs=1e-3)
    assert first.top_similarity < store.reference_threshold
    assert retry.name == "unfiltered_retry"
    assert retry.filter is None
    assert retry.top_similarity == pytest.approx(0.85, abs=1e-3)
    assert trace.fallback_reason == "filtered_vector_low_quality"
    assert keys(result)[0] == "network/gamma-route.md#0"


def test_both_attempts_fail_returns_no_evidence(store, fake):
    result = lookup(store, fake, "epsilon diskfill")
    trace = result.retrieval_trace
    assert [a.name for a in trace.attempts] == ["filtered", "unfiltered_retry"]
    assert all(a.status == "empty" for a in trace.attempts)
    assert result.found is False
    assert result.evidence_status == "no_evidence"
    assert result.evidence_blocks == []
    assert "storage/disk-fill.md" not in result.context_pack.text  # the L0 match is no fact
    assert result.l0_hints.matched_keywords == ["diskfill"]


# --- the result contract --------------------------------------------------------------------


def test_evidence_result_contains_context_and_traces(store, fake):
    wire = lookup(store, fake, "alpha restartloop").to_json_dict()
    assert set(wire) >= CONTRACT_KEYS
    assert wire["found"] is True
    assert wire["evidenceStatus"] == "evidence"
    assert wire["evidenceBlocks"]
    assert wire["contextPack"]["text"]
    assert wire["rerankTrace"]
    assert wire["relevanceLevel"] in {"high", "medium", "low"}
    assert wire["completenessHint"]
    attempt = wire["retrievalTrace"]["attempts"][0]
    for key in ("name", "filter", "path", "candidates", "topSimilarity", "latencyMs", "status"):
        assert key in attempt
    assert "selectedAttempt" in wire["retrievalTrace"]
    assert "fallbackReason" in wire["retrievalTrace"]


def test_no_evidence_result_keeps_traceability(store, fake):
    result = lookup(store, fake, "epsilon")
    wire = result.to_json_dict()
    assert wire["found"] is False
    assert wire["evidenceStatus"] == "no_evidence"
    assert "no knowledge evidence" in wire["message"].lower()
    attempts = wire["retrievalTrace"]["attempts"]
    assert attempts
    assert attempts[0]["path"] in {"vectorstore", "sdk"}
    assert attempts[0]["candidates"] > 0  # searched, nothing usable
    assert attempts[0]["status"] == "empty"


# --- context pack ---------------------------------------------------------------------------


def test_context_pack_preserves_source_metadata(store, fake):
    result = lookup(store, fake, "alpha restartloop")
    pack = result.context_pack
    shown = {b.evidence_key: b for b in pack.blocks}
    left_out = {b.evidence_key for b in pack.left_out}
    assert set(shown) | left_out == {b.evidence_key for b in result.evidence_blocks}
    for block in result.evidence_blocks:
        if block.evidence_key not in shown:
            continue
        assert f"source: {block.source}\n" in pack.text
        assert block.title in pack.text
        assert block.breadcrumb.split(" > ")[-1] in pack.text
        packed = shown[block.evidence_key]  # what the text does not show travels beside it
        assert (packed.source, packed.title, packed.breadcrumb) == (
            block.source,
            block.title,
            block.breadcrumb,
        )
        assert packed.score == block.score
        assert "similarity" in packed.why  # the hit reasons travel with the block
    assert pack.included_sources == list(dict.fromkeys(b.source for b in pack.blocks))


def test_context_pack_respects_budget(store, fake):
    budget = 700
    result = lookup(store, fake, "alpha", context_budget_chars=budget, relevance_knee=0.0)
    pack = result.context_pack
    contents = sum(len(b.content) for b in result.evidence_blocks)
    assert contents > budget
    assert pack.used == len(pack.text) <= budget
    assert pack.truncated
    assert "…[truncated]" in pack.text
    # Source metadata of every included block is whole; whole blocks that do not fit are omitted.
    assert pack.included_sources
    for source in pack.included_sources:
        assert f"source: {source}\n" in pack.text
    all_sources = list(dict.fromkeys(b.source for b in result.evidence_blocks))
    assert pack.included_sources + pack.omitted_sources == all_sources
    for source in pack.omitted_sources:
        assert source not in pack.text
    assert {b.reason for b in pack.left_out} <= {"budget"}


def test_context_pack_truncates_content_not_metadata(store, fake):
    result = lookup(store, fake, "alpha", context_budget_chars=400)
    pack = result.context_pack
    assert pack.used <= 400
    assert pack.truncated
    top = result.evidence_blocks[0]
    assert pack.included_sources[0] == top.source
    header, _, body = pack.text.partition(f"source: {top.source}\n")
    assert top.title in header
    assert pack.blocks[0].why.startswith("similarity 0.90")  # hit reasons kept whole
    assert body.split("\n\n")[0].rstrip().endswith("…[truncated]")
    assert len(body) < len(top.content)


# --- rerank -----------------------------------------------------------------------------------


def test_rerank_trace_records_score_contributions(store, fake):
    result = lookup(store, fake, "alpha restartloop")
    trace = result.rerank_trace
    assert [e.rank for e in trace] == list(range(1, len(result.evidence_blocks) + 1))
    assert [e.evidence_key for e in trace] == keys(result)
    for entry, block in zip(trace, result.evidence_blocks, strict=True):
        assert entry.source == block.source
        # The base is the L1 score of record: the similarity for a dense hit, the similarity
        # mixed with the fused rank for a hybrid one; it is the l1_similarity reason's value.
        l1_reason = block.hit_reasons[0]
        assert l1_reason.kind == "l1_similarity"
        assert entry.base_score == pytest.approx(l1_reason.contribution, abs=1e-6)
        assert entry.final_score == pytest.approx(
            entry.base_score + sum(b.contribution for b in entry.boosts), abs=1e-6
        )
    hinted = next(e for e in trace if e.source == "compute/worker-restarts.md")
    assert {"l0_keyword", "l0_domain"} <= {b.kind for b in hinted.boosts}
    assert all(b.contribution > 0 for b in hinted.boosts)
    hinted_block = next(b for b in result.evidence_blocks if b.source == hinted.source)
    assert hinted_block.score_label.similarity == pytest.approx(0.80, abs=1e-3)


def test_query_hints_influence_rerank_without_becoming_evidence(store, fake):
    result = lookup(store, fake, "zeta quasarlink")
    hinted, plain = result.evidence_blocks[:2]
    assert hinted.source == "network/quasar-hinted.md"
    assert plain.source == "network/quasar-plain.md"
    assert hinted.score_label.similarity < plain.score_label.similarity  # L1 alone: plain first
    assert hinted.score > plain.score  # the L0 keyword hint lifted it
    keyword = [r for r in hinted.hit_reasons if r.kind == "l0_keyword"]
    assert keyword
    assert keyword[0].contribution > 0
    assert "quasarlink" in keyword[0].detail
    assert not any(r.kind == "l0_keyword" for r in plain.hit_reasons)
    # The hint is a reason, not a fact: the block's content is the indexed chunk itself.
    assert "[[zeta=0.70]]" in hinted.content
    assert all(b.evidence_key.startswith(b.source + "#") for b in result.evidence_blocks)


# --- persisted modular details --------------------------------------------------------------


def test_evidence_lookup_persists_modular_detail_keys(recorded):
    result, row = recorded("alpha restartloop")
    assert result.found
    details = row["retrieval_details"]
    for key in (
        "query_transform",
        "retrieval_trace",
        "context_pack_summary",
        "rerank_trace",
        "evidence_blocks",
    ):
        assert details[key], key
    assert details["query_transform"]["query"] == "alpha restartloop"
    assert (
        details["context_pack_summary"]["included_sources"] == result.context_pack.included_sources
    )
    assert row["found"] is True
    assert row["evidence_status"] == "evidence"


def test_fallback_lookup_persists_fallback_reason(recorded):
    _, row = recorded("delta diskfill")
    details = row["retrieval_details"]
    assert details["fallback_reason"] == "filtered_vector_no_evidence"
    assert details["retrieval_trace"]["selectedAttempt"] == "unfiltered_retry"
    assert details["retrieval_trace"]["fallbackReason"] == "filtered_vector_no_evidence"
    names = [a["name"] for a in details["retrieval_trace"]["attempts"]]
    assert names == ["filtered", "unfiltered_retry"]


def test_no_evidence_lookup_still_preserves_trace(recorded):
    result, row = recorded("epsilon diskfill")
    assert not result.found
    details = row["retrieval_details"]
    attempts = details["retrieval_trace"]["attempts"]
    assert [a["name"] for a in attempts] == ["filtered", "unfiltered_retry"]
    assert details["evidence_blocks"] == []
    assert details["final_count"] == 0
    assert row["found"] is False
    assert row["evidence_status"] == "no_evidence"
    stored = json.dumps(details)
    assert "[[beta=0.90]]" not in stored  # no chunk content in the trace


# --- modular pipeline -----------------------------------------------------------------------


def test_pipeline_components_execute_in_order(store, fake, tmp_path):
    settings = store.model_copy(
        update={
            "record_invocations": True,
            "invocation_db_url": f"sqlite:///{tmp_path / 'records.sqlite3'}",
        }
    )
    graph = build_lookup_graph(settings, embeddings=fake)
    order = [
        node
        for update in graph.stream({"query": "gamma lowvault"}, stream_mode="updates")
        for node in update
    ]
    assert order[0] == "transform_query"
    assert order[1] in {"retrieve_vectorstore", "retrieve_sdk"}
    assert order[-4:] == ["postprocess", "pack_context", "assemble_result", "record_invocation"]
    assert "retry_unfiltered" in order
    assert order.index("retry_unfiltered") < order.index("postprocess")
    # Without a retry the same order holds.
    plain = [
        node
        for update in graph.stream({"query": "alpha"}, stream_mode="updates")
        for node in update
    ]
    assert plain == [
        "transform_query",
        plain[1],
        "postprocess",
        "pack_context",
        "assemble_result",
        "record_invocation",
    ]


def test_tool_boundary_remains_explicit(store, fake):
    tool = create_lookup_knowledge_tool(store, embeddings=fake)
    assert tool.name == "lookup_knowledge"
    assert set(tool.args) == {"query"}
    schema = tool.tool_call_schema.model_json_schema()
    assert schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query"}
    message = tool.invoke(call("beta diskfill", "call-1"))
    assert message.tool_call_id == "call-1"
    assert "storage/disk-fill.md" in message.content
    assert message.artifact["found"] is True
    assert message.artifact["evidenceBlocks"][0]["source"] == "storage/disk-fill.md"


# --- end to end on the bundled sample knowledge base (real embedder) ------------------------


def test_sample_kb_end_to_end_contract(sample_kb_store, real_embeddings):
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings)
    result = LookupResult.model_validate(
        graph.invoke({"query": "postgres replica is falling behind the primary"})["result"]
    )
    assert result.found
    assert result.evidence_blocks[0].source == "databases/postgresql-replication-lag.md"
    assert result.evidence_blocks[0].title
    assert result.context_pack.included_sources[0] == "databases/postgresql-replication-lag.md"
