"""Real faults for reliability tests: a process holding a Milvus Lite database, TCP ports that
refuse or never answer, an OpenAI-compatible embedding server that fails, the CLI in a subprocess.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

HOLDER = """
import sys, time
from pymilvus import MilvusClient
client = MilvusClient(sys.argv[1])
client.list_collections()
print("ready", flush=True)
time.sleep(120)
"""


def run_cli(
    *args: str, data_dir: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``lookup-knowledge ARGS`` in a subprocess (data dir in a temp folder, ``env`` added)."""
    env = os.environ | {"LOOKUP_KNOWLEDGE_DATA_DIR": str(data_dir)} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "langchain_lookup_knowledge.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=REPO,
    )


@contextlib.contextmanager
def database_held_by_another_process(db: Path) -> Iterator[subprocess.Popen]:
    """Another process opens the Milvus Lite database ``db`` and keeps it open."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


SQLITE_LOCK_HOLDER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "wal":
    con.execute("PRAGMA journal_mode=WAL")
con.execute("BEGIN EXCLUSIVE")
print("ready", flush=True)
time.sleep(300)
"""


@contextlib.contextmanager
def sqlite_write_locked_by_another_process(db: Path, *, wal: bool = False) -> Iterator[None]:
    """A second process holds the SQLite write lock of ``db`` (``BEGIN EXCLUSIVE``; ``wal``:
    in WAL journal mode first, where readers still get in)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SQLITE_LOCK_HOLDER, str(db), "wal" if wal else "rollback"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        yield
    finally:
        proc.kill()
        proc.wait(timeout=30)


@contextlib.contextmanager
def silent_tcp_port() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung server)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        server.close()


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that keeps the test output free of access-log lines."""

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_on_loopback(
    handler: type[http.server.BaseHTTPRequestHandler], on_stop: Callable[[], None] | None = None
) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 from a thread; yields the OpenAI-style base URL (``.../v1``).

    ``on_stop`` runs first on exit (to release handlers that are still waiting), then the server
    shuts down and its thread is joined.
    """
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        if on_stop is not None:
            on_stop()
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def failing_embedding_server(behaviour: str) -> Iterator[tuple[str, list[str]]]:
    """A local OpenAI-compatible ``/v1/embeddings`` that always fails.

    ``behaviour``: "500", "429", "timeout" (never answers in time), or "echo401" (a 401 whose
    body repeats the request's Authorization header, as a careless proxy might). Yields the base
    URL and the list of request paths received.
    """
    requests: list[str] = []
    release = threading.Event()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            requests.append(self.path)
            if behaviour == "timeout":
                release.wait(10)
                return
            status = {"500": 500, "429": 429, "echo401": 401}[behaviour]
            message = f"fake {status}"
            if behaviour == "echo401":
                message = f"bad credentials: {self.headers.get('Authorization')}"
            body = json.dumps({"error": {"message": message, "type": "server_error"}})
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

    with serve_on_loopback(Handler, on_stop=release.set) as url:
        yield url, requests
