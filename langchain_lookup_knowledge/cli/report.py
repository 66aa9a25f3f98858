"""``lookup-knowledge report``: what the agents asked, what the knowledge base could not answer,
which documents carry the load, from the invocation records (SQLite or PostgreSQL).

Example:
    >>> from langchain_lookup_knowledge.cli import build_parser
    >>> args = build_parser().parse_args(["report", "--since", "30d", "--json"])
    >>> args.since, args.json, args.html
    ('30d', True, None)
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    print_output,
    settings_from_args,
    warn,
)
from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.redaction import describe_exception


def add_records_db_arg(parser: argparse.ArgumentParser) -> None:
    """``--db URL``: the records database (default: the configured ``invocation_db_url``)."""
    parser.add_argument(
        "--db",
        metavar="URL",
        help="records database, a SQLAlchemy URL (default: the configured invocation_db_url)",
    )


def run(args: argparse.Namespace) -> int:
    """Build the report; print it (text or ``--json``) and write ``--html FILE``."""
    from langchain_lookup_knowledge.records.page import render_html
    from langchain_lookup_knowledge.records.period import Period
    from langchain_lookup_knowledge.records.report import build_report
    from langchain_lookup_knowledge.records.text import render_text

    period = Period.parse(args.since, args.until)
    settings = settings_from_args(args, invocation_db_url=args.db)
    html_path = Path(args.html) if args.html else None
    if html_path is not None and not html_path.parent.is_dir():
        raise LookupKnowledgeError(f"--html: folder {html_path.parent} does not exist")
    if html_path is not None and html_path.is_dir():
        raise LookupKnowledgeError(f"--html: {html_path} is a folder; name a file (report.html)")
    try:
        report = build_report(settings, period, collection=args.collection, group_by=args.group_by)
    except LookupKnowledgeError:
        raise
    except Exception as exc:  # the database is unreachable, locked, not ours
        first = describe_exception(exc, with_type=False)
        raise LookupKnowledgeError(f"cannot read the invocation records: {first}") from None
    if html_path is not None:
        _write_page(html_path, render_html(report))
        if not args.json:
            warn(f"wrote {html_path}")
    print_output(report, args.json, render_text)
    return EXIT_OK


def _write_page(path: Path, page: str) -> None:
    """Write ``page`` to ``path`` whole or not at all: no half-written page, no temp file left."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # e.g. a folder of that name: not ours to remove
            tmp.unlink(missing_ok=True)
        reason = exc.strerror or type(exc).__name__
        raise LookupKnowledgeError(f"--html: cannot write {path}: {reason}") from None


def register(sub: Subcommands) -> None:
    """Add ``report`` to the subcommands."""
    parser = sub.add_parser(
        "report", help="what the agents asked and the knowledge base could not answer"
    )
    parser.add_argument("--since", default="7d", help="start: a duration back (7d) or a date")
    parser.add_argument("--until", help="end (excluded): a duration back or a date; default now")
    parser.add_argument(
        "--collection", help="only lookups of this collection (and its catalog); default: all"
    )
    parser.add_argument("--uri", help="Milvus URI holding the catalog (default: configured)")
    add_records_db_arg(parser)
    parser.add_argument(
        "--group-by",
        choices=["auto", "meaning", "terms"],
        default="auto",
        help="gap grouping: meaning (the configured embedder; auto) or shared terms",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object (documented keys)")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    parser.set_defaults(func=run)
