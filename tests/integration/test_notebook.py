"""``notebooks/quickstart.ipynb`` runs top to bottom, offline, in a kernel on this interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"

pytestmark = pytest.mark.slow


def kernel_manager() -> AsyncKernelManager:
    """A ``python3`` kernel on *this* interpreter (the venv), whatever other kernelspecs exist.

    With no kernel directories to search, ipykernel's built-in spec is used, whose argv starts
    with ``sys.executable``; a user-wide "python3" spec for another Python cannot shadow it.
    """
    specs = KernelSpecManager(kernel_dirs=[])
    manager = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)
    assert manager.kernel_spec is not None
    assert manager.kernel_spec.argv[0] == sys.executable
    return manager


def outputs_text(nb: nbformat.NotebookNode) -> str:
    """Every cell's outputs as text: a cell's stdout in one piece and its stderr in another
    (a kernel under load may send one printed line as several stream messages, with a log
    line on stderr between them), then its rich outputs."""
    parts = []
    for cell in nb.cells:
        outputs = cell.get("outputs", [])
        for stream in ("stdout", "stderr"):
            parts.append("".join(o.get("text", "") for o in outputs if o.get("name") == stream))
        for out in outputs:
            if out.get("output_type") != "stream":
                parts.append(out.get("text", ""))
                parts.extend(str(v) for v in out.get("data", {}).values())
    return "\n".join(parts)


def test_quickstart_notebook_executes_offline(tmp_path, monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), (
        "commit the notebook without outputs"
    )
    # Point every default the package could fall back to at a throw-away folder.
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path / "defaults"))
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    client = NotebookClient(
        nb,
        km=kernel_manager(),
        timeout=240,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()

    text = outputs_text(nb)
    assert "chunks written" in text
    assert "second run: 0 chunks written" in text
    assert "status: success" in text
    assert "source: kubernetes/pod-crashloopbackoff.md" in text
    assert "l1_search_vectorstore [retriever] -> " in text
    assert "record_invocation [chain]" in text
    assert "'evidence_blocks'" in text
    assert "transform_query -.-> retrieve_vectorstore" in text  # the Mermaid drawing
    assert "retrieve_vectorstore -.-> retrieve_sdk" in text
    assert "According to networking/tls-certificate-expiry.md" in text
    assert "error - lookup_knowledge needs a non-empty `query`" in text
    assert not (tmp_path / "defaults").exists()  # nothing fell back to the defaults
