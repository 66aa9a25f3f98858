"""Creating, loading and warming collections, and telling a full disk from other failures.

Example:
    >>> is_disk_full(OSError(28, "No space left on device"))
    True
"""

from __future__ import annotations

import errno
import logging
import shutil
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.errors import StoreUnavailableError
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.layout import (
    CONSISTENCY_LEVEL,
    CollectionLayout,
    dense_search_params,
)

__all__ = [
    "clear_unfinished_lite_collection",
    "create_indexed_collection",
    "ensure_loaded",
    "is_disk_full",
    "warm_up",
]

logger = logging.getLogger(__name__)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or its cause) is "no space left on device" (also as Milvus's text)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno == errno.ENOSPC:
            return True
        text = str(seen)
        if "No space left on device" in text or "[Errno 28]" in text:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def clear_unfinished_lite_collection(settings: LookupSettings, name: str) -> None:
    """Remove what a Milvus Lite collection creation killed by a full disk left behind.

    Milvus Lite makes the collection's folder, then writes ``schema.json`` (via
    ``schema.json.tmp``); when that write fails (no space left), the folder stays and every
    later creation fails with "File exists", even after space is freed. A folder without
    ``schema.json`` is no collection (Milvus Lite itself says so): when it holds nothing but
    the unfinished schema it is removed; anything else there is left, with what to do.
    """
    if not settings.is_milvus_lite or settings.milvus_db_name not in (None, "", "default"):
        return
    folder = Path(settings.resolved_milvus_uri).expanduser() / "collections" / name
    if not folder.is_dir() or (folder / "schema.json").exists():
        return
    leftovers = {p.name for p in folder.iterdir()}
    if leftovers <= {"schema.json.tmp"}:
        logger.warning("removing %s: a collection creation that never finished", folder)
        shutil.rmtree(folder)
        return
    msg = (
        f"{folder} is an unfinished Milvus Lite collection (no schema.json; it holds "
        f"{sorted(leftovers)}), left by a creation that failed (a full disk?): move it "
        "away, then run the ingest again"
    )
    raise StoreUnavailableError(msg)


def create_indexed_collection(
    client: MilvusClient,
    name: str,
    schema: Any,
    index: Any,
    properties: dict[str, str] | None = None,
) -> None:
    """Create (with ``properties``), index and load a collection.

    ``create_collection(index_params=...)`` waits for the index through ``AllocTimestamp``,
    which Milvus Lite does not implement (its server logs a traceback per call): index without
    waiting, then load, which waits for the index itself.
    """
    extra: dict[str, Any] = {"properties": properties} if properties else {}
    client.create_collection(name, schema=schema, consistency_level=CONSISTENCY_LEVEL, **extra)
    client.create_index(name, index, sync=False)
    client.load_collection(name)


def ensure_loaded(client: MilvusClient, name: str, timeout: float | None = None) -> None:
    """Load a collection into memory if it is not (a reopened collection starts released);
    ``timeout``: the most the load may take (None: the client's own bound)."""
    state = client.get_load_state(name)
    loaded = str(state.get("state", "")) if isinstance(state, dict) else str(state)
    if "Loaded" not in loaded:
        client.load_collection(name, **({"timeout": timeout} if timeout is not None else {}))


def warm_up(
    client: MilvusClient, layout: CollectionLayout, settings: LookupSettings, vector: list[float]
) -> None:
    """Run one dense and (with BM25) one BM25 search of one hit, each bounded by
    ``settings.milvus_load_timeout_s``.

    Milvus Lite reports a reopened collection loaded at once but prepares its BM25 search on
    the first one (1.1-3.5 s for 3,485 chunks on a loaded 2-core machine, then 0.04 s): done
    here, when a lookup runtime opens the collection, a lookup's search timeout bounds the
    search alone. A failure is logged, never raised: the lookup's own search then decides.
    """
    searches: list[tuple[str, list[Any], dict[str, Any]]] = [
        (layout.vector_field, [vector], dense_search_params(layout, settings))
    ]
    timeout = settings.milvus_load_timeout_s
    if layout.sparse_field is not None:
        searches.append((layout.sparse_field, ["warm up"], {"metric_type": "BM25"}))
    for field, data, params in searches:
        try:
            client.search(
                layout.name,
                data=data,
                anns_field=field,
                search_params=params,
                limit=1,
                output_fields=[layout.id_field],
                timeout=timeout,
            )
        except Exception as exc:
            logger.warning(
                "collection %r: the first search of %r failed within %gs "
                "(milvus_load_timeout_s): %s",
                layout.name,
                field,
                timeout,
                describe_exception(exc, limit=200),
            )
