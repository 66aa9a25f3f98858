"""What every subcommand shares: the store flags, settings built from them, the exit codes,
how output is printed and questions are asked."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_lookup_knowledge.core.display import safe_json, safe_name
from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.questions import Question, QuestionOrProblem
from langchain_lookup_knowledge.redaction import describe_exception, redact
from langchain_lookup_knowledge.settings import LookupSettings

EXIT_OK = 0
EXIT_FAILED = 1  # the command ran, but a lookup, a path or a question failed
EXIT_USER_ERROR = 2

# The parser object ``add_subparsers()`` returns; each subcommand module registers on it.
# argparse has no public name for it.
Subcommands = argparse._SubParsersAction
L1_PATHS = ("auto", "vectorstore", "spring-ai", "sdk")
RETRIEVAL_MODES = ("dense", "hybrid", "sparse")
Output = TypeVar("Output")


def add_store_args(
    parser: argparse.ArgumentParser,
    *,
    paths: bool = False,
    retrieval_mode: bool = False,
    collection_default: str = "the configured one, `knowledge`",
) -> None:
    """``--uri`` and ``--collection`` (default: the configured collection, or what
    ``collection_default`` says), and optionally ``--mode`` / ``--retrieval-mode``."""
    parser.add_argument("--uri", help="Milvus URI (file.db for Milvus Lite, http://host:19530)")
    parser.add_argument("--collection", help=f"collection name (default: {collection_default})")
    if paths:
        parser.add_argument(
            "--mode", choices=L1_PATHS, help="L1 path (spring-ai is an alias of vectorstore)"
        )
    if retrieval_mode:
        parser.add_argument(
            "--retrieval-mode",
            choices=RETRIEVAL_MODES,
            help="dense, BM25 (sparse) or both fused (hybrid); default: the configured "
            "retrieval_mode, hybrid",
        )


def settings_from_args(args: argparse.Namespace, **extra: Any) -> LookupSettings:
    """The configured settings (environment, defaults) overridden by the command's flags.

    Raises:
        LookupKnowledgeError: a setting is invalid (the message names it and its value).
    """
    overrides: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    flags = {
        "uri": "milvus_uri",
        "collection": "collection",
        "mode": "mode",
        "retrieval_mode": "retrieval_mode",
    }
    for flag, field in flags.items():
        if getattr(args, flag, None):
            overrides[field] = getattr(args, flag)
    if getattr(args, "no_record", False):
        overrides["record_invocations"] = False
    try:
        return LookupSettings(**overrides)
    except LookupKnowledgeError:
        raise
    except Exception as exc:  # pydantic.ValidationError: name the setting
        raise LookupKnowledgeError(f"invalid setting: {first_error_line(exc)}") from None


def first_error_line(exc: BaseException) -> str:
    """A validation error as ``field: message (got value)``, or its first line."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first.get('msg')} (got {first.get('input')!r})"
        except Exception:
            pass
    return describe_exception(exc, with_type=False)


def print_json(obj: Any) -> None:
    """One JSON object on one stdout line (progress bars and warnings go to stderr)."""
    print(safe_json(json.dumps(obj, ensure_ascii=False)))


def error_object(exc: BaseException) -> dict[str, Any]:
    """What ``--json`` prints on stdout for a user error (exit 2): the error's class (a name of
    :mod:`langchain_lookup_knowledge.errors`) and the message of the ``error:`` line on stderr.

    Example:
        >>> from langchain_lookup_knowledge.errors import CollectionNotFoundError
        >>> error_object(CollectionNotFoundError("collection 'kb' does not exist"))
        {'error': {'type': 'CollectionNotFoundError', 'message': "collection 'kb' does not exist"}}
    """
    return {"error": {"type": type(exc).__name__, "message": redact(str(exc))}}


def print_output(output: Output, as_json: bool, render: Callable[[Output], str]) -> None:
    """A command's output: one JSON line with ``--json``, else ``render(output)`` for a reader.

    Example:
        >>> print_output({"found": True}, True, str)
        {"found": true}
        >>> print_output({"found": True}, False, lambda out: f"found={out['found']}")
        found=True
    """
    if as_json:
        print_json(output)
    else:
        print(render(output))


def ask_each(items: Sequence[QuestionOrProblem], ask: Callable[[int, Question], bool]) -> int:
    """Ask every readable question in order, ``ask(index, question)`` (False: it failed); name
    each unreadable one on stderr and go on. The exit code: 1 when anything failed, else 0."""
    status = EXIT_OK
    for index, item in enumerate(items):
        if not isinstance(item, Question):
            warn(str(item))
            status = EXIT_FAILED
        elif not ask(index, item):
            status = EXIT_FAILED
    return status


def warn(message: str) -> None:
    """A message for the user that is not the command's output (stderr)."""
    print(f"lookup-knowledge: {safe_name(redact(message))}", file=sys.stderr)
