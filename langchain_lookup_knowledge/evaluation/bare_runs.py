"""The bare LangChain wirings on the same questions: 1,000-character chunks, dense / BM25 / hybrid.

Example:
    >>> sorted(BARE_CONFIGS)
    ['bm25', 'dense', 'hybrid', 'hybrid_fetch50']
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.baseline import (
    BareKind,
    BareStore,
    SharedDocumentVectors,
    bm25_analyzer_params,
    rrf_ranker,
)
from langchain_lookup_knowledge.evaluation.question_sets import QuestionSet
from langchain_lookup_knowledge.evaluation.runner import (
    embedder_fingerprint,
    run_search,
    short_hash,
    stem,
)
from langchain_lookup_knowledge.evaluation.scoring import (
    K,
    PipelineRunner,
    misses_at_5,
    scores_of,
)
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "BARE_CHUNK_OVERLAP",
    "BARE_CHUNK_SIZE",
    "BARE_CONFIGS",
    "BareConfig",
    "bare_chunks",
    "bare_configs_for",
    "bare_search",
    "run_baselines",
]


BARE_CHUNK_SIZE = 1000


BARE_CHUNK_OVERLAP = 100


@dataclass(frozen=True)
class BareConfig:
    """One bare wiring: the store kind and the extra ``similarity_search`` arguments."""

    kind: BareKind
    fetch_k: int | None = None  # hybrid only; None: langchain-milvus's default (4)


BARE_CONFIGS: dict[str, BareConfig] = {
    "dense": BareConfig("dense"),
    "bm25": BareConfig("bm25"),
    "hybrid": BareConfig("hybrid"),
    "hybrid_fetch50": BareConfig("hybrid", fetch_k=50),
}
"""The ten-minute wirings a LangChain user would build, each scored in the same run."""


def bare_chunks(
    kb: Path,
    chunk_size: int = BARE_CHUNK_SIZE,
    chunk_overlap: int = BARE_CHUNK_OVERLAP,
    only: set[str] | None = None,
) -> tuple[list[Document], list[str]]:
    """What a bare user indexes: every markdown file read as text, split recursively
    (``only``: just these relative paths, the files the pipeline indexed)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    kb = kb.resolve()  # the loader lists resolved paths (a relative --kb must match them)
    docs: list[Document] = []
    ids: list[str] = []
    for path in iter_markdown_files(kb):
        text = path.read_text(encoding="utf-8", errors="replace")
        source = path.relative_to(kb).as_posix()
        if only is not None and source not in only:
            continue
        for i, piece in enumerate(splitter.split_text(text)):
            docs.append(
                Document(page_content=piece, metadata={"doc_id": stem(source), "source": source})
            )
            ids.append(f"{source}#{i}")
    return docs, ids


def bare_configs_for(names: Sequence[str] | None) -> dict[str, BareConfig]:
    """The bare wirings named (all of :data:`BARE_CONFIGS` for None).

    Example:
        >>> list(bare_configs_for(["bm25"])), len(bare_configs_for(None))
        (['bm25'], 4)
    """
    if names is None:
        return dict(BARE_CONFIGS)
    unknown = [n for n in names if n not in BARE_CONFIGS]
    if unknown or not names:
        raise ConfigurationError(
            f"unknown bare wiring {unknown[0] if unknown else ''!r}: use one or more of "
            + ", ".join(BARE_CONFIGS)
        )
    return {n: BARE_CONFIGS[n] for n in dict.fromkeys(names)}


def bare_search(store: BareStore, config: BareConfig, query: str) -> list[str]:
    kwargs: dict[str, Any] = {}
    if config.kind == "hybrid":
        kwargs["reranker"] = rrf_ranker()  # a fresh Function per call
        if config.fetch_k is not None:
            kwargs["fetch_k"] = config.fetch_k
    docs = store.store.similarity_search(query, k=K, **kwargs)
    return [str(d.metadata.get("doc_id", "")) for d in docs]


def run_baselines(
    root: Path,
    settings: LookupSettings,
    runner: PipelineRunner,
    qset: QuestionSet,
    progress: bool,
    *,
    only: set[str] | None,
    configs: Mapping[str, BareConfig] = BARE_CONFIGS,
) -> tuple[dict[str, Any], dict[str, dict[str, list[float]]]]:
    root = root.expanduser()
    if not root.is_dir():
        raise ConfigurationError(f"knowledge folder not found: {root}")
    # The same corpus on both sides: the files the pipeline indexed (not the ones it refused).
    docs, ids = bare_chunks(root, only=only)
    if not docs:
        raise ConfigurationError(
            f"no markdown file under {root} is indexed in collection {settings.collection!r}"
        )
    key = short_hash(
        *(d.page_content for d in docs),
        embedder_fingerprint(settings),
        f"{BARE_CHUNK_SIZE}/{BARE_CHUNK_OVERLAP}",
    )
    analyzer = bm25_analyzer_params([d.page_content for d in docs])
    tokenizer = "jieba" if analyzer.get("tokenizer") == "jieba" else "standard"
    shared = SharedDocumentVectors(runner.embedder.inner)
    stores: dict[BareKind, tuple[BareStore, bool, float]] = {}
    out: dict[str, Any] = {}
    values: dict[str, dict[str, list[float]]] = {}
    for name, config in configs.items():
        if config.kind not in stores:
            store = BareStore(
                settings,
                # A BM25 collection is analysed once: another analyzer is another collection.
                f"bare_{key}_{config.kind}"
                + (f"_{tokenizer}" if config.kind != "dense" and tokenizer == "jieba" else ""),
                config.kind,
                None if config.kind == "bm25" else shared,
                analyzer_params=analyzer,
            )
            start = time.perf_counter()
            written = store.fill(docs, ids, progress=progress)
            stores[config.kind] = (store, written, round(time.perf_counter() - start, 2))
        store, written, ingest_s = stores[config.kind]
        bare = run_search(
            partial(bare_search, store, config),
            qset.queries,
            desc=f"bare {name}",
            progress=progress,
        )
        metrics, values[name] = scores_of(bare, qset)
        out[name] = metrics | {
            "timing": bare.timing(),
            "collection": store.collection,
            "chunks": len(docs),
            "cached": not written,
            "ingest_s": ingest_s,
            "misses@5": len(misses_at_5(bare.rankings, qset)),
            "fetch_k": config.fetch_k,
            "analyzer": None if config.kind == "dense" else tokenizer,
        }
    return out, values
