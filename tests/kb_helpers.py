"""Helpers that build knowledge for tests: files of a knowledge folder, rows for collections
made with raw pymilvus."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from pymilvus import CollectionSchema, DataType, MilvusClient

from langchain_lookup_knowledge.knowledge.chunking import chunk_document, embedding_text
from langchain_lookup_knowledge.knowledge.loader import load_document
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import open_client
from tests.conftest import SAMPLE_KB


def write(root: Path, rel: str, content: str | bytes) -> Path:
    """Write ``content`` (UTF-8 text, or bytes as they are) to ``root/rel``, folders included."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write ``rows`` to ``path``, one JSON object a line (a question file, say)."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def drop_store(settings: LookupSettings) -> None:
    """Drop the chunk collection, the catalog and the KB vocabulary ``settings`` name, where
    they exist."""
    from langchain_lookup_knowledge.store.vocabulary_store import vocabulary_collection

    client = open_client(settings)
    for name in (
        settings.collection,
        settings.resolved_catalog_collection,
        vocabulary_collection(settings),
    ):
        if client.has_collection(name):
            client.drop_collection(name)


def external_schema(client: MilvusClient, *, meta: bool = True) -> CollectionSchema:
    """The schema of a collection made with raw pymilvus, for :func:`external_rows`: doc_id
    (primary key), body, a 384-dimension embedding and, with ``meta``, the JSON meta field."""
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("doc_id", DataType.VARCHAR, is_primary=True, max_length=512)
    schema.add_field("body", DataType.VARCHAR, max_length=65535)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=384)
    if meta:
        schema.add_field("meta", DataType.JSON)
    return schema


def external_rows(sources: Iterable[str], embeddings: Embeddings) -> list[dict[str, Any]]:
    """Rows for a collection made with raw pymilvus (fields doc_id/body/embedding/meta, the
    category, source, title and breadcrumb inside ``meta``): the sample-KB files ``sources``
    chunked as ingestion chunks them, each chunk embedded with ``embeddings``."""
    rows = []
    for rel in sources:
        doc = load_document(SAMPLE_KB / rel, SAMPLE_KB, 2_000_000)
        chunks = chunk_document(doc, 1200, 150)  # type: ignore[arg-type]
        texts = [embedding_text(c, doc) for c in chunks]  # type: ignore[arg-type]
        for chunk, text, vector in zip(
            chunks, texts, embeddings.embed_documents(texts), strict=True
        ):
            rows.append(
                {
                    "doc_id": chunk.evidence_key,
                    "body": text,
                    "embedding": vector,
                    "meta": {
                        "category": chunk.category,
                        "source": chunk.source,
                        "title": chunk.title,
                        "breadcrumb": chunk.breadcrumb,
                    },
                }
            )
    return rows


def every_block_judge_model(folder: Path) -> Path:
    """A judgement model file (for ``judge_model_file``) that finds evidence in every lookup
    with a block: the shipped model with its ``found`` thresholds at 0. For tests of what
    retrieval returns (a filter, a tenant, an analyzer), not of whether the judgement finds a
    weak match worth showing."""
    from langchain_lookup_knowledge.judgement.model import model_text

    data = json.loads(model_text(None))
    for thresholds in [data["thresholds"], *data.get("group_thresholds", {}).values()]:
        thresholds["found"] = 0.0
    path = folder / "every_block_judge_model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
