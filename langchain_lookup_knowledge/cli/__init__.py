"""``lookup-knowledge``: ingest a knowledge folder, ask questions, run the demo, compare the L1
paths, evaluate and benchmark, serve a knowledge base to other processes, show a collection,
refit the judgement.

Each subcommand is one module of this package with a ``register(subcommands)`` function, listed
once in :data:`COMMANDS`: adding a subcommand is one new module and one line there. User errors
(a missing folder, a locked database, an empty query) print one line and exit 2, no traceback;
with ``--json`` they also print one JSON object on stdout, ``{"error": {"type", "message"}}``
(a command line argparse refuses too: type ``ConfigurationError``).

Example:
    >>> parser = build_parser()
    >>> parser.parse_args(["query", "disk full", "--json"]).json
    True
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from langchain_lookup_knowledge.cli import (
    bench,
    compare,
    demo,
    evaluate,
    info,
    ingest,
    judge,
    query,
    records,
    report,
    serve,
)
from langchain_lookup_knowledge.cli.options import (
    EXIT_USER_ERROR,
    Subcommands,
    error_object,
    print_json,
)
from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.errors import ConfigurationError, LookupKnowledgeError
from langchain_lookup_knowledge.redaction import RedactingFilter, redact
from langchain_lookup_knowledge.settings import (
    take_unknown_setting_warnings,
    unknown_setting_variables,
)

__all__ = ["COMMANDS", "build_parser", "main", "unknown_setting_variables"]

COMMANDS: tuple[Callable[[Subcommands], None], ...] = (
    ingest.register,
    info.register,  # what a collection holds, its judgement profile
    query.register,
    demo.register,
    compare.register,
    evaluate.register,  # eval beir, eval queries
    bench.register,
    report.register,
    records.register,  # records prune
    serve.register,
    judge.register,  # judge rows / judge fit: refit the judgement model
)
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command killed by SIGPIPE (`| head`)
# Their ERROR records carry tracebacks (e.g. milvus_lite on a locked database) for failures this
# CLI already reports in one line.
_NOISY_LOGGERS = ("pymilvus", "milvus_lite", "faiss", "jieba", "httpx")


class _UsageExit(SystemExit):
    """argparse's exit, with the message it printed (for ``--json``)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status)
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse's parser (its subcommands' too), whose exit keeps the message it printed."""

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self._print_message(message, sys.stderr)
        raise _UsageExit(status, message or "")


def build_parser() -> argparse.ArgumentParser:
    """The ``lookup-knowledge`` argument parser with every subcommand of :data:`COMMANDS`."""
    parser = _Parser(prog="lookup-knowledge", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)
    for register in COMMANDS:
        register(sub)
    return parser


def _unimplemented_rpc_filter(record: logging.LogRecord) -> bool:
    """Drop Milvus Lite's traceback for an RPC it does not implement (pymilvus asks for
    ``AllocTimestamp`` while waiting for an index; the call goes on without it)."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, NotImplementedError)


def _warnings_and_above(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


class _SafeFormatter(logging.Formatter):
    """A log line with the names it holds escaped (:func:`safe_name`); a traceback, appended
    after it, keeps its lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return safe_name(super().formatMessage(record))


def _configure_logging(verbose: bool) -> None:
    existing = set(logging.getLogger().handlers)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    for handler in logging.getLogger().handlers:  # no URL password or key in any library's log
        handler.addFilter(RedactingFilter())
        if handler not in existing:  # the CLI's own handler (stderr)
            handler.setFormatter(_SafeFormatter("%(levelname)s %(name)s: %(message)s"))
    if verbose:
        return
    # pymilvus configures its loggers when imported (dictConfig): import it first, so the
    # levels below stick (its RPC errors carry tracebacks, e.g. "No space left on device").
    import pymilvus  # noqa: F401

    for noisy in _NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    logging.getLogger("grpc._server").addFilter(_unimplemented_rpc_filter)
    # jieba (Milvus Lite's Chinese analyzer) sets its own logger to DEBUG when imported;
    # a filter on the logger outlives that.
    logging.getLogger("jieba").addFilter(_warnings_and_above)


def _quiet_stdout() -> None:
    """After the reader of stdout went away (``| head``): send what is left to /dev/null, so
    the interpreter's last flush does not fail too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's StringIO)
        pass


def _print_json_error(exc: LookupKnowledgeError) -> None:
    try:
        print_json(error_object(exc))
    except BrokenPipeError:
        _quiet_stdout()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lookup-knowledge`` console script."""
    # gRPC's C core prints transport chatter (a GOAWAY, a reconnect) from Milvus Lite's local
    # server; the calls succeed, so keep it off the user's terminal.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
    except _UsageExit as exc:  # usage printed on stderr, exit 2; with --json, stdout says so too
        if exc.code == EXIT_USER_ERROR and "--json" in words:
            _print_json_error(ConfigurationError(exc.message.strip().partition(": error: ")[2]))
        raise
    _configure_logging(args.verbose)
    for warning in take_unknown_setting_warnings(os.environ):  # not again by LookupSettings()
        print(f"lookup-knowledge: warning: {safe_name(warning)}", file=sys.stderr)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # a reader gone (`| head`) shows here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except LookupKnowledgeError as exc:
        if getattr(args, "json", False):  # a script parsing stdout gets the error as JSON too
            _print_json_error(exc)
        print(f"lookup-knowledge: error: {safe_name(redact(str(exc)))}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("lookup-knowledge: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        from langchain_lookup_knowledge.store.connection import close_all_clients

        close_all_clients()
