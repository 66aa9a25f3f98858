"""Everything a lookup needs that is expensive to make: created once per graph, then reused.

The Milvus client, the collection layout, the embedder (with its query cache), both L1 paths and
the L0 matcher over the catalog. Creation is lazy and thread-safe, so building a graph never
touches Milvus and a failing path is reported at lookup time, where auto mode can fall back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from langchain_core.embeddings import Embeddings
from pymilvus import MilvusClient, MilvusException

from langchain_lookup_knowledge.core.filters import filter_to_expr
from langchain_lookup_knowledge.embeddings import (
    CachedQueryEmbeddings,
    build_embeddings,
    cached_embeddings,
)
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.catalog_view import (
    MATCHER_SCOPES,
    CatalogView,
)
from langchain_lookup_knowledge.pipeline.l0 import L0Matcher
from langchain_lookup_knowledge.pipeline.refreshing import Refreshing
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.retrieval.request import L1Path
from langchain_lookup_knowledge.retrieval.sdk import SdkPath
from langchain_lookup_knowledge.retrieval.vectorstore import VectorStorePath
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import load_catalog, sources_in_scope
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.describe import describe_for_embedder
from langchain_lookup_knowledge.store.embedder_record import settings_for_collection
from langchain_lookup_knowledge.store.integrity import check_store
from langchain_lookup_knowledge.store.profile_store import read_profile
from langchain_lookup_knowledge.store.schema import CollectionLayout, warm_up
from langchain_lookup_knowledge.store.vocabulary_store import VocabularyRead, load_vocabulary

__all__ = [
    "CATALOG_TTL_S",
    "MATCHER_SCOPES",
    "SCOPED_LOOKUP_NOTE",
    "CatalogView",
    "Created",
    "LookupRuntime",
]

if TYPE_CHECKING:
    from langchain_lookup_knowledge.recording import InvocationRecorder

logger = logging.getLogger(__name__)

CATALOG_TTL_S = 30.0
Created = TypeVar("Created")


SCOPED_LOOKUP_NOTE = (
    "KB vocabulary not read for a scoped lookup (it counts the documents of every scope, so "
    "it could tell one tenant what another's documents hold)"
)


class LookupRuntime:
    """Shared, lazily created resources of one configured pipeline.

    Example:
        >>> runtime = LookupRuntime(LookupSettings())  # doctest: +SKIP
        >>> runtime.matcher().match("etcd is slow").hints.domains  # doctest: +SKIP
        ['etcd']
    """

    def __init__(
        self,
        settings: LookupSettings,
        *,
        embeddings: Embeddings | None = None,
        path_factories: dict[str, Callable[[], L1Path]] | None = None,
        recorder: InvocationRecorder | None = None,
    ) -> None:
        self.settings = settings
        self._embeddings = (  # the configured one is built on first use
            None if embeddings is None else cached_embeddings(settings, embeddings)
        )
        self._lock = threading.RLock()
        self._client: MilvusClient | None = None
        self._layout: CollectionLayout | None = None
        self._paths: dict[str, L1Path] = {}
        self._path_locks: dict[str, threading.Lock] = {}
        self._path_factories = dict(path_factories or {})
        # What L0 and the evidence decision read: reloaded in the background after the TTL, so
        # a lookup never waits for a reload (only the very first read loads in its thread).
        self.catalog: Refreshing[CatalogView] = Refreshing(
            self._load_catalog_view, lambda: CATALOG_TTL_S, "catalog"
        )
        self._vocabularies: Refreshing[VocabularyRead] = Refreshing(
            self._read_vocabulary, lambda: CATALOG_TTL_S, "vocabulary"
        )
        self.recorder = recorder

    @classmethod
    def configured(
        cls,
        settings: LookupSettings,
        *,
        embeddings: Embeddings | None = None,
        recorder: InvocationRecorder | None = None,
    ) -> LookupRuntime:
        """A runtime with the configured recorder (``tool_invocation`` rows) unless given one.

        Example:
            >>> runtime = LookupRuntime.configured(LookupSettings(record_invocations=False))
            >>> runtime.recorder is None
            True
        """
        if recorder is None and settings.record_invocations:
            from langchain_lookup_knowledge.recording import recorder_for

            recorder = recorder_for(settings)
        return cls(settings, embeddings=embeddings, recorder=recorder)

    def _once(self, attribute: str, create: Callable[[], Created]) -> Created:
        """``self.<attribute>``, made by ``create`` on first use (under the runtime's lock)."""
        with self._lock:
            value = getattr(self, attribute)
            if value is None:
                value = create()
                setattr(self, attribute, value)
            return value

    @property
    def embeddings(self) -> CachedQueryEmbeddings:
        """The query embedder (created on first use): under ``embedding_provider=auto``, the
        bundled model the collection records (:func:`settings_for_collection`)."""
        return self._once("_embeddings", lambda: build_embeddings(self._resolved_settings()))

    def _resolved_settings(self) -> LookupSettings:
        """``self.settings`` with ``auto`` resolved against the collection, once; they then
        replace ``self.settings``, so every step reads the model the lookups really use (the
        CJK rule, the evidence decision)."""
        with self._lock:
            if self.settings.embedding_provider == "auto":
                try:
                    self.settings, _ = settings_for_collection(self.client, self.settings)
                except MilvusException:
                    self.check_store()  # a damaged store is named as such
                    raise
            return self.settings

    @property
    def client(self) -> MilvusClient:
        """The shared ``MilvusClient``."""
        return self._once("_client", lambda: open_client(self.settings))

    @property
    def layout(self) -> CollectionLayout:
        """The chunk collection as it really is (schema checked against the embedder)."""
        return self._once("_layout", self._describe_layout)

    def _describe_layout(self) -> CollectionLayout:
        embeddings = self.embeddings  # first: it resolves ``auto`` against the collection
        try:
            layout, probe = describe_for_embedder(self.client, self.settings, embeddings)
            warm_up(self.client, layout, self.settings, probe)
        except MilvusException:
            self.check_store()  # a damaged store is named as such, not as a Milvus failure
            raise
        self.check_store()  # once per open: the files, and chunks against the catalog
        return layout

    def check_store(self) -> None:
        """Raise :class:`~langchain_lookup_knowledge.errors.DamagedStoreError` when the store
        is damaged (:mod:`~langchain_lookup_knowledge.store.integrity`): run on open, after a
        failed search and after a search that found no candidate at all."""
        view = self.catalog.peek()
        check_store(self.client, self.settings, view.entries if view is not None else None)

    def path(self, name: str) -> L1Path:
        """The L1 path called ``name`` ("vectorstore" or "sdk"), created once.

        Each path is created under its own lock: a path that hangs while opening (a sidecar's,
        say) never blocks the other one.
        """
        with self._lock:
            path_lock = self._path_locks.setdefault(name, threading.Lock())
        with path_lock:
            existing = self._paths.get(name)
            if existing is not None:
                return existing
            factory = self._path_factories.get(name)
            if factory is not None:
                created: L1Path = factory()
            elif name == "vectorstore":
                created = VectorStorePath(self.settings, self.layout, self.embeddings)
            elif name == "sdk":
                created = SdkPath(self.client, self.layout, self.settings)
            else:
                msg = f"unknown L1 path {name!r}"
                raise ValueError(msg)
            self._paths[name] = created
            return created

    def matcher(self, scope: str | None = None) -> L0Matcher:
        """The L0 matcher over the catalog. A catalog older than a short TTL is read again in
        the background: this returns the loaded one at once (only the first call waits).

        Args:
            scope: The authoritative filter of the lookup (``default_filter`` AND the call's
                ``filters``, as one expression); ``None``: ``default_filter`` alone.

        Under a scope (a deployment's tenant, a caller's own filter) the matcher knows only the
        documents that have chunks in that scope, so one tenant's lookups never hint at
        another's titles, keywords, entities, sources or categories. One matcher is kept per
        scope (the most recent :data:`MATCHER_SCOPES`).
        """
        key = scope if scope is not None else filter_to_expr(self.settings.default_filter)
        view = self.catalog.get()
        found = view.matcher(key)
        if found is not None:
            return found
        # Built outside every lock: a scope's first lookup never holds up another's.
        return view.keep(key, L0Matcher(self._in_scope(view.entries, key)))

    def _load_catalog_view(self, previous: CatalogView | None) -> CatalogView:
        """The catalog and its matchers; the previous view itself when nothing changed."""
        entries = load_catalog(self.client, self.settings.resolved_catalog_collection)
        if previous is not None and previous.entries == entries:
            return previous
        view = CatalogView(entries)
        # The scopes in use get their matcher now (in the reload's thread), not at a lookup.
        for key in previous.scopes() if previous is not None else []:
            view.keep(key, L0Matcher(self._in_scope(entries, key)))
        return view

    def _in_scope(self, entries: list[CatalogEntry], scope: str | None) -> list[CatalogEntry]:
        """The entries with chunks under ``scope`` (all of them without one)."""
        if not scope or not entries:
            return entries
        source_field = self.layout.source_field
        if source_field is None:  # no source column: hints cannot be scoped
            return []
        try:
            allowed = sources_in_scope(self.client, self.layout.name, source_field, scope)
        except MilvusException as exc:  # no hints rather than unscoped ones
            logger.warning(
                "L0 catalog not scoped to the lookup's filter: %s", describe_exception(exc)
            )
            return []
        return [e for e in entries if e.source in allowed]

    def vocabulary_for(self, scope: str | None) -> VocabularyRead:
        """The vocabulary the evidence decision may read for a lookup under ``scope`` (its
        authoritative filter: ``default_filter`` AND the call's ``filters``).

        The vocabulary counts the whole collection, so under a scope it is not read at all:
        whether a term is "seen" would tell a tenant that another tenant's documents hold it
        (the decision's trace lists the unseen terms, and ``found`` would follow them). A scoped
        lookup is judged against the typical profile without vocabulary signals, and its trace
        says why.
        """
        if scope:
            return VocabularyRead(None, SCOPED_LOOKUP_NOTE, profile_note=SCOPED_LOOKUP_NOTE)
        return self.vocabulary()

    def vocabulary(self) -> VocabularyRead:
        """The knowledge base's vocabulary (the evidence decision's), reread after the
        catalog's TTL; never raises: a store that cannot be read is no vocabulary, with why.

        It is the whole collection's, not a scope's: lookups under a filter read
        :meth:`vocabulary_for` instead, which withholds it.
        """
        return self._vocabularies.get()

    def _read_vocabulary(self, previous: VocabularyRead | None) -> VocabularyRead:
        try:
            read = load_vocabulary(self.client, self.settings, previous)
            profiled = read_profile(self.client, self.settings)
            return replace(read, profile=profiled.profile, profile_note=profiled.note)
        except Exception as exc:  # the decision falls back to its model without it
            reason = f"KB vocabulary unreadable: {describe_exception(exc)}"
            logger.warning("%s", reason)
            return VocabularyRead(None, reason)

    def refresh_catalog(self) -> None:
        """Read the catalog and vocabulary again now, in the caller's thread (call after an
        ingest in the same process); lookups meanwhile use the ones loaded before. When the
        store cannot be read, they are forgotten and the next lookup reads them."""
        for value in (self.catalog, self._vocabularies):
            try:
                value.reload_now()
            except Exception as exc:
                logger.warning(
                    "catalog refresh failed (the next lookup reads it): %s", describe_exception(exc)
                )
