"""Property (hypothesis): a block's hit-reason contributions add up to its ``score``, and so do
the leading numbers of the block's "why" (``contextPack.blocks[].why``, to their rounding).

Whatever the candidates (dense, hybrid or BM25 labels; several attempts finding the same chunk;
the retry's ranks of record or not) and whatever L0 matched, the README's promise holds.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.core.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.context_pack import block_why
from langchain_lookup_knowledge.pipeline.evidence import build_evidence_blocks
from langchain_lookup_knowledge.pipeline.l0 import L0Matcher
from langchain_lookup_knowledge.pipeline.rerank import rerank

SOURCES = ["k8s/node.md", "k8s/pod.md", "db/pool.md"]
MATCHER = L0Matcher(
    [
        CatalogEntry(source="k8s/node.md", title="Node NotReady", category="kubernetes"),
        CatalogEntry(source="db/pool.md", title="Pool exhausted", category="databases"),
    ]
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    found = []
    for rank in range(1, draw(st.integers(min_value=1, max_value=12)) + 1):
        kind = draw(st.sampled_from(["dense", "hybrid", "sparse"]))
        source = draw(st.sampled_from(SOURCES))
        label = ScoreLabel(
            path=draw(st.sampled_from(["vectorstore", "sdk"])),
            metric="COSINE" if kind == "dense" else "RRF",
            raw=0.0,
            similarity=draw(unit),
            formula="",
            kind=kind,
            rank_score=None if kind == "dense" else draw(unit),
        )
        found.append(
            Candidate(
                evidence_key=f"{source}#{draw(st.integers(min_value=0, max_value=2))}",
                source=source,
                title=draw(st.sampled_from(["Node NotReady", "Pool exhausted", ""])),
                category=draw(st.sampled_from(["kubernetes", "databases", ""])),
                content=draw(st.sampled_from(["node down", "pool exhausted now", "nothing"])),
                rank=rank,
                score_label=label,
                attempt=draw(st.sampled_from(["filtered", "unfiltered_retry"])),
            )
        )
    return found


_TOP_LEVEL_COMMA = re.compile(r", (?![^()]*\))")
_NUMBER = re.compile(r"[-+]?\d+\.\d+")


def why_score_and_parts(block: Any) -> tuple[float, list[float]]:
    """The block's score to 2 decimals and the leading number of each part of its "why"."""
    parts = _TOP_LEVEL_COMMA.split(block_why(block))
    numbers = [_NUMBER.search(part) for part in parts]
    assert all(numbers), parts
    return round(block.score, 2), [float(n.group()) for n in numbers if n]


@settings(max_examples=200, deadline=None)
@given(
    found=candidates(),
    query=st.sampled_from(["node NotReady", "pool exhausted", "kubernetes node down", "x"]),
    ranks_of=st.sampled_from([None, "filtered", "unfiltered_retry"]),
)
def test_hit_reasons_add_up_to_the_score(
    found: list[Candidate], query: str, ranks_of: str | None
) -> None:
    match = MATCHER.match(query)
    scored = rerank(found, query, match, ranks_of=ranks_of)
    selection = build_evidence_blocks(
        scored, top_k=5, per_document_cap=2, min_similarity=0.0, l0_participated=True
    )
    for block in selection.blocks:
        assert sum(r.contribution for r in block.hit_reasons) == pytest.approx(block.score)
        assert [r.kind for r in block.hit_reasons].count("l1_similarity") == 1
        # the why the artifact shows: each number is rounded to 2 decimals, like the score
        score, parts = why_score_and_parts(block)
        assert sum(parts) == pytest.approx(score, abs=0.005 * (len(parts) + 1)), block
    assert set(selection.contributing_attempts) <= {c.attempt for c in found}


def test_a_fused_hits_why_shows_its_retrieval_base_not_its_similarity() -> None:
    label = ScoreLabel(
        path="sdk", metric="RRF", raw=0.17, similarity=0.5934, formula="", kind="hybrid",
        rank_score=0.9231,
    )  # fmt: skip
    hit = Candidate(
        evidence_key="disk.md#0", source="disk.md", title="Disk full", content="disk full",
        rank=1, score_label=label,
    )  # fmt: skip
    scored = rerank([hit], "disk full", None)
    block = build_evidence_blocks(
        scored, top_k=5, per_document_cap=2, min_similarity=0.0, l0_participated=False
    ).blocks[0]
    why = block_why(block)
    assert why.startswith("retrieval 0.76 (similarity 0.59, rank 0.92), query_term_coverage +0.08")
    score, parts = why_score_and_parts(block)
    assert sum(parts) == pytest.approx(score, abs=0.005 * (len(parts) + 1))
