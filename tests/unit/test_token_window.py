"""The tokenizer window counts each text once: the chunker asks for the same header, block or
chunk again while it packs a document, and gets the tokenizer's own count back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.embeddings import window as window_module
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles
from langchain_lookup_knowledge.embeddings.window import HuggingFaceWindow
from langchain_lookup_knowledge.knowledge.chunking import chunk_document
from langchain_lookup_knowledge.knowledge.documents import parse_document

TOKENIZER = ModelFiles.pinned_default().tokenizer


class CountingTokenizerSpy:
    """The real tokenizer (a spy: it only counts the texts it is given)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.texts: list[str] = []

    def encode(self, text: str) -> Any:
        self.texts.append(text)
        return self.real.encode(text)

    def encode_batch_fast(self, texts: list[str]) -> Any:
        self.texts.extend(texts)
        return self.real.encode_batch_fast(texts)


def _spied(max_tokens: int = 256) -> tuple[HuggingFaceWindow, CountingTokenizerSpy]:
    window = HuggingFaceWindow(TOKENIZER, max_tokens)
    spy = CountingTokenizerSpy(window._tokenizer)
    window._tokenizer = spy
    return window, spy


def _own_counts(texts: list[str]) -> list[int]:
    tokenizer = window_module._load_tokenizer(str(TOKENIZER))
    return [len(e.ids) for e in tokenizer.encode_batch(texts)]


def test_a_text_counted_again_is_not_tokenized_again():
    window, spy = _spied()
    texts = ["disk full on node-1", "pod restarts", "disk full on node-1", ""]
    assert window.count(texts) == _own_counts(texts)
    assert window.count(["pod restarts"]) == _own_counts(["pod restarts"])
    assert window.count(["disk full on node-1", "a new one"]) == _own_counts(
        ["disk full on node-1", "a new one"]
    )
    assert spy.texts == [
        "disk full on node-1",
        "pod restarts",
        "disk full on node-1",
        "",
        "a new one",
    ]


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(window_module, "COUNT_MEMO_ENTRIES", 3)
    monkeypatch.setattr(window_module, "COUNT_MEMO_CHARS", 10)
    window, _ = _spied()
    window.count(["a", "b", "c", "a long text over ten characters"])
    assert "a long text over ten characters" not in window._memo
    window.count(["d", "e"])
    assert len(window._memo) <= 3
    assert window.count(["a", "d", "long enough text"]) == _own_counts(
        ["a", "d", "long enough text"]
    )


def test_chunks_are_the_same_as_with_one_tokenizer_call_per_count(tmp_path: Path):
    class UncachedWindow(HuggingFaceWindow):
        def count(self, texts: Any) -> list[int]:
            return _own_counts(list(texts))

    body = "\n\n".join(
        f"## Step {i}\n\n" + " ".join(f"word{j} restart the pod." for j in range(12 * (i % 5 + 1)))
        for i in range(30)
    )
    doc = parse_document(f"# Long runbook\n\n{body}\n".encode(), "ops/long.md")
    for tokens in (64, 256):
        plain = chunk_document(doc, 1000, 150, UncachedWindow(TOKENIZER, tokens))
        assert chunk_document(doc, 1000, 150, HuggingFaceWindow(TOKENIZER, tokens)) == plain
        assert len(plain) > 3
