"""Ingest throughput against ``Milvus.from_documents`` and the embedder's own rate, same chunks.

Example:
    >>> figures = ingest_bench(settings, Path("docs/runbooks"), embedder)  # doctest: +SKIP
    >>> figures["ingest_vs_bare_ratio"]  # doctest: +SKIP
    0.83
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from langchain_lookup_knowledge.embeddings.onnx import OnnxSentenceEmbeddings
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.timing import (
    ratio_of,
    timed_ms,
)
from langchain_lookup_knowledge.knowledge import SAMPLE_KB
from langchain_lookup_knowledge.settings import LookupSettings

if TYPE_CHECKING:
    pass

__all__ = [
    "INGEST_ROUNDS",
    "bench_knowledge_folder",
    "drop_scratch_collections",
    "embedder_alone",
    "ingest_bench",
    "paired_ratios",
]


def bench_knowledge_folder(kb: str | Path | None) -> Path:
    """The folder the ingest benchmark reads, as an absolute path (the sample KB by default).

    Resolved first: the loader names each file relative to the folder it walked, so a relative
    ``--kb`` such as ``../runbooks`` would fail the ingest after every lookup was measured.

    Raises:
        ConfigurationError: the folder does not exist.

    Example:
        >>> bench_knowledge_folder(None) == SAMPLE_KB
        True
    """
    folder = Path(kb).expanduser().resolve() if kb else SAMPLE_KB
    if not folder.is_dir():
        raise ConfigurationError(f"knowledge folder not found: {folder}")
    return folder


INGEST_ROUNDS = 2
"""Ingests ``bench`` times by default, each between two runs of the embedder alone (on two
shared cores the embedder alone swings up to 2x from one run to the next: one ingest against
one pair of embedder runs is noise-bound). About 2.5 min on runbooks-en's 200 chunks at load 1."""


def ingest_bench(
    settings: LookupSettings, kb: Path, embedder: Any, *, rounds: int = INGEST_ROUNDS
) -> dict[str, Any]:
    """``ingest_folder`` vs ``Milvus.from_documents`` on the same chunks and embedder, and vs
    the embedder alone on those chunks, measured alternately: embedder, ingest, embedder,
    ingest, ..., embedder (``rounds`` ingests, each into a new throwaway collection; the same
    embedder object, so the same batch setting and threads, its query cache new in each
    ingest). ``ingest_vs_embedder_ratio`` is the median over the ingests of the ingest's rate
    over the embedder's best setting in its two neighbouring runs
    (``ingest_vs_embedder_ratios``: each one; ``..._range``: their lowest and highest)."""
    from langchain_milvus import Milvus

    from langchain_lookup_knowledge.embeddings.window import window_of
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.knowledge.chunking import chunk_document, embedding_text
    from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document
    from langchain_lookup_knowledge.store.connection import connection_args, open_client

    if rounds < 1:
        raise ConfigurationError(f"ingest rounds must be >= 1, got {rounds}")
    window = window_of(embedder, settings.embedding_max_tokens)
    docs: list[Document] = []
    ids: list[str] = []
    for file in iter_markdown_files(kb):
        doc = load_document(file, kb, settings.max_file_bytes)
        if isinstance(doc, KnowledgeDocument):
            for chunk in chunk_document(doc, settings.chunk_size, settings.chunk_overlap, window):
                docs.append(
                    Document(
                        page_content=embedding_text(chunk, doc, window),
                        metadata={"source": chunk.source},
                    )
                )
                ids.append(chunk.evidence_key)
    if not docs:
        raise ConfigurationError(f"no markdown files to ingest under {kb}")
    tag = uuid.uuid4().hex[:8]
    bare_name = f"bench_bare_{tag}"
    client = open_client(settings)
    texts = sorted((d.page_content for d in docs), key=len)
    alone: dict[str, list[float]] = {}
    ingests: list[tuple[int, float]] = []  # (chunks written, seconds) per ingest
    try:
        start = time.perf_counter()
        Milvus.from_documents(
            docs,
            embedder,
            ids=ids,
            collection_name=bare_name,
            connection_args=connection_args(settings),
            index_params={"index_type": "FLAT", "metric_type": "COSINE"},
        )
        bare_s = time.perf_counter() - start
        embedder_alone(embedder, texts, alone)
        for number in range(rounds):
            ours = settings.model_copy(
                update={"collection": f"bench_ingest_{tag}_{number}", "catalog_collection": None}
            )
            report = ingest_folder(kb, ours, embeddings=embedder, show_progress=False)
            ingests.append((report.chunks_written, report.seconds))
            embedder_alone(embedder, texts, alone, reverse=number % 2 == 0)
    finally:
        drop_scratch_collections(client, tag)
    written = sum(chunks for chunks, _ in ingests)
    ours_s = sum(seconds for _, seconds in ingests)
    ours_rate = written / ours_s if ours_s else 0.0
    bare_rate = len(docs) / bare_s if bare_s else 0.0
    rates = {name: round(len(texts) * len(runs) / sum(runs), 2) for name, runs in alone.items()}
    best = max(rates, key=lambda name: rates[name])
    paired = paired_ratios(ingests, len(texts), alone[best])
    return {
        "chunks": len(docs),
        "ingest_chunks_per_s": round(ours_rate, 2),
        "bare_ingest_chunks_per_s": round(bare_rate, 2),
        "ingest_vs_bare_ratio": ratio_of(ours_rate, bare_rate),
        "ingest_s": round(ours_s / len(ingests), 3),
        "bare_ingest_s": round(bare_s, 3),
        "embedder_chunks_per_s": rates,
        "embedder_best": best,
        "embedder_best_chunks_per_s": rates[best],
        "ingest_vs_embedder_ratio": round(statistics.median(paired), 3),
        "ingest_rounds": len(ingests),
        "ingest_runs_s": [round(seconds, 6) for _, seconds in ingests],
        "embedder_runs_s": {name: [round(s, 6) for s in runs] for name, runs in alone.items()},
        "ingest_vs_embedder_ratios": [round(r, 3) for r in paired],
        "ingest_vs_embedder_ratio_range": [round(min(paired), 3), round(max(paired), 3)],
        "ingest_vs_embedder_pooled_ratio": ratio_of(ours_rate, rates[best]),
    }


def paired_ratios(
    ingests: Sequence[tuple[int, float]], chunks: int, alone_s: Sequence[float]
) -> list[float]:
    """Per ingest, its rate over the embedder's rate in the runs before and after it
    (``alone_s[i]`` and ``alone_s[i + 1]`` around ingest ``i``: their mean time).

    Example:
        >>> [round(r, 3) for r in paired_ratios([(100, 10.0), (100, 15.0)], 100, [9, 11, 13])]
        [1.0, 0.8]
    """
    out = []
    for i, (written, seconds) in enumerate(ingests):
        embedder_s = (alone_s[i] + alone_s[i + 1]) / 2
        ingest_rate = written / seconds if seconds else 0.0
        out.append(ingest_rate * embedder_s / chunks if chunks else 0.0)
    return out


def _onnx_embedder(embedder: Any) -> OnnxSentenceEmbeddings | None:
    """The bundled ONNX embedder inside ``embedder``'s wrappers, if that is what it is."""
    seen = 0
    while embedder is not None and seen < 8:
        if isinstance(embedder, OnnxSentenceEmbeddings):
            return embedder
        embedder, seen = getattr(embedder, "inner", None), seen + 1
    return None


def embedder_alone(
    embedder: Any, texts: list[str], runs: dict[str, list[float]], *, reverse: bool = False
) -> None:
    """Seconds the embedder alone takes on ``texts`` (in length order, in one call), as
    configured and, for the bundled ONNX model, with other padded-token budgets per model call
    (``batch_tokens``): the embedder's own best setting, measured beside the ingest."""
    onnx = _onnx_embedder(embedder)
    budgets: list[int | None] = [None]
    if onnx is not None:
        budgets += [b for b in (2 * onnx.batch_tokens, 8 * onnx.batch_tokens)]
    for budget in budgets[::-1] if reverse else budgets:
        name = "configured" if budget is None else f"batch_tokens={budget}"
        configured = onnx.batch_tokens if onnx is not None else 0
        if onnx is not None and budget is not None:
            onnx.batch_tokens = budget
        try:
            runs.setdefault(name, []).append(
                timed_ms(partial(embedder.embed_documents, texts))[0] / 1e3
            )
        finally:
            if onnx is not None:
                onnx.batch_tokens = configured


def drop_scratch_collections(client: Any, tag: str) -> list[str]:
    """Drop every collection whose name holds ``tag`` (a bench's throwaway chunk collection
    and all it made beside it: catalog, vocabulary, the bare store's); returns their names.

    Example:
        >>> drop_scratch_collections(client, "3f2a9c1e")  # doctest: +SKIP
        ['bench_bare_3f2a9c1e', 'bench_ingest_3f2a9c1e', 'bench_ingest_3f2a9c1e_catalog', ...]
    """
    dropped = sorted(name for name in client.list_collections() if tag in name)
    for name in dropped:
        client.drop_collection(name)
    return dropped
