"""``lookup-knowledge records prune --older-than 90d``: delete old invocation records;
``lookup-knowledge records status``: how many there are, and how many were dropped.

Under an authoritative ``default_filter`` only that scope's records are counted or deleted.

Example:
    >>> from langchain_lookup_knowledge.cli import build_parser
    >>> build_parser().parse_args(["records", "prune", "--older-than", "90d"]).older_than
    '90d'
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    print_json,
    settings_from_args,
)
from langchain_lookup_knowledge.cli.report import add_records_db_arg
from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.redaction import describe_exception


def run_prune(args: argparse.Namespace) -> int:
    """Delete the records older than ``--older-than``; print how many lookups went."""
    from langchain_lookup_knowledge.recording import SqlInvocationRecorder
    from langchain_lookup_knowledge.records.period import parse_duration
    from langchain_lookup_knowledge.records.retention import prune_records

    age = parse_duration(args.older_than)
    settings = settings_from_args(args, invocation_db_url=args.db)
    now = datetime.now(UTC)
    recorder = SqlInvocationRecorder(settings.resolved_invocation_db_url)
    try:
        deleted = prune_records(
            recorder.engine, older_than=age, now=now, scope=settings.default_filter
        )
    except Exception as exc:
        first = describe_exception(exc, with_type=False)
        raise LookupKnowledgeError(f"cannot prune the invocation records: {first}") from None
    finally:
        recorder.dispose()
    cutoff = (now - age).isoformat(timespec="seconds")
    if args.json:
        print_json({"deleted": deleted, "before": cutoff, "scope": settings.default_filter})
    else:
        print(f"deleted {deleted} lookup records created before {cutoff}")
    return EXIT_OK


def run_status(args: argparse.Namespace) -> int:
    """Print how many lookup records there are and how many were dropped (never written)."""
    from sqlalchemy import func, select

    from langchain_lookup_knowledge.recording import SqlInvocationRecorder
    from langchain_lookup_knowledge.records.database import create_schema
    from langchain_lookup_knowledge.records.losses import describe_losses
    from langchain_lookup_knowledge.records.report import lost_records
    from langchain_lookup_knowledge.records.scope import scope_condition
    from langchain_lookup_knowledge.records.tables import tool_invocation

    settings = settings_from_args(args, invocation_db_url=args.db)
    recorder = SqlInvocationRecorder(settings.resolved_invocation_db_url)
    try:
        create_schema(recorder.engine)
        query = select(func.count()).select_from(tool_invocation)
        if settings.default_filter:
            query = query.where(scope_condition(tool_invocation.c.scope, settings.default_filter))
        with recorder.engine.connect() as conn:
            count = int(conn.execute(query).scalar() or 0)
        lost = lost_records(recorder.engine, settings, since=None)
    except Exception as exc:
        first = describe_exception(exc, with_type=False)
        raise LookupKnowledgeError(f"cannot read the invocation records: {first}") from None
    finally:
        recorder.dispose()
    if args.json:
        print_json({"records": count, "records_lost": lost, "scope": settings.default_filter})
    else:
        print(f"{count} lookup records")
        print(describe_losses(lost) or "0 records dropped")
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``records`` (``records prune``) to the subcommands."""
    parser = sub.add_parser("records", help="manage the invocation records")
    actions = parser.add_subparsers(dest="records_command", required=True)
    prune = actions.add_parser("prune", help="delete records older than a duration")
    prune.add_argument("--older-than", required=True, help="a duration: 90d, 12w, 36h")
    add_records_db_arg(prune)
    prune.add_argument("--json", action="store_true", help="print the result as JSON")
    prune.set_defaults(func=run_prune)
    status = actions.add_parser("status", help="how many records, and how many were dropped")
    add_records_db_arg(status)
    status.add_argument("--json", action="store_true", help="print the result as JSON")
    status.set_defaults(func=run_status)
