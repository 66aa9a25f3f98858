"""docs/architecture.md draws the real lookup graph: it fails when the drawing and the code differ,
and when a node of the graph has no paragraph of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langchain_lookup_knowledge import LookupSettings, build_lookup_graph
from langchain_lookup_knowledge.pipeline.graph import NODE_INPUTS

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


@pytest.fixture
def drawing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path))  # building touches nothing
    return build_lookup_graph(LookupSettings()).get_graph().draw_mermaid()


def mermaid_block() -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    blocks = re.findall(r"^```mermaid\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) == 1, "docs/architecture.md holds one mermaid drawing"
    return blocks[0]


def test_the_drawing_is_the_graph(drawing: str) -> None:
    assert mermaid_block() == drawing, (
        "docs/architecture.md's mermaid block differs from the graph: replace it with the "
        "output of `build_lookup_graph(LookupSettings()).get_graph().draw_mermaid()`"
    )


def test_every_node_has_its_paragraph() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [
        node for node in NODE_INPUTS if f"**`{node}`**" not in text and f"`{node}`" not in text
    ]
    assert not missing, f"docs/architecture.md does not describe the nodes {missing}"
    for node in NODE_INPUTS:
        assert f"({node})" in mermaid_block(), node
