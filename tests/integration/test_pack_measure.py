"""The context pack of a lookup: the budget is measured once per lookup (the steps that grow
blocks and the pack read one measure, carried to the grown blocks), and the packer reads the
cleaned question, as every other step does (real Milvus Lite, the real embedder)."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.pipeline import nodes
from langchain_lookup_knowledge.pipeline.context_pack import PackMeasure, pack_context
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

QUESTION = "postgres read replica lag keeps growing"


def _lookup(settings, embeddings, query: str) -> LookupResult:
    graph = build_lookup_graph(
        settings.model_copy(update={"record_invocations": False}), embeddings=embeddings
    )
    return LookupResult.model_validate(graph.invoke({"query": query})["result"])


@pytest.mark.parametrize("expand", [0, 600])
def test_the_budget_is_measured_once_per_lookup(
    sample_kb_store, real_embeddings, monkeypatch: pytest.MonkeyPatch, expand: int
):
    """Table rows, the document's best chunks and (here too) small-to-big each read the room the
    pack leaves; they read it from one measure, and the pack packs with it: one measurement,
    and the same text as a pack that measures for itself."""
    measured: list[int] = []
    real_of = PackMeasure.of.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):
        measured.append(1)
        return real_of(cls, *args, **kwargs)

    monkeypatch.setattr(PackMeasure, "of", classmethod(counted))
    settings = sample_kb_store.model_copy(update={"section_expand_chars": expand})
    assert settings.table_rows > 0
    assert settings.best_document_chunks > 0
    result = _lookup(settings, real_embeddings, QUESTION)
    assert result.found is True
    assert measured == [1]
    pack = result.context_pack
    shown = len(pack.blocks) + sum(1 for b in pack.left_out if b.reason == "budget")
    again = pack_context(
        result.evidence_blocks,
        settings.context_budget_chars,
        shown=shown,
        knee=pack.knee,
    )
    assert again.text == pack.text


def test_the_packer_reads_the_cleaned_question(
    sample_kb_store, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """A question with a control character is cleaned (a space) before it is searched; the
    packer (whose cut shows the lines holding the question's terms) reads that cleaned text,
    not the raw one."""
    raw = QUESTION.replace("lag ", "lag\x00")
    assert raw != QUESTION
    queries: list[str] = []
    real_pack = nodes.pack_agent_context

    def recorded(blocks, settings, query="", measure=None):
        queries.append(query)
        return real_pack(blocks, settings, query, measure)

    monkeypatch.setattr(nodes, "pack_agent_context", recorded)
    result = _lookup(sample_kb_store, real_embeddings, raw)
    assert result.query == QUESTION
    assert queries == [QUESTION]
