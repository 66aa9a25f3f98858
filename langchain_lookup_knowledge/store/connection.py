"""Open Milvus (Lite file or server) once per process, with errors that name the real cause.

pymilvus reports a Milvus Lite database held by another process as a bare "Open local milvus
failed"; we probe the database's advisory lock to say so plainly.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient

from langchain_lookup_knowledge.errors import LiteDatabaseLockedError, StoreUnavailableError
from langchain_lookup_knowledge.redaction import (
    describe_exception,
    redact,
    register_secret,
    split_userinfo,
)
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.lite_lock import lite_locked_message

logger = logging.getLogger(__name__)

_CLIENTS: dict[tuple[str, str, str], MilvusClient] = {}
_CLIENTS_LOCK = threading.Lock()


LITE_GRPC_OPTIONS = {
    "grpc.keepalive_time_ms": 2**31 - 1,
    "grpc.keepalive_permit_without_calls": 0,
}
"""gRPC channel options of a Milvus Lite connection: no keepalive pings. Milvus Lite serves on
127.0.0.1 inside this process, where a keepalive has nothing to keep; pymilvus pings every 10 s
even on an idle channel, Lite's server allows one ping in 5 minutes and answers repeated ones
with GOAWAY (too_many_pings), and a client created on the same file after the channel idled
for a minute (a ``langchain_milvus.Milvus``, the bare wirings of ``eval`` and ``bench``) cannot
connect through the refused channel."""


def connection_args(settings: LookupSettings) -> dict[str, Any]:
    """The ``uri``, ``token``, ``db_name`` and ``timeout`` pymilvus / langchain-milvus take."""
    # ``http://user:password@host`` becomes the URI without them plus the token
    # ``user:password`` (milvus_token wins when both are set): clients never see or log it.
    uri, user, password = split_userinfo(settings.resolved_milvus_uri)
    args: dict[str, Any] = {"uri": uri, "timeout": settings.milvus_timeout_s}
    if settings.milvus_token is not None:
        args["token"] = settings.milvus_token.get_secret_value()
        register_secret(args["token"])
    elif user is not None:
        args["token"] = f"{user}:{password}" if password is not None else user
    if settings.milvus_db_name:
        args["db_name"] = settings.milvus_db_name
    if settings.is_milvus_lite:
        args["grpc_options"] = dict(LITE_GRPC_OPTIONS)
    return args


def _lite_lock_holder(db_path: Path) -> bool:
    """True when another process holds the Milvus Lite database lock (probed read-only: the
    folder may be on a read-only filesystem; an unreadable lock is no answer, False)."""
    lock = db_path / "LOCK"
    if not lock.exists():
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return False
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def check_lite_path(uri: str) -> Path:
    """The Milvus Lite database path ``uri`` names, checked (name, folder, what is there)."""
    path = Path(uri).expanduser()
    if not path.name.endswith(".db"):
        msg = f"Milvus Lite database path must end in .db, got {uri!r}"
        if re.fullmatch(r"[\w.-]+:\d+", uri):  # host:port, the scheme forgotten
            msg += f" (a Milvus server is named with its scheme: http://{uri})"
        raise StoreUnavailableError(msg)
    if not path.parent.exists():
        msg = f"Milvus Lite database folder does not exist: {path.parent}"
        raise StoreUnavailableError(msg)
    if path.exists() and not path.is_dir() and path.stat().st_size > 0:
        # A Milvus Lite database is a directory; a non-empty regular file is something else.
        with open(path, "rb") as handle:
            head = handle.read(16)
        if not head.startswith(b"SQLite format 3"):
            msg = f"{path} exists and is not a Milvus Lite database"
            raise StoreUnavailableError(msg)
    return path


def loopback_works() -> bool:
    """Whether this process can connect to itself on 127.0.0.1 (Milvus Lite serves there)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                return True
    except OSError:
        return False


def _not_writable(path: Path) -> str | None:
    """Why Milvus Lite cannot write in the database folder ``path`` (None: it can)."""
    folder = path if path.is_dir() else path.parent
    if os.access(folder, os.W_OK):
        return None
    try:  # the reason (read-only filesystem, permission) shows on a real attempt
        with tempfile.TemporaryFile(dir=folder):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def _served_by_this_process(path: Path) -> bool:
    """Whether this process already runs the embedded Milvus Lite server for ``path`` (whose
    database lock is then ours)."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover - milvus-lite is a dependency
        return False
    servers = getattr(server_manager_instance, "_servers", {})
    return os.path.abspath(path) in servers


def _new_client(settings: LookupSettings) -> MilvusClient:
    try:
        return MilvusClient(**connection_args(settings))
    except Exception:
        if not settings.is_milvus_lite or not _served_by_this_process(
            Path(settings.resolved_milvus_uri).expanduser()
        ):
            raise
        # A client of the in-process Milvus Lite server whose first call fails once (a channel
        # the server closed: LITE_GRPC_OPTIONS keeps keepalive pings from causing it) gets one
        # more try on a fresh channel.
        logger.debug("Milvus Lite client open failed once; retrying", exc_info=True)
        return MilvusClient(**connection_args(settings))


def _describe_open_failure(
    settings: LookupSettings, exc: BaseException
) -> str | LiteDatabaseLockedError:
    uri = settings.resolved_milvus_uri
    reason = describe_exception(exc, with_type=False)
    if settings.is_milvus_lite:
        path = Path(uri).expanduser()
        if not loopback_works():
            return (
                f"cannot reach the embedded Milvus Lite server for {path} on 127.0.0.1: the "
                "loopback interface is down or unusable here (Milvus Lite serves on 127.0.0.1; "
                f"bring 'lo' up, or use a Milvus server): {reason}"
            )
        unwritable = _not_writable(path)
        if unwritable:
            return (
                f"Milvus Lite database {path} is not writable ({unwritable}); Milvus Lite "
                "writes to its folder even to search: use a writable copy or folder"
            )
        if _served_by_this_process(path):
            # The lock is our own embedded server's: another process is not the cause.
            return f"the embedded Milvus Lite server for {path} did not answer: {reason}"
        if path.is_dir() and _lite_lock_holder(path):
            return LiteDatabaseLockedError(lite_locked_message(path))
        return f"cannot open Milvus Lite database {path}: {reason}"
    return redact(f"cannot reach Milvus at {uri} within {settings.milvus_timeout_s:g}s: {reason}")


def _key(settings: LookupSettings) -> tuple[str, str, str]:
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else ""
    digest = hashlib.sha256(token.encode()).hexdigest()[:16]
    uri = settings.resolved_milvus_uri
    if settings.is_milvus_lite:
        uri = str(Path(uri).expanduser().resolve())
    return uri, digest, settings.milvus_db_name or ""


def open_client(settings: LookupSettings) -> MilvusClient:
    """The process-wide ``MilvusClient`` for these settings (created once, thread-safe).

    Raises:
        LiteDatabaseLockedError: the Lite database is open in another process.
        StoreUnavailableError: missing folder, unreachable server.
    """
    key = _key(settings)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is not None:
            return client
        if settings.is_milvus_lite:
            check_lite_path(settings.resolved_milvus_uri)
        try:
            client = _new_client(settings)
        except Exception as exc:
            message = _describe_open_failure(settings, exc)
            if isinstance(message, LiteDatabaseLockedError):
                raise message from None
            if settings.is_milvus_lite:  # a local path: no credentials in the cause
                raise StoreUnavailableError(message) from exc
            raise StoreUnavailableError(message) from None
        _CLIENTS[key] = client
        return client


def close_client(settings: LookupSettings) -> None:
    """Close and forget the shared client for these settings (tests, CLI shutdown)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(_key(settings), None)
    if client is not None:
        try:
            client.close()
        except Exception:  # pragma: no cover - closing is best effort
            logger.debug("closing Milvus client failed", exc_info=True)


def close_all_clients() -> None:
    """Close every shared client of this process."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS.values())
        _CLIENTS.clear()
    for client in clients:
        try:
            client.close()
        except Exception:  # pragma: no cover
            logger.debug("closing Milvus client failed", exc_info=True)
