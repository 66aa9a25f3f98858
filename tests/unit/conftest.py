"""Unit tests run without Milvus and without an embedding model: both are refused here.

A test that opens a Milvus client (Lite or server) or loads an ONNX model belongs in
``tests/integration``; this guard makes such a test fail loudly instead of running slowly.
"""

from __future__ import annotations

import onnxruntime
import pymilvus
import pytest


def _refuse(what: str):  # type: ignore[no-untyped-def]
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a unit test opened {what}: move it to tests/integration")

    return refuse


@pytest.fixture(autouse=True)
def no_milvus_and_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pymilvus.MilvusClient, "__init__", _refuse("a Milvus client"))
    monkeypatch.setattr(onnxruntime.InferenceSession, "__init__", _refuse("an ONNX model"))
