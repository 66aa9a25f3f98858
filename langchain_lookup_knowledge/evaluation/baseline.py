"""Bare ``langchain_milvus.Milvus`` baselines: what a user gets without this package.

Three kinds, each in its own collection, written with ``add_documents`` (explicit ids) and
searched with ``similarity_search_with_score``:

* ``dense``: the same embedder, COSINE/FLAT.
* ``bm25``: Milvus's built-in BM25 function alone (no embedder).
* ``hybrid``: dense + ``BM25BuiltInFunction``, fused with RRF at its usual ``k=60`` (an explicit
  ranker: the implicit WeightedRanker of langchain-milvus 0.4.0 breaks on the second call).

A collection filled from the same documents is reused, so repeated evaluations skip ingestion:
each fill records what it was filled from (a hash of the ids and texts, the collection property
:data:`FILLED_FROM_PROPERTY`); anything else there (another slice of the same size, a fill
that was killed halfway) is dropped and filled again.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import query_all
from langchain_lookup_knowledge.store.connection import connection_args
from langchain_lookup_knowledge.store.schema import ensure_loaded

logger = logging.getLogger(__name__)

BareKind = Literal["dense", "bm25", "hybrid"]
DOC_ID_FIELD = "doc_id"
_DENSE_INDEX = {"index_type": "FLAT", "metric_type": "COSINE", "params": {}}
_DENSE_SEARCH = {"metric_type": "COSINE", "params": {}}
_SPARSE_INDEX = {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25", "params": {}}
_SPARSE_SEARCH = {"metric_type": "BM25", "params": {}}
ADD_BATCH = 256
BARE_RRF_K = 60
FILLED_FROM_PROPERTY = "lookup_knowledge.filled_from"
_BARE_PRIMARY_FIELD = "pk"  # langchain-milvus's default primary key


def filled_from(docs: Sequence[Document], ids: Sequence[str]) -> str:
    """What a bare collection is filled from: 16 hex digits of a SHA-256 over ids and texts.

    Example:
        >>> a = filled_from([Document("disk full")], ["d1"])
        >>> a == filled_from([Document("disk full")], ["d1"])
        True
        >>> a == filled_from([Document("disk is full")], ["d1"])
        False
    """
    digest = hashlib.sha256()
    for doc_id, doc in zip(ids, docs, strict=True):
        for part in (doc_id, doc.page_content):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
    return digest.hexdigest()[:16]


def rrf_ranker(k: int = BARE_RRF_K) -> Any:
    """The RRF reranker as langchain-milvus wants it (``reranker=``; ``ranker_type`` is
    deprecated)."""
    from pymilvus import Function, FunctionType

    return Function(
        name="rrf",
        input_field_names=[],
        function_type=FunctionType.RERANK,
        params={"reranker": "rrf", "k": k},
    )


def bm25_analyzer_params(texts: Sequence[str]) -> dict[str, Any]:
    """jieba for CJK text, by the ingest's rule (``standard`` makes a Chinese sentence one
    token)."""
    from langchain_lookup_knowledge.core.text import is_cjk_corpus

    sample = "".join(t[:2000] for t in texts[:200])
    return {"tokenizer": "jieba"} if is_cjk_corpus(sample) else {"type": "standard"}


class BareStore:
    """One bare langchain-milvus store and a search returning document ids, best first.

    Example:
        >>> store = BareStore(settings, "kb_bare_dense", "dense", embedder)  # doctest: +SKIP
        >>> store.fill(docs)  # doctest: +SKIP
        >>> store.search("pod keeps restarting", k=10)  # doctest: +SKIP
        ['kubernetes/pod-crashloopbackoff.md', ...]
    """

    def __init__(
        self,
        settings: LookupSettings,
        collection: str,
        kind: BareKind,
        embeddings: Embeddings | None,
        *,
        analyzer_params: dict[str, Any] | None = None,
        rrf_k: int = BARE_RRF_K,
    ) -> None:
        from langchain_milvus import BM25BuiltInFunction, Milvus

        self.kind = kind
        self.collection = collection
        self.rrf_k = rrf_k
        bm25 = BM25BuiltInFunction(
            input_field_names="text",
            output_field_names="sparse",
            analyzer_params=analyzer_params or {"type": "standard"},
        )
        common: dict[str, Any] = {
            "collection_name": collection,
            "connection_args": connection_args(settings),
            "auto_id": False,
            "enable_dynamic_field": True,
        }
        if kind == "dense":
            self.store = Milvus(
                embedding_function=embeddings,
                vector_field="vector",
                index_params=_DENSE_INDEX,
                search_params=_DENSE_SEARCH,
                **common,
            )
        elif kind == "bm25":
            self.store = Milvus(
                embedding_function=None,
                builtin_function=bm25,
                vector_field="sparse",
                index_params=_SPARSE_INDEX,
                search_params=_SPARSE_SEARCH,
                **common,
            )
        else:
            self.store = Milvus(
                embedding_function=embeddings,
                builtin_function=bm25,
                vector_field=["vector", "sparse"],
                index_params=[_DENSE_INDEX, _SPARSE_INDEX],
                search_params=[_DENSE_SEARCH, _SPARSE_SEARCH],
                **common,
            )

    def row_count(self) -> int:
        """Rows in the collection (0 when it does not exist yet)."""
        client = self.store.client
        if not client.has_collection(self.collection):
            return 0
        return int(client.get_collection_stats(self.collection).get("row_count", 0))

    def holds(self, docs: Sequence[Document], ids: Sequence[str]) -> bool:
        """Whether the collection was filled from exactly ``docs`` (with ``ids``).

        One filled before fills were recorded is judged by its ids and row count (a count
        alone matched a killed fill, or another slice of the same size), and recorded.
        """
        client = self.store.client
        if not docs or not client.has_collection(self.collection):
            return False
        source = filled_from(docs, ids)
        properties = client.describe_collection(self.collection).get("properties") or {}
        recorded = properties.get(FILLED_FROM_PROPERTY)
        if recorded is not None:
            return str(recorded) == source
        if self.row_count() != len(docs):
            return False
        ensure_loaded(client, self.collection)
        expr = f'{_BARE_PRIMARY_FIELD} != ""'
        rows = query_all(client, self.collection, expr, [_BARE_PRIMARY_FIELD])
        stored = [str(row[_BARE_PRIMARY_FIELD]) for row in rows]
        if sorted(stored) != sorted(ids):
            return False
        client.alter_collection_properties(self.collection, {FILLED_FROM_PROPERTY: source})
        return True

    def fill(self, docs: Sequence[Document], ids: Sequence[str], *, progress: bool = False) -> bool:
        """Write ``docs`` unless the collection was filled from them; True when written.

        Anything else in the collection is dropped first (never mixed with ``docs``).
        """
        if not docs or self.holds(docs, ids):
            return False
        if self.store.client.has_collection(self.collection):
            logger.info("bare collection %r holds other documents: filled again", self.collection)
            self.drop()
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(
                total=len(docs), unit="doc", desc=f"bare {self.kind}", file=sys.stderr, leave=False
            )
        # Milvus Lite answers langchain-milvus's AllocTimestamp call with a logged (harmless)
        # "Method not implemented" traceback per batch: keep it off the user's screen.
        grpc_log = logging.getLogger("grpc._server")
        level = grpc_log.level
        grpc_log.setLevel(logging.CRITICAL)
        try:
            for start in range(0, len(docs), ADD_BATCH):
                batch = list(docs[start : start + ADD_BATCH])
                self.store.add_documents(batch, ids=list(ids[start : start + ADD_BATCH]))
                if bar is not None:
                    bar.update(len(batch))
        finally:
            grpc_log.setLevel(level)
            if bar is not None:
                bar.close()
        self.store.client.flush(self.collection)
        self.store.client.alter_collection_properties(
            self.collection, {FILLED_FROM_PROPERTY: filled_from(docs, ids)}
        )
        return True

    def search_docs(self, query: str, k: int) -> list[tuple[Document, float]]:
        """``similarity_search_with_score`` as a user would call it."""
        if self.kind == "hybrid":
            return list(
                self.store.similarity_search_with_score(
                    query, k=k, reranker=rrf_ranker(self.rrf_k), fetch_k=max(k, 2 * k)
                )
            )
        return list(self.store.similarity_search_with_score(query, k=k))

    def search(self, query: str, k: int) -> list[str]:
        """Document ids (metadata ``doc_id``) of the top ``k`` hits, best first."""
        return [str(doc.metadata.get(DOC_ID_FIELD, "")) for doc, _ in self.search_docs(query, k)]

    def drop(self) -> None:
        """Remove the collection (the next fill creates it again)."""
        client = self.store.client
        if client.has_collection(self.collection):
            client.drop_collection(self.collection)
        self.store.col = None  # langchain-milvus's cached view of the dropped collection


class SharedDocumentVectors(Embeddings):
    """``inner`` with document vectors remembered by text, so two bare stores built from the
    same chunks embed them once. Queries pass straight through (the bare stores have no
    query cache)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._vectors: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``; only texts not seen before reach the model."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self._vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The model's query vector (never cached)."""
        return self.inner.embed_query(text)


def progress_enabled(show: bool | None) -> bool:
    """Progress bars on a terminal unless told otherwise."""
    return sys.stderr.isatty() if show is None else show
