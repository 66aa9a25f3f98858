"""What a process is told when a Milvus Lite file is already open in another process.

Example:
    >>> "lookup-knowledge serve" in lite_locked_message("/kb/milvus.db")
    True
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_PORT = 19530
"""The port ``lookup-knowledge serve`` listens on unless told otherwise (Milvus's own)."""


def lite_locked_message(path: Path | str) -> str:
    """What a process that finds the Lite file ``path`` open elsewhere is told: why, and the fix.

    Example:
        >>> print(lite_locked_message("/kb/milvus.db"))  # doctest: +NORMALIZE_WHITESPACE
        Milvus Lite database /kb/milvus.db is locked by another process (one process at a time
        may open a Lite file): share it by serving it, `lookup-knowledge serve --uri
        /kb/milvus.db` (once the other process stops, unless it is that server), and point
        every process at the URI it prints (--uri http://127.0.0.1:19530 or
        LOOKUP_KNOWLEDGE_MILVUS_URI)
    """
    return (
        f"Milvus Lite database {path} is locked by another process (one process at a time may "
        "open a Lite file): share it by serving it, `lookup-knowledge serve --uri "
        f"{path}` (once the other process stops, unless it is that server), and point every "
        f"process at the URI it prints (--uri http://127.0.0.1:{DEFAULT_PORT} or "
        "LOOKUP_KNOWLEDGE_MILVUS_URI)"
    )
