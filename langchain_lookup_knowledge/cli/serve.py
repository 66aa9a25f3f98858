"""``lookup-knowledge serve``: serve the Milvus Lite file on 127.0.0.1, so Studio, the CLI and
a notebook share one knowledge base by its URI.

Prints the URI to use, then runs until SIGINT (Ctrl-C) or SIGTERM, and stops cleanly (calls in
flight finish, the file's lock is released).

Example:
    >>> from langchain_lookup_knowledge.cli import build_parser
    >>> args = build_parser().parse_args(["serve", "--port", "0"])
    >>> args.host, args.port
    ('127.0.0.1', 0)
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from langchain_lookup_knowledge.cli.options import EXIT_OK, Subcommands, settings_from_args
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.store.serve import (
    DEFAULT_PORT,
    LOOPBACK_HOSTS,
    check_loopback,
    start_lite_server,
)


def run_serve(args: argparse.Namespace) -> int:
    """Serve the configured (or ``--uri``) Lite file until a stop signal."""
    check_loopback(args.host)
    settings = settings_from_args(args)
    if not settings.is_milvus_lite:
        msg = (
            f"serve serves a Milvus Lite file (a path ending in .db), not {settings.milvus_uri}: "
            "a Milvus server is shared by its URI already"
        )
        raise ConfigurationError(msg)
    path = Path(settings.resolved_milvus_uri).expanduser()
    if settings.milvus_uri is None:  # the default file: its folder is made on first use
        path.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server = start_lite_server(path, host=args.host, port=args.port)
        print(f"serving {server.path} at {server.uri}")
        print(
            f"use it from any process: --uri {server.uri}  or  "
            f"export LOOKUP_KNOWLEDGE_MILVUS_URI={server.uri}"
        )
        print("stop with Ctrl-C (or SIGTERM)", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        finally:
            server.stop()
        print(f"stopped; {server.path} is free", file=sys.stderr)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``serve`` to the subcommands."""
    parser = sub.add_parser(
        "serve",
        help="serve the Milvus Lite file on 127.0.0.1 so several processes share it",
        description=(__doc__ or "").split("\n\n")[0],
    )
    parser.add_argument(
        "--uri",
        help="the Milvus Lite file to serve (default: the configured one, <data_dir>/milvus.db)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help=f"loopback address to bind: {', '.join(LOOPBACK_HOSTS)} (default: 127.0.0.1; the "
        "server has no authentication, so no other address is accepted)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.set_defaults(func=run_serve)
