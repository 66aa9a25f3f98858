"""The records database: an engine with bounded driver timeouts, the tables created or upgraded.

SQLite by default (one file, write-ahead log), PostgreSQL by URL. The recorder
(:class:`~langchain_lookup_knowledge.recording.SqlInvocationRecorder`) writes through
:func:`open_engine`; the report and the benchmark read through it.

Example:
    >>> from sqlalchemy import inspect
    >>> engine = open_engine("sqlite://")
    >>> sorted(inspect(engine).get_table_names())
    ['tool_invocation', 'tool_invocation_loss', 'tool_invocation_source']
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, inspect
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError

from langchain_lookup_knowledge.records.tables import metadata, tool_invocation
from langchain_lookup_knowledge.records.upgrade import add_missing_columns

__all__ = ["create_schema", "open_engine"]


def open_engine(url: str, *, timeout_s: float = 2.0, connect_timeout_s: float = 2.0) -> Engine:
    """An engine on ``url`` whose waits are bounded, with the tables created (or upgraded).

    ``timeout_s``: SQLite's busy timeout, PostgreSQL's pool timeout; ``connect_timeout_s``:
    PostgreSQL's connect timeout (whole seconds, 2 at least). A SQLite file's folder is created
    and the file runs in write-ahead-log mode.
    """
    parsed = make_url(url)
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": timeout_s, "check_same_thread": False}
    elif backend == "postgresql":
        # libpq's connect_timeout is whole seconds, 2 at least.
        kwargs["connect_args"] = {"connect_timeout": max(2, math.ceil(connect_timeout_s))}
        kwargs["pool_timeout"] = timeout_s
    engine = create_engine(parsed, **kwargs)
    on_disk = parsed.database not in (None, "", ":memory:")
    if backend == "sqlite" and on_disk:
        event.listen(engine, "connect", _sqlite_wal)
    create_schema(engine)
    return engine


def create_schema(engine: Engine) -> None:
    """Create ``tool_invocation`` if missing; safe to call again and from concurrent processes."""
    try:
        metadata.create_all(engine, checkfirst=True)
    except DBAPIError:
        # Another process created it between our check and our CREATE (PostgreSQL reports a
        # duplicate pg_type row): fine if the table is there now.
        if not inspect(engine).has_table(tool_invocation.name):
            raise
    add_missing_columns(engine)  # a table from before the indexed columns


def _sqlite_wal(dbapi_connection: Any, _record: Any) -> None:
    """Write-ahead log, synced at checkpoints: an insert no longer waits for an fsync.

    A committed row survives a crash of the process; only a power loss can take the last
    few. Readers never block the writer.
    """
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()
