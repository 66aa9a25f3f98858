"""What documents a run owns in the store: one folder per namespace, and the ones gone from it.

Example:
    >>> from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
    >>> entry = CatalogEntry(source="a.md", title="A", category="", chunk_count=2)
    >>> stored_problem(entry, {"a.md#0"})
    'stored chunks differ from the catalog: 1 of 2 chunks missing'
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.ingest_report import IngestReport
from langchain_lookup_knowledge.ingest_write import FolderScope
from langchain_lookup_knowledge.knowledge import is_bundled_sample
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.knowledge.chunking import evidence_key
from langchain_lookup_knowledge.knowledge.loader import SkippedFile
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import delete_entries
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = ["check_one_root", "settle_absent", "stored_problem"]

logger = logging.getLogger(__name__)


def check_one_root(
    known: dict[str, CatalogEntry], scope: FolderScope, settings: LookupSettings
) -> None:
    """Refuse to mix two folders in one namespace (B would overwrite A's same paths, and
    ``--prune`` would delete all of A). A Milvus Lite database is local: when the other folder
    no longer exists, this one is taken as that folder moved."""
    if scope.namespace:
        return  # a named namespace is the identity: the folder may move (a CI checkout)
    others = sorted(
        {e.root for e in known.values() if not e.namespace and e.root and e.root != scope.root}
    )
    if settings.is_milvus_lite and not any(Path(other).is_dir() for other in others):
        if others:
            logger.warning("%s takes the place of %s (no longer on disk)", scope.root, others[0])
        return
    if others and all(is_bundled_sample(o) for o in others):  # `lookup-knowledge demo`'s
        logger.warning("%s takes the place of the bundled sample", scope.root)
        return
    if others:
        count = sum(1 for e in known.values() if e.root == others[0])
        msg = (
            f"the collection already holds {count} document(s) ingested from {others[0]}, "
            f"not from {scope.root}: ingest each folder with its own --source-prefix "
            "(namespace) to keep both, or use another --collection"
        )
        raise ConfigurationError(msg)


def stored_problem(entry: CatalogEntry, keys: set[str]) -> str | None:
    """What differs between a catalog entry and the chunks really stored (None: they agree)."""
    if entry.problems:
        return "damaged catalog row (" + "; ".join(entry.problems) + ")"
    expected = {evidence_key(entry.source, i) for i in range(entry.chunk_count)}
    if keys == expected and expected:
        return None
    missing, extra = len(expected - keys), len(keys - expected)
    parts = []
    if missing:
        parts.append(f"{missing} of {entry.chunk_count} chunks missing")
    if extra:
        parts.append(f"{extra} chunks the catalog does not list")
    if not parts:
        parts.append("the catalog lists no chunks")
    return "stored chunks differ from the catalog: " + ", ".join(parts)


def _in_namespace(source: str, namespace: str, other_prefixes: set[str]) -> bool:
    if namespace:
        return source.startswith(f"{namespace}/")
    return not any(source.startswith(f"{p}/") for p in other_prefixes)


def settle_absent(
    client: Any,
    layout: CollectionLayout,
    catalog_name: str,
    known: dict[str, CatalogEntry],
    stored: dict[str, set[str]],
    scope: FolderScope,
    report: IngestReport,
) -> None:
    """Documents of this namespace that are no longer on disk: pruned when asked, else
    reported; a catalog row with no chunks and no file (a hint for nothing) is removed."""
    others = {e.namespace for e in known.values() if e.namespace and e.namespace != scope.namespace}
    ours = {s for s, e in known.items() if e.namespace == scope.namespace}
    gone = sorted(ours - scope.present)
    # The demo's sample gives way to the user's folder whole (removed as if pruned).
    sample = [] if scope.prune else [s for s in gone if is_bundled_sample(known[s].root)]
    if sample:
        for batch in _batches(sample, 500):
            client.delete(layout.name, filter=condition(layout.source_ref(), batch))
        delete_entries(client, catalog_name, sample)
        report.pruned = sample
        gone = [s for s in gone if s not in set(sample)]
    # Chunks of a document that never got its catalog entry (a killed run), no file either.
    orphans = sorted(
        s
        for s in stored
        if s not in known and s not in scope.present and _in_namespace(s, scope.namespace, others)
    )
    if scope.prune:
        for batch in _batches([*gone, *orphans], 500):
            client.delete(layout.name, filter=condition(layout.source_ref(), batch))
        delete_entries(client, catalog_name, gone)
        report.pruned = gone
        return
    hollow = [s for s in gone if not stored.get(s)]
    if hollow:
        delete_entries(client, catalog_name, hollow)
        report.repaired.extend(
            SkippedFile(s, "catalog entry without chunks or file, removed") for s in hollow
        )
    report.missing = sorted({*(s for s in gone if stored.get(s)), *orphans})
    if report.missing:
        logger.warning(
            "%d indexed documents are no longer on disk (run with --prune)", len(report.missing)
        )


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]
