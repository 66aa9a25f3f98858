"""Persist the knowledge base's vocabulary in Milvus, beside the catalog (Lite and servers alike).

The vocabulary collection (``<catalog>_vocabulary``) holds one ``header`` row and the parts of
one generation: each part a text of ``term<TAB>df`` lines (under Milvus's 64 KB text limit).
The header names the generation, its part count, its document and term counts and the SHA-256
of its parts, so a reader takes the vocabulary whole or not at all.

It is counted from the chunks really stored (:func:`rebuild_vocabulary`), never from what an
ingest meant to write, so every namespace and the documents API are covered, and a re-ingest of
an unchanged folder adds it to a collection ingested before vocabularies without re-embedding.

Writing: the new generation's parts, then the header, then the old parts are deleted; a run
killed in between leaves the previous vocabulary readable.

Reading (:func:`load_vocabulary`) never fails a lookup: no collection or no header is "no
vocabulary" (a collection ingested before them), a damaged one (a missing part, a digest that
does not match, a line that is not ``term<TAB>count``) is ignored, and either way the reason is
returned for the trace.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pymilvus import DataType, MilvusClient

from langchain_lookup_knowledge.core.vocabulary import KbVocabulary
from langchain_lookup_knowledge.judgement.features import KbProfile
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import (
    query_all,
    query_pages,
    source_of_chunk_key,
    stored_chunk_keys,
)
from langchain_lookup_knowledge.store.schema import (
    CATALOG_VECTOR_FIELD,
    CollectionLayout,
    clear_unfinished_lite_collection,
    create_indexed_collection,
    ensure_loaded,
)

__all__ = [
    "VOCABULARY_VERSION",
    "VocabularyRead",
    "load_vocabulary",
    "rebuild_vocabulary",
    "vocabulary_collection",
    "vocabulary_is_current",
]

logger = logging.getLogger(__name__)

VOCABULARY_VERSION = 1
"""Bumped when the term rules change (an older vocabulary is rebuilt by the next ingest)."""
HEADER = "header"
_PART_BYTES = 60_000
_BODY_MAX = 65535


def vocabulary_collection(settings: LookupSettings) -> str:
    """The vocabulary collection's name: the catalog's, with ``_vocabulary``."""
    return f"{settings.resolved_catalog_collection}_vocabulary"


@dataclass(frozen=True)
class VocabularyRead:
    """What reading the vocabulary gave: the vocabulary, or ``None`` and why (``note``)."""

    vocabulary: KbVocabulary | None
    note: str = ""
    generation: str = ""
    profile: KbProfile | None = None  # the judgement's KB profile (store.profile_store)
    profile_note: str = ""  # why there is none


def _ensure_collection(client: MilvusClient, settings: LookupSettings, name: str) -> None:
    if client.has_collection(name):
        ensure_loaded(client, name)
        return
    clear_unfinished_lite_collection(settings, name)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("part", DataType.VARCHAR, max_length=128, is_primary=True)
    schema.add_field("generation", DataType.VARCHAR, max_length=64)
    schema.add_field("body", DataType.VARCHAR, max_length=_BODY_MAX)
    schema.add_field("info", DataType.JSON)
    schema.add_field(CATALOG_VECTOR_FIELD, DataType.FLOAT_VECTOR, dim=2)
    index = client.prepare_index_params()
    index.add_index(CATALOG_VECTOR_FIELD, index_type="FLAT", metric_type="L2")
    create_indexed_collection(client, name, schema, index)


def _parts(frequencies: dict[str, int]) -> list[str]:
    """``term<TAB>df`` lines, sorted, cut into texts of at most ``_PART_BYTES`` bytes."""
    parts: list[str] = []
    lines: list[str] = []
    size = 0
    for term in sorted(frequencies):
        if "\t" in term or "\n" in term:  # the term rules never make one; never store one
            continue
        line = f"{term}\t{frequencies[term]}"
        length = len(line.encode("utf-8")) + 1
        if lines and size + length > _PART_BYTES:
            parts.append("\n".join(lines))
            lines, size = [], 0
        lines.append(line)
        size += length
    if lines:
        parts.append("\n".join(lines))
    return parts


def _digest(parts: list[str]) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part.encode("utf-8"))
        sha.update(b"\0")
    return sha.hexdigest()


def stored_texts(client: MilvusClient, layout: CollectionLayout) -> list[tuple[str, str]]:
    """``(source, text)`` of every chunk stored (the source from its ``<source>#<n>`` key)."""
    return list(iter_stored_texts(client, layout))


def iter_stored_texts(client: MilvusClient, layout: CollectionLayout) -> Iterator[tuple[str, str]]:
    """:func:`stored_texts` a page at a time: a fold over them holds one page of chunk texts."""
    fields = [layout.id_field, layout.content_field]
    for page in query_pages(client, layout.name, f'{layout.id_field} != ""', fields):
        for row in page:
            yield (
                source_of_chunk_key(str(row[layout.id_field])),
                str(row.get(layout.content_field) or ""),
            )


def vocabulary_is_current(client: MilvusClient, settings: LookupSettings) -> bool:
    """Whether the vocabulary collection has a header of this :data:`VOCABULARY_VERSION`."""
    name = vocabulary_collection(settings)
    if not client.has_collection(name):
        return False
    ensure_loaded(client, name)
    rows = client.query(name, filter=f'part == "{HEADER}"', output_fields=["info"])
    info = rows[0].get("info") if rows else None
    return isinstance(info, dict) and info.get("version") == VOCABULARY_VERSION


def rebuild_vocabulary(
    client: MilvusClient,
    settings: LookupSettings,
    layout: CollectionLayout,
    keys: Mapping[str, set[str]] | None = None,
) -> KbVocabulary:
    """Count the vocabulary of the chunks stored in ``layout`` and write it (a new generation).

    ``keys``: the stored chunk keys by source when the caller has just read them
    (:func:`~.catalog_store.stored_chunk_keys`); read here otherwise.

    Example:
        >>> rebuild_vocabulary(client, settings, layout).documents  # doctest: +SKIP
        117
    """
    # Each document counted once its last chunk has streamed past: the fold holds the terms
    # of the documents still being read, not of all of them.
    if keys is None:
        keys = stored_chunk_keys(client, layout.name, layout.id_field)
    chunks_per_source = {source: len(chunk_keys) for source, chunk_keys in keys.items()}
    vocabulary = KbVocabulary.build(iter_stored_texts(client, layout), chunks_per_source)
    name = vocabulary_collection(settings)
    _ensure_collection(client, settings, name)
    generation = uuid.uuid4().hex
    parts = _parts(dict(vocabulary.frequencies))
    placeholder = {CATALOG_VECTOR_FIELD: [0.0, 0.0]}
    rows = [
        {"part": f"{generation}/{i:05d}", "generation": generation, "body": body, "info": {}}
        | placeholder
        for i, body in enumerate(parts)
    ]
    for start in range(0, len(rows), 64):
        client.upsert(name, rows[start : start + 64])
    client.flush(name)
    header = {
        "version": VOCABULARY_VERSION,
        "generation": generation,
        "parts": len(parts),
        "documents": vocabulary.documents,
        "terms": len(vocabulary.frequencies),
        "sha256": _digest(parts),
    }
    client.upsert(
        name,
        [{"part": HEADER, "generation": generation, "body": "", "info": header} | placeholder],
    )
    client.delete(name, filter=f'part != "{HEADER}" and generation != "{generation}"')
    client.flush(name)
    return vocabulary


def _problem(info: Any) -> str | None:
    if not isinstance(info, dict):
        return f"its header is {type(info).__name__}, not a mapping"
    for key in ("generation", "sha256"):
        if not isinstance(info.get(key), str):
            return f"its header's {key!r} is not text"
    for key in ("parts", "documents", "terms", "version"):
        value = info.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"its header's {key!r} is {value!r}, not a count"
    if info["version"] != VOCABULARY_VERSION:
        return f"it is version {info['version']}, this package reads {VOCABULARY_VERSION}"
    return None


def _parse(parts: list[str], documents: int) -> tuple[dict[str, int], str | None]:
    frequencies: dict[str, int] = {}
    for number, body in enumerate(parts):
        for line_number, line in enumerate(body.split("\n"), start=1):
            term, tab, count = line.partition("\t")
            if not tab or not term or not count.isdigit():
                return {}, f"part {number} line {line_number} is not 'term<TAB>count'"
            df = int(count)
            if not 1 <= df <= documents:
                return {}, f"part {number} line {line_number}: df {df} outside 1..{documents}"
            frequencies[term] = df
    return frequencies, None


def load_vocabulary(
    client: MilvusClient, settings: LookupSettings, known: VocabularyRead | None = None
) -> VocabularyRead:
    """The stored vocabulary, or ``None`` with the reason (never raises for a damaged one).

    ``known``: an earlier read; when the header still names its generation, it is returned
    without reading the parts again.

    Example:
        >>> load_vocabulary(client, settings).note  # doctest: +SKIP
        'no KB vocabulary (collection ingested before vocabularies; re-ingest adds it)'
    """
    name = vocabulary_collection(settings)
    missing = "no KB vocabulary (collection ingested before vocabularies; re-ingest adds it)"
    if not client.has_collection(name):
        return VocabularyRead(None, missing)
    ensure_loaded(client, name)
    headers = client.query(name, filter=f'part == "{HEADER}"', output_fields=["info"])
    if not headers:
        return VocabularyRead(None, missing)
    info = headers[0].get("info")
    problem = _problem(info)
    if problem is None:
        generation = info["generation"]
        if known is not None and known.vocabulary is not None and known.generation == generation:
            return known
        rows = query_all(client, name, f'generation == "{generation}"', ["part", "body"])
        bodies = {str(r["part"]): r.get("body") for r in rows if str(r.get("part")) != HEADER}
        expected = [f"{generation}/{i:05d}" for i in range(info["parts"])]
        if sorted(bodies) != expected:
            problem = f"it has {len(bodies)} of its {info['parts']} parts"
        elif not all(isinstance(bodies[p], str) for p in expected):
            problem = "a part's body is not text"
        else:
            parts = [str(bodies[p]) for p in expected]
            if _digest(parts) != info["sha256"]:
                problem = "its parts do not match the header's sha256"
            else:
                frequencies, problem = _parse(parts, info["documents"])
                if problem is None:
                    vocabulary = KbVocabulary(info["documents"], frequencies)
                    return VocabularyRead(vocabulary, generation=generation)
    logger.warning("KB vocabulary %s ignored: %s (the next ingest rewrites it)", name, problem)
    return VocabularyRead(None, f"KB vocabulary ignored: {problem} (re-ingest rewrites it)")
