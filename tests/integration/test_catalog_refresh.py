"""The L0 catalog is read again off the lookup's path: a lookup never waits for a reload.

A real catalog of many generated documents in Milvus Lite. The fault: a catalog reload that
hangs until the test releases it (an injected slow read of the catalog collection).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline import runtime as runtime_module
from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.catalog_store import upsert_entries
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.schema import ensure_catalog_collection

DOCUMENTS = 3000


def _entry(i: int, title: str | None = None) -> CatalogEntry:
    return CatalogEntry(
        source=f"team{i % 20}/doc{i:05d}.md",
        title=title or f"Runbook {i:05d} zeta{i:05d} alert",
        category=f"area{i % 40}",
        keywords=(f"kw{i:05d}",),
        content_hash=f"h{i}",
        chunk_count=1,
    )


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    return thread, out


def test_a_lookup_does_not_wait_for_a_catalog_reload_and_sees_the_new_catalog_after(
    settings: LookupSettings, monkeypatch: pytest.MonkeyPatch
):
    client = open_client(settings)
    catalog = ensure_catalog_collection(client, settings)
    for start in range(0, DOCUMENTS, 500):
        upsert_entries(client, catalog, [_entry(i) for i in range(start, start + 500)])
    client.flush(catalog)
    runtime = LookupRuntime(settings)
    first = runtime.matcher()
    assert first.match("kw00042 fired").hints.matched_keywords  # the real catalog is read

    # The fault: the next catalog read hangs until released.
    release, reading = threading.Event(), threading.Event()
    real_load = runtime_module.load_catalog

    def hanging_load(*args: Any, **kwargs: Any) -> list[CatalogEntry]:
        reading.set()
        release.wait(120)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(runtime_module, "load_catalog", hanging_load)
    monkeypatch.setattr(runtime_module, "CATALOG_TTL_S", 0.0)  # the catalog is stale now
    upsert_entries(client, catalog, [_entry(DOCUMENTS, title="Quasar gateway meltdown")])
    client.flush(catalog)
    try:
        lookup, answered = _in_thread(runtime.matcher)
        assert reading.wait(60), "the stale catalog was never read again"
        lookup.join(30)
        # Answered while the reload still hangs: with the catalog loaded before.
        assert not lookup.is_alive(), "the lookup waited for the catalog reload"
        assert not answered[0].match("quasar gateway meltdown").hints.matched_titles
        assert answered[0].match("kw00042 fired").hints.matched_keywords
    finally:
        release.set()
    # Once the reload ends, its catalog replaces the old one.
    for _ in range(600):
        if runtime.matcher().match("quasar gateway meltdown").hints.matched_titles:
            break
        threading.Event().wait(0.05)
    assert runtime.matcher().match("quasar gateway meltdown").hints.matched_titles


def test_an_unchanged_catalog_keeps_its_matcher_across_reloads(
    settings: LookupSettings, monkeypatch: pytest.MonkeyPatch
):
    """Memory grows with the catalog, not with a copy per reload: an unchanged catalog read
    again keeps the loaded one (the same matcher object)."""
    client = open_client(settings)
    catalog = ensure_catalog_collection(client, settings)
    upsert_entries(client, catalog, [_entry(i) for i in range(200)])
    client.flush(catalog)
    runtime = LookupRuntime(settings)
    first = runtime.matcher()
    monkeypatch.setattr(runtime_module, "CATALOG_TTL_S", 0.0)
    runtime.matcher()  # stale: a reload starts
    runtime.catalog.wait_idle(60)
    assert runtime.matcher() is first
    runtime.refresh_catalog()
    assert runtime.matcher() is first
