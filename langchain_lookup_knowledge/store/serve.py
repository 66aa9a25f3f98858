"""Serve one Milvus Lite file on loopback, so several processes share one knowledge base.

A Milvus Lite file is open in one process at a time (it holds the file's lock). Milvus Lite
ships a server that speaks the Milvus gRPC API (BM25 included): :func:`start_lite_server` runs it
on 127.0.0.1 over the file, and Studio, the CLI and a notebook then all name the same URI
(``--uri http://127.0.0.1:19530`` or ``LOOKUP_KNOWLEDGE_MILVUS_URI``). It binds to loopback only:
the server has no authentication.

Example:
    >>> check_loopback("127.0.0.1")
    '127.0.0.1'
    >>> check_loopback("0.0.0.0")
    Traceback (most recent call last):
    ...
    langchain_lookup_knowledge.errors.ConfigurationError: refusing to serve on '0.0.0.0': ...
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.errors import ConfigurationError, StoreUnavailableError
from langchain_lookup_knowledge.redaction import describe_exception
from langchain_lookup_knowledge.store.connection import check_lite_path
from langchain_lookup_knowledge.store.lite_lock import DEFAULT_PORT, lite_locked_message

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_GRACE_S = 5.0


def check_loopback(host: str) -> str:
    """``host`` when it is a loopback address; else a :class:`ConfigurationError`."""
    if host not in LOOPBACK_HOSTS:
        msg = (
            f"refusing to serve on {host!r}: the Milvus Lite server has no authentication, so "
            f"it binds to loopback only ({', '.join(LOOPBACK_HOSTS)}); for a shared network "
            "server, run Milvus itself"
        )
        raise ConfigurationError(msg)
    return host


@dataclass
class LiteServer:
    """A running Milvus Lite server over ``path``: its URI, and :meth:`stop`."""

    path: Path
    host: str
    port: int
    _server: Any = field(repr=False)
    _db: Any = field(repr=False)

    @property
    def uri(self) -> str:
        """The URI clients name (``http://127.0.0.1:PORT``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stop(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Finish the calls in flight (up to ``grace_s``), then close the file (its lock goes)."""
        try:
            self._server.stop(grace=grace_s).wait()
        finally:
            self._db.close()


def _port_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def start_lite_server(
    path: Path | str, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT
) -> LiteServer:
    """Serve the Milvus Lite file ``path`` on ``host:port`` (port 0: a free one) until stopped.

    Raises:
        ConfigurationError: ``host`` is not loopback, or the file is open in another process
            (:class:`~langchain_lookup_knowledge.errors.LiteDatabaseLockedError`).
        StoreUnavailableError: the port is taken, or the file cannot be opened.
    """
    from milvus_lite import DataDirLockedError
    from milvus_lite.adapter.grpc.server import start_server_in_thread

    from langchain_lookup_knowledge.errors import LiteDatabaseLockedError

    check_loopback(host)
    db_path = check_lite_path(str(path))
    if port and not _port_free(host, port):
        msg = f"port {port} on {host} is in use: choose another with --port (0 picks a free one)"
        raise StoreUnavailableError(msg)
    try:
        server, db, bound = start_server_in_thread(data_dir=str(db_path), host=host, port=port)
    except DataDirLockedError:
        raise LiteDatabaseLockedError(lite_locked_message(db_path)) from None
    except (OSError, RuntimeError) as exc:
        text = describe_exception(exc)
        raise StoreUnavailableError(f"cannot serve {db_path} on {host}:{port}: {text}") from None
    return LiteServer(db_path, host, int(bound), server, db)


__all__ = [
    "DEFAULT_PORT",
    "LOOPBACK_HOSTS",
    "LiteServer",
    "check_loopback",
    "start_lite_server",
]
