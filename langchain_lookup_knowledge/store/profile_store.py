"""Persist the knowledge base's judgement profile beside its vocabulary.

The profile (:class:`~langchain_lookup_knowledge.judgement.features.KbProfile`) is one row of the
vocabulary collection (``<catalog>_vocabulary``, part ``profile``), tied to the vocabulary
generation it was measured on: a vocabulary rebuilt since (the chunks changed) makes it stale,
and the next ingest measures it again. Reading never fails a lookup: no row, a stale row or a
damaged one is "no profile", with the reason.

Example:
    >>> read_profile(client, settings).note  # doctest: +SKIP
    'no KB profile (collection ingested before profiles; re-ingest adds it)'
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.judgement.features import KbProfile
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.schema import CATALOG_VECTOR_FIELD, ensure_loaded
from langchain_lookup_knowledge.store.vocabulary_store import HEADER, vocabulary_collection

__all__ = ["PROFILE_PART", "PROFILE_VERSION", "ProfileRead", "read_profile", "write_profile"]

logger = logging.getLogger(__name__)

PROFILE_PART = "profile"
PROFILE_VERSION = 1
"""Bumped when the profiling questions or the key scores change (the next ingest re-measures)."""
_MISSING = "no KB profile (collection ingested before profiles; re-ingest adds it)"


@dataclass(frozen=True)
class ProfileRead:
    """What reading the profile gave: the profile, or ``None`` and why (``note``)."""

    profile: KbProfile | None
    note: str = ""
    info: dict[str, Any] | None = None


def _vocabulary_generation(client: MilvusClient, name: str) -> str | None:
    rows = client.query(name, filter=f'part == "{HEADER}"', output_fields=["generation"])
    return str(rows[0]["generation"]) if rows else None


def write_profile(
    client: MilvusClient, settings: LookupSettings, profile: KbProfile, seconds: float
) -> None:
    """Store ``profile`` for the current vocabulary generation (the collection must exist)."""
    name = vocabulary_collection(settings)
    ensure_loaded(client, name)
    generation = _vocabulary_generation(client, name) or ""
    info = {
        "version": PROFILE_VERSION,
        "vocabulary_generation": generation,
        "seconds": round(seconds, 2),
        **profile.to_dict(),
    }
    row = {
        "part": PROFILE_PART,
        "generation": f"{PROFILE_PART}:{generation}",
        "body": "",
        "info": info,
        CATALOG_VECTOR_FIELD: [0.0, 0.0],
    }
    client.upsert(name, [row])
    client.flush(name)


def read_profile(client: MilvusClient, settings: LookupSettings) -> ProfileRead:
    """The stored profile of the current vocabulary, or ``None`` with the reason."""
    name = vocabulary_collection(settings)
    if not client.has_collection(name):
        return ProfileRead(None, _MISSING)
    ensure_loaded(client, name)
    rows = client.query(name, filter=f'part == "{PROFILE_PART}"', output_fields=["info"])
    if not rows:
        return ProfileRead(None, _MISSING)
    info = rows[0].get("info")
    if not isinstance(info, dict) or info.get("version") != PROFILE_VERSION:
        return ProfileRead(None, "KB profile of another release ignored (re-ingest measures it)")
    if info.get("vocabulary_generation") != _vocabulary_generation(client, name):
        return ProfileRead(
            None, "KB profile stale: the chunks changed since (re-ingest measures it)"
        )
    try:
        profile = KbProfile.from_dict(info)
    except (TypeError, ValueError, AttributeError) as exc:
        logger.warning("KB profile ignored: %s", exc)
        return ProfileRead(None, f"KB profile ignored: {exc} (re-ingest measures it)")
    return ProfileRead(profile, info=info)


def profile_is_current(client: MilvusClient, settings: LookupSettings) -> bool:
    """Whether a profile of this version was measured on the current vocabulary."""
    return read_profile(client, settings).profile is not None
