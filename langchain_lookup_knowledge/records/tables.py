"""The records' tables: ``tool_invocation`` (one row per lookup), ``tool_invocation_source``
(one row per document a lookup cited) and ``tool_invocation_loss`` (how many rows a recorder
could not keep, and when), with the indexes the report reads.

Definitions only: :mod:`~langchain_lookup_knowledge.records.database` creates and upgrades them,
:mod:`~langchain_lookup_knowledge.recording` writes rows, the rest of ``records`` reads them.

Example:
    >>> sorted(metadata.tables)
    ['tool_invocation', 'tool_invocation_loss', 'tool_invocation_source']
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["metadata", "tool_invocation", "tool_invocation_loss", "tool_invocation_source"]

metadata = MetaData()
tool_invocation = Table(
    "tool_invocation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tool_name", String(128), nullable=False),
    Column("query", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("latency_ms", Float, nullable=True),
    Column("found", Boolean, nullable=False),
    Column("evidence_status", String(32), nullable=False),
    Column("retrieval_layer", String(16), nullable=True),
    Column("retrieval_details", JSON().with_variant(JSONB(), "postgresql"), nullable=False),
    Column("error", Text, nullable=True),
    # Indexed facts of retrieval_details, so the report aggregates in SQL (records/columns.py
    # derives them; rows written before they existed are filled in by records/upgrade.py).
    Column("record_version", Integer, nullable=True),
    Column("collection", String(255), nullable=True),
    Column("scope", Text, nullable=True),  # canonical JSON of the default_filter ("" if none)
    Column("query_hash", String(64), nullable=True),
    Column("relevance_level", String(16), nullable=True),
    Column("relevance_score", Float, nullable=True),  # 0..1, the judgement's relevanceScore
    Column("fallback_reason", String(64), nullable=True),
    Column("category_filter", String(255), nullable=True),
    Column("path_fallback", String(255), nullable=True),
    Column("error_kind", String(64), nullable=True),
    Index("ix_tool_invocation_created_at", "created_at"),
    Index("ix_tool_invocation_scope_created_at", "scope", "created_at"),
    Index("ix_tool_invocation_record_version", "record_version"),  # rows to backfill
    # Covers every column the report aggregates: its scans read this index, not the rows
    # with their retrieval_details (records/queries.py).
    Index(
        "ix_tool_invocation_report",
        "created_at",
        "collection",
        "scope",
        "found",
        "evidence_status",
        "relevance_level",
        "fallback_reason",
        "path_fallback",
        "error_kind",
        "category_filter",
        "latency_ms",
        "query_hash",
        "id",
    ),
)
tool_invocation_source = Table(
    "tool_invocation_source",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("invocation_id", Integer, nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("collection", String(255), nullable=True),
    Column("scope", Text, nullable=True),
    Column("source", String(1024), nullable=False),
    Column("evidence_blocks", Integer, nullable=False),  # 0: nearest candidate, not evidence
    Column("in_context", Boolean, nullable=False),
    Column("similarity", Float, nullable=True),
    Index(
        "ix_tool_invocation_source_report",
        "created_at",
        "collection",
        "scope",
        "source",
        "evidence_blocks",
        "in_context",
        "invocation_id",
    ),
)
"""One row per document a lookup cited (or came nearest to, when it found no evidence)."""
tool_invocation_loss = Table(
    "tool_invocation_loss",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("first_lost_at", DateTime(timezone=True), nullable=False),
    Column("last_lost_at", DateTime(timezone=True), nullable=False),
    Column("rows_lost", Integer, nullable=False),
    Column("reason", String(64), nullable=False),  # records.losses.QUEUE_FULL / AT_EXIT
    Column("collection", String(255), nullable=True),
    Column("scope", Text, nullable=True),
    Index("ix_tool_invocation_loss_last_lost_at", "last_lost_at"),
)
"""Rows a recorder dropped (its queue full) or could not write before its process ended."""
