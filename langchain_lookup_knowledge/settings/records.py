"""The persisted record of each lookup: where, what it keeps, how long, how it is written.

Example:
    >>> RecordSettings().record_query_text
    'full'
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["RecordSettings"]


class RecordSettings(BaseModel):
    """The ``tool_invocation`` records (SQLite by default, PostgreSQL by URL)."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    record_invocations: bool = Field(default=True, description="Persist tool_invocation rows.")
    invocation_db_url: str | None = Field(
        default=None,
        repr=False,  # may hold a database password
        description="SQLAlchemy URL for tool_invocation (postgresql+psycopg://...). "
        "Default: sqlite:///<data_dir>/invocations.sqlite3.",
    )
    record_query_text: Literal["full", "hash", "none"] = Field(
        default="full",
        description="What a record keeps of the question: full (the text), hash (a SHA-256 of "
        "the normalized text: repeats still count, the text is never stored) or none. The "
        "query-term lists of hit reasons are dropped under hash and none.",
    )
    records_retention_days: float | None = Field(
        default=None,
        gt=0,
        le=36_500,
        description="Records older than this many days are deleted automatically (checked at "
        "most once an hour by the recorder). None: kept until `lookup-knowledge records prune`.",
    )
    record_wait: bool = Field(
        default=False,
        description="Whether a lookup waits for its record to be written before it returns. "
        "false: the row goes to the recorder's writer thread and the lookup returns at once "
        "(trace: recording.status = 'queued'); a failed write keeps the row in memory and is "
        "logged. true: the trace has the row's id, or why it was not written in time.",
    )

    @field_validator("invocation_db_url")
    @classmethod
    def _records_url_names_a_known_database(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        scheme = value.split("://", 1)[0] if "://" in value else ""
        try:
            make_url(value).get_dialect().import_dbapi()
        except NoSuchModuleError:
            raise ValueError(
                f"unknown database {scheme!r} in the URL: use postgresql+psycopg://user@host/db "
                "or sqlite:///path/to/file.sqlite3"
            ) from None
        except (ArgumentError, ValueError):
            raise ValueError(
                "not a database URL: use postgresql+psycopg://user@host/db or "
                "sqlite:///path/to/file.sqlite3"
            ) from None
        except ImportError as exc:  # the dialect is known, its driver is not installed
            raise ValueError(
                f"the driver of {scheme!r} is not installed ({exc.name or exc}): for PostgreSQL "
                "pip install 'langchain-lookup-knowledge[postgres]' and use postgresql+psycopg://"
            ) from None
        return value
