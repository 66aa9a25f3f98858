"""A BEIR data set (corpus, queries, qrels) read from its folder, and its corpus as documents.

Example:
    >>> data = load_beir(Path("beir-scifact"), "test", None)  # doctest: +SKIP
    >>> len(data.queries)  # doctest: +SKIP
    300
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument

__all__ = ["BeirData", "bare_documents", "corpus_documents", "load_beir", "read_jsonl"]


@dataclass
class BeirData:
    """A loaded BEIR split."""

    name: str
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]
    corpus_hash: str
    skipped_queries: list[str] = field(default_factory=list)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigurationError(f"{path}:{number}: invalid JSON: {exc}") from None
    return rows


def load_beir(folder: str | Path, split: str = "test", limit: int | None = None) -> BeirData:
    """Read a BEIR folder; only queries judged in ``qrels/<split>.tsv`` are kept.

    Raises:
        ConfigurationError: a missing file or an unreadable line, named.
    """
    root = Path(folder).expanduser()
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split}.tsv"
    for path in (corpus_path, queries_path, qrels_path):
        if not path.is_file():
            raise ConfigurationError(f"BEIR file not found: {path}")
    digest = hashlib.sha256(corpus_path.read_bytes()).hexdigest()
    corpus: dict[str, tuple[str, str]] = {}
    for doc in read_jsonl(corpus_path):
        corpus[str(doc["_id"])] = (str(doc.get("title") or ""), str(doc.get("text") or ""))
    texts = {str(q["_id"]): str(q.get("text") or "") for q in read_jsonl(queries_path)}
    qrels: dict[str, dict[str, float]] = {}
    with qrels_path.open(encoding="utf-8") as handle:
        for cells in csv.reader(handle, delimiter="\t"):
            if len(cells) < 3 or not cells[2].strip().lstrip("-").isdigit():
                continue  # header or blank line
            qrels.setdefault(cells[0], {})[cells[1]] = float(cells[2])
    queries: dict[str, str] = {}
    skipped = []
    for qid in qrels:
        if qid in texts and texts[qid].strip():
            queries[qid] = texts[qid]
        else:
            skipped.append(qid)
    if limit is not None:
        queries = dict(list(queries.items())[:limit])
    return BeirData(
        name=root.name,
        corpus=corpus,
        queries=queries,
        qrels={q: qrels[q] for q in queries},
        corpus_hash=digest,
        skipped_queries=skipped,
    )


def corpus_documents(data: BeirData) -> list[KnowledgeDocument]:
    """One knowledge document per corpus entry; ``source`` is the BEIR id, no category."""
    docs = []
    for doc_id, (title, text) in data.corpus.items():
        body = text if text.strip() else title
        if not body.strip():
            continue
        digest = hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()
        docs.append(
            KnowledgeDocument(
                source=doc_id,
                title=title.strip() or doc_id,
                category="",
                body=body,
                content_hash=digest,
            )
        )
    return docs


def bare_documents(data: BeirData) -> tuple[list[Document], list[str]]:
    """One bare ``Document`` (title + text, as BEIR's dense baselines embed it) per entry."""
    docs, ids = [], []
    for doc_id, (title, text) in data.corpus.items():
        content = f"{title}\n{text}".strip()
        if content:
            docs.append(Document(page_content=content, metadata={"doc_id": doc_id}))
            ids.append(doc_id)
    return docs, ids
