"""The BM25 sparse index: its k1 / b, what a new collection gets, and rebuilding it.

Example:
    >>> sparse_index_params({"bm25_k1": 0.9, "bm25_b": 0.4})["params"]["bm25_k1"]
    0.9
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pymilvus import DataType, Function, FunctionType, MilvusClient

from langchain_lookup_knowledge.errors import SchemaMismatchError
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.index_record import (
    IndexSpec,
    add_index_arguments,
    described_spec,
    record_indexes,
)
from langchain_lookup_knowledge.store.layout import CollectionLayout

__all__ = [
    "PASSAGE_BM25",
    "add_bm25_field",
    "apply_bm25_parameters",
    "bm25_defaults_notice",
    "bm25_of_index",
    "bm25_parameters",
    "explicit_bm25_parameters",
    "indexed_bm25_parameters",
    "rebuild_sparse_index",
    "server_lacks_bm25",
    "sparse_index_params",
]

logger = logging.getLogger(__name__)


def add_bm25_field(schema: Any, *, source: str, sparse: str, name: str) -> None:
    """Add to ``schema`` the sparse vector field ``sparse`` and the BM25 function ``name`` that
    Milvus fills it with from the analysed text field ``source``.

    Example:
        >>> schema = MilvusClient.create_schema()
        >>> add_bm25_field(schema, source="text", sparse="sparse", name="bm25")
        >>> [f.name for f in schema.fields], [f.name for f in schema.functions]
        (['sparse'], ['bm25'])
    """
    schema.add_field(sparse, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name=name,
            function_type=FunctionType.BM25,
            input_field_names=[source],
            output_field_names=[sparse],
        )
    )


PASSAGE_BM25: dict[str, float] = {"bm25_k1": 0.9, "bm25_b": 0.4}
"""``bm25_defaults=auto`` for a collection with the standard analyzer: BEIR's BM25 (Anserini's
passage setting). Chunks are passages whatever the documents were (at most ``chunk_size``
characters: 42-167 words from p10 to p90 in the SciFact, runbooks-en and APISIX en chunks)."""


def bm25_parameters(settings: LookupSettings, analyzer: str | None = None) -> dict[str, float]:
    """The BM25 parameters the settings ask of a sparse index built with ``analyzer`` ({}: the
    engine's defaults, or for an existing index: as built).

    ``bm25_k1`` / ``bm25_b`` when set; each one unset takes :data:`PASSAGE_BM25` for the
    standard analyzer under ``bm25_defaults=auto``, nothing otherwise (jieba, or ``engine``).

    Example:
        >>> bm25_parameters(LookupSettings(), "standard")
        {'bm25_k1': 0.9, 'bm25_b': 0.4}
        >>> bm25_parameters(LookupSettings(bm25_b=0.75), "standard")
        {'bm25_k1': 0.9, 'bm25_b': 0.75}
        >>> bm25_parameters(LookupSettings(), "jieba"), bm25_parameters(LookupSettings(bm25_k1=1.2))
        ({}, {'bm25_k1': 1.2})
        >>> bm25_parameters(LookupSettings(bm25_defaults="engine"), "standard")
        {}
    """
    auto = settings.bm25_defaults == "auto" and analyzer == "standard"
    return (dict(PASSAGE_BM25) if auto else {}) | explicit_bm25_parameters(settings)


def sparse_index_params(bm25: dict[str, float]) -> dict[str, Any]:
    """``add_index`` arguments of the BM25 sparse field, with ``bm25`` parameters ({}: none).

    pymilvus sends ``params`` flattened, each key its own pair, which a Milvus server reads;
    Milvus Lite reads only a nested ``params`` JSON and drops the rest silently, so the BM25
    parameters go both ways (a server merges the nested copy into the same keys).

    Example:
        >>> sparse_index_params({"bm25_b": 0.4})["params"]
        {'inverted_index_algo': 'DAAT_MAXSCORE', 'bm25_b': 0.4, 'params': {'bm25_b': 0.4}}
    """
    params: dict[str, Any] = {"inverted_index_algo": "DAAT_MAXSCORE", **bm25}
    if bm25:
        params["params"] = dict(bm25)
    return {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25", "params": params}


def indexed_bm25_parameters(client: MilvusClient, layout: CollectionLayout) -> dict[str, float]:
    """The BM25 parameters ``layout``'s sparse index was built with ({}: engine defaults)."""
    if layout.sparse_field is None:
        return {}
    return bm25_of_index(
        described_spec(client.describe_index(layout.name, layout.sparse_field) or {})
    )


def bm25_of_index(spec: IndexSpec) -> dict[str, float]:
    """The BM25 parameters of a sparse index's ``spec`` ({}: the engine's defaults)."""
    params = spec.get("params") or {}
    return {name: float(params[name]) for name in ("bm25_k1", "bm25_b") if name in params}


def rebuild_sparse_index(
    client: MilvusClient, layout: CollectionLayout, bm25: dict[str, float]
) -> None:
    """Build ``layout``'s BM25 index again with exactly ``bm25`` ({}: the engine's defaults).

    Milvus reads BM25 parameters when the index is built (a search's parameters do not change
    them); the index is made from the stored term counts, so nothing is embedded or written.
    The collection's indexes are recorded before they are dropped, and again once built
    (:mod:`.index_record`): a process killed in between leaves what a repair needs.
    """
    if layout.sparse_field is None:
        raise SchemaMismatchError(f"collection {layout.name!r} has no BM25 field to index")
    name, sparse = layout.name, layout.sparse_field
    before = {n: client.describe_index(name, n) or {} for n in client.list_indexes(name)}
    specs = {
        str(d["field_name"]): described_spec(d) for d in before.values() if d.get("field_name")
    }
    record_indexes(client, name, specs)
    client.release_collection(name)
    for index_name in client.list_indexes(name, field_name=sparse):
        client.drop_index(name, index_name)
    index = client.prepare_index_params()
    sparse_index = sparse_index_params(bm25)
    index.add_index(sparse, **sparse_index)
    # Milvus Lite resolves a dropped index's name only as "<field>_idx" and otherwise drops
    # every index of the collection: what went with it is built again as it was described.
    left = set(client.list_indexes(name))
    for index_name, described in before.items():
        field = described.get("field_name")
        if index_name not in left and field and field != sparse:
            index.add_index(field, **add_index_arguments(described_spec(described)))
    client.create_index(name, index, sync=False)
    record_indexes(client, name, specs | {sparse: described_spec(sparse_index)})
    client.load_collection(name)


def explicit_bm25_parameters(settings: LookupSettings) -> dict[str, float]:
    """The BM25 parameters the user set (``bm25_k1`` / ``bm25_b`` not None), whatever
    ``bm25_defaults`` is: the only ones that rebuild an existing collection's index.

    Example:
        >>> explicit_bm25_parameters(LookupSettings()), explicit_bm25_parameters(
        ...     LookupSettings(bm25_b=0.4))
        ({}, {'bm25_b': 0.4})
    """
    wanted = {"bm25_k1": settings.bm25_k1, "bm25_b": settings.bm25_b}
    return {name: float(value) for name, value in wanted.items() if value is not None}


def apply_bm25_parameters(
    client: MilvusClient,
    settings: LookupSettings,
    layout: CollectionLayout,
    have: dict[str, float] | None = None,
) -> bool:
    """Rebuild an existing collection's BM25 index when ``bm25_k1`` / ``bm25_b``, set
    explicitly, ask for other values than it has (a parameter left unset keeps the index's);
    True when rebuilt. ``have``: the index's parameters when the caller read them already
    (:func:`indexed_bm25_parameters`); the index is then rebuilt with ``have`` | the explicit.

    ``bm25_defaults`` never rebuilds one: it decides the index of a NEW collection. A rebuild
    releases the collection until its indexes are built again (seconds on Milvus Lite), so
    every lookup of every process fails meanwhile: that is the user's choice, not a default's
    (:func:`bm25_defaults_notice` says when the index differs from what the defaults build).
    """
    wanted = explicit_bm25_parameters(settings)
    if not wanted or layout.sparse_field is None:
        return False
    have = indexed_bm25_parameters(client, layout) if have is None else have
    if all(have.get(name) == value for name, value in wanted.items()):
        return False
    logger.info("rebuilding the BM25 index of %s: %s -> %s", layout.name, have, wanted)
    rebuild_sparse_index(client, layout, have | wanted)
    return True


def _described(bm25: dict[str, float]) -> str:
    return " / ".join(f"{k} {v:g}" for k, v in sorted(bm25.items())) or "the engine's defaults"


def bm25_defaults_notice(
    settings: LookupSettings, layout: CollectionLayout, have: dict[str, float]
) -> str | None:
    """What to tell the user when an existing collection's BM25 index (built with ``have``)
    differs from what the settings build for a new collection of its analyzer (None: it does
    not, or there is no BM25 field): what it has, what they would build, how to apply it.

    Example:
        >>> layout = CollectionLayout("kb", "pk", "text", "vector", 384, "COSINE", "HNSW",
        ...     "sparse", None, None, None, "standard")
        >>> print(bm25_defaults_notice(LookupSettings(), layout, {}))  # doctest: +ELLIPSIS
        collection 'kb' keeps its BM25 index (the engine's defaults): ...BM25_K1=0.9 ...
        >>> bm25_defaults_notice(LookupSettings(bm25_defaults="engine"), layout, {}) is None
        True
    """
    if layout.sparse_field is None:
        return None
    would = bm25_parameters(settings, layout.analyzer)
    if all(have.get(name) == value for name, value in would.items()):
        return None
    assign = " ".join(f"LOOKUP_KNOWLEDGE_{k.upper()}={v:g}" for k, v in sorted(would.items()))
    return (
        f"collection {layout.name!r} keeps its BM25 index ({_described(have)}): "
        f"bm25_defaults={settings.bm25_defaults} builds a new collection of its analyzer "
        f"({layout.analyzer}) with {_described(would)}, and a default never rebuilds an "
        f"existing index. To rebuild it so, run the ingest with {assign} (nothing is "
        "re-embedded; the collection is released until its indexes are built again, seconds "
        "on Milvus Lite: on a server, do it at a quiet time); to keep it and drop this note, "
        "LOOKUP_KNOWLEDGE_BM25_DEFAULTS=engine"
    )


def server_lacks_bm25(client: MilvusClient) -> str | None:
    """Why this Milvus cannot build a BM25 function field (server < 2.5), or None when it can.

    Milvus Lite reports ``milvus_lite-X.Y.Z`` (its engine has BM25); a server ``vX.Y.Z``.
    """
    try:
        version = str(client.get_server_version())
    except Exception:  # unknown: try, and fall back if creation fails
        return None
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match and (int(match.group(1)), int(match.group(2))) < (2, 5):
        return f"Milvus server {version} has no BM25 function (needs 2.5 or later)"
    return None
