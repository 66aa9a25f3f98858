"""Whether a knowledge base's store is damaged, as opposed to empty or unreachable.

Two checks, both cheap, run where a damaged store would otherwise read as "nothing found":

- the files of a Milvus Lite database (``<file>.db/collections/<name>/``): ``schema.json`` and
  ``manifest.json`` parse, and every data file the manifest lists is there and is a whole
  Parquet file (its ``PAR1`` magic at both ends): a few ``stat`` calls and 8 bytes read per
  data file;
- the chunk collection against its catalog: no chunks while the catalog lists documents with
  chunks (one ``count(*)``).

The lookup runtime runs both when it opens the collection, when a search fails, and when a
search comes back with no candidate at all (a dense search of a collection that holds chunks
always returns some). Ingest checks the files before it writes.

Example:
    >>> lite_file_problems(Path("/nonexistent/milvus.db"), ["knowledge"])
    []
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.errors import DamagedStoreError
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "REBUILD_HINT",
    "check_store",
    "damaged_store_error",
    "lite_file_problems",
    "store_collections",
]

REBUILD_HINT = "lookup-knowledge ingest --rebuild FOLDER"
"""The fix: drop the collection, its catalog and vocabulary, and ingest the folder again."""
_PARQUET_MAGIC = b"PAR1"


def store_collections(settings: LookupSettings) -> list[str]:
    """The collections of one knowledge base: chunks, catalog, catalog vocabulary."""
    catalog = settings.resolved_catalog_collection
    return [settings.collection, catalog, f"{catalog}_vocabulary"]


def _json_problem(path: Path) -> str | None:
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{path.name} is missing"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"{path.name} is unreadable ({type(exc).__name__})"
    return None


def _parquet_problem(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            size = handle.seek(0, 2)
            if size < 12:
                return f"{path.name} is truncated ({size} bytes)"
            handle.seek(-4, 2)
            tail = handle.read(4)
    except FileNotFoundError:
        return f"{path.name} is missing"
    except OSError as exc:
        return f"{path.name} is unreadable ({exc.strerror or type(exc).__name__})"
    if head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
        return f"{path.name} is not a whole Parquet file (truncated or overwritten)"
    return None


def _collection_problems(folder: Path) -> list[str]:
    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():  # a creation that never finished (a full disk): no data
        return []
    problems = [p for p in (_json_problem(folder / "schema.json"),) if p]
    problem = _json_problem(manifest_path)
    if problem:
        return [*problems, problem]
    manifest: Any = json.loads(manifest_path.read_text(encoding="utf-8"))
    partitions = manifest.get("partitions") if isinstance(manifest, dict) else None
    if not isinstance(partitions, dict):
        return [*problems, "manifest.json lists no partitions"]
    for partition, files in partitions.items():
        listed = files.get("data_files", []) if isinstance(files, dict) else []
        listed += files.get("delta_files", []) if isinstance(files, dict) else []
        for relative in listed:
            path = folder / "partitions" / str(partition) / str(relative)
            if path.suffix == ".parquet":
                problem = _parquet_problem(path)
            else:
                problem = None if path.is_file() else f"{path.name} is missing"
            if problem:
                problems.append(problem)
    return problems


def lite_file_problems(db_path: Path, collections: Iterable[str]) -> list[str]:
    """What is wrong with the files of ``collections`` in the Milvus Lite database
    ``db_path`` (a folder holding ``collections/<name>/``); empty when they are whole.

    A collection without a folder is not checked (it does not exist: not damage), nor is a
    database of another layout.
    """
    problems: list[str] = []
    for name in collections:
        folder = db_path / "collections" / name
        if folder.is_dir():
            problems += [f"{name}: {p}" for p in _collection_problems(folder)]
    return problems


def _chunk_count(client: MilvusClient, collection: str, timeout: float) -> int:
    rows = client.query(collection, filter="", output_fields=["count(*)"], timeout=timeout)
    return int(rows[0]["count(*)"]) if rows else 0


def damaged_store_error(settings: LookupSettings, problems: Sequence[str]) -> DamagedStoreError:
    """The error naming the database, the fix, then what is damaged (the fix first: a message
    cut short keeps it)."""
    where = (
        f"Milvus Lite database {settings.resolved_milvus_uri}"
        if settings.is_milvus_lite
        else f"collection {settings.collection!r} at {settings.resolved_milvus_uri}"
    )
    shown = "; ".join(problems[:3]) + (f"; {len(problems) - 3} more" if len(problems) > 3 else "")
    return DamagedStoreError(
        f"{where} is damaged, retrying will not help: rebuild it with `{REBUILD_HINT}`; "
        f"damaged: {shown}"
    )


def check_store(
    client: MilvusClient,
    settings: LookupSettings,
    catalog: Sequence[CatalogEntry] | None,
) -> None:
    """Raise :class:`DamagedStoreError` when the store is damaged (see the module's checks).

    ``catalog``: the catalog's entries when already read (``None``: not compared).
    """
    problems: list[str] = []
    if settings.is_milvus_lite:
        problems = lite_file_problems(
            Path(settings.resolved_milvus_uri), store_collections(settings)
        )
    if not problems and catalog:
        expected = sum(max(e.chunk_count, 0) for e in catalog)
        if expected > 0 and client.has_collection(settings.collection):
            held = _chunk_count(client, settings.collection, settings.milvus_timeout_s)
            if held == 0:
                problems.append(
                    f"collection {settings.collection!r} holds no chunks while its catalog "
                    f"lists {len(catalog)} documents ({expected} chunks)"
                )
    if problems:
        raise damaged_store_error(settings, problems)


def prepare_for_ingest(
    client: MilvusClient, settings: LookupSettings, *, rebuild: bool, folder: str
) -> list[str]:
    """Before an ingest writes: refuse a damaged store (the error names what is damaged and the
    rebuild command for ``folder``); with ``rebuild``, drop the collection, its catalog and
    vocabulary first, damaged or not. Returns the collections dropped.

    Example:
        >>> prepare_for_ingest(client, settings, rebuild=False, folder="kb")  # doctest: +SKIP
        []
    """
    names = store_collections(settings)
    if not rebuild:
        problems = (
            lite_file_problems(Path(settings.resolved_milvus_uri), names)
            if settings.is_milvus_lite
            else []
        )
        if problems:
            error = damaged_store_error(settings, problems)
            raise DamagedStoreError(str(error).replace("FOLDER", folder))
        return []
    dropped = []
    for name in names:
        try:
            if (
                settings.is_milvus_lite
                and (Path(settings.resolved_milvus_uri) / "collections" / name).is_dir()
            ):
                client.drop_collection(name)  # Milvus Lite drops a damaged one too
                dropped.append(name)
            elif client.has_collection(name):
                client.drop_collection(name)
                dropped.append(name)
        except Exception as exc:
            raise DamagedStoreError(
                f"cannot drop collection {name!r} of {settings.resolved_milvus_uri} to rebuild "
                f"it ({describe_exception(exc, limit=200)}); move the database aside and "
                f"ingest {folder} again"
            ) from None
    return dropped
