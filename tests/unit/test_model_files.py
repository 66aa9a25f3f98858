"""The default tokenizer ships in the package, with its licence notice, and is hash-checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import langchain_lookup_knowledge
from langchain_lookup_knowledge.embeddings.onnx import (
    DEFAULT_TOKENIZER_SHA256,
    ModelFiles,
    OnnxSentenceEmbeddings,
)
from langchain_lookup_knowledge.errors import ModelFilesError

PACKAGE = Path(langchain_lookup_knowledge.__file__).parent


def test_the_default_tokenizer_is_the_packaged_file_with_its_notice():
    files = ModelFiles.pinned_default()
    assert files.tokenizer == PACKAGE / "embeddings" / "minilm" / "tokenizer.json"
    assert files.tokenizer_sha256 == DEFAULT_TOKENIZER_SHA256
    files.verify()  # the shipped file has the pinned sha256
    notice = (files.tokenizer.parent / "NOTICE").read_text(encoding="utf-8")
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice
    assert "Apache License 2.0" in notice
    licence = (files.tokenizer.parent / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence
    assert "Version 2.0" in licence


def test_a_damaged_tokenizer_is_named_in_the_error(tmp_path: Path):
    copy = tmp_path / "tokenizer.json"
    shutil.copyfile(ModelFiles.pinned_default().tokenizer, copy)
    data = bytearray(copy.read_bytes())
    data[100] ^= 0x01  # one flipped bit: still JSON-looking, not the pinned file
    copy.write_bytes(bytes(data))
    default = ModelFiles.pinned_default()
    damaged = ModelFiles(default.model, copy, default.model_sha256, default.tokenizer_sha256)
    with pytest.raises(ModelFilesError, match=r"embedding tokenizer file .*tokenizer\.json") as err:
        OnnxSentenceEmbeddings(damaged)
    assert str(copy) in str(err.value)
    assert DEFAULT_TOKENIZER_SHA256 in str(err.value)


def test_a_missing_tokenizer_is_named(tmp_path: Path):
    default = ModelFiles.pinned_default()
    gone = ModelFiles(default.model, tmp_path / "tokenizer.json", default.model_sha256, None)
    with pytest.raises(ModelFilesError, match=r"embedding tokenizer file not found: .*tokenizer"):
        gone.verify()
