"""``lookup-knowledge ingest PATH``: index a folder of markdown files (incremental)."""

from __future__ import annotations

import argparse
from typing import Any

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    print_json,
    settings_from_args,
)


def print_ingest_report(report: Any, as_json: bool) -> None:
    """The ingest summary: one line and each skipped or pruned file, or one JSON object."""
    if as_json:
        print_json(report.to_dict())
        return
    print(
        f"ingested {report.path} into {report.collection!r}: {report.files_seen} files, "
        f"{len(report.indexed)} indexed, {len(report.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped, {len(report.pruned)} pruned; "
        f"{report.chunks_written} chunks written, {report.total_chunks} in the collection; "
        f"{report.seconds:.1f}s"
    )
    for skipped in report.skipped:
        print(f"  skipped {skipped.source}: {skipped.reason}")
    for source in report.pruned:
        print(f"  pruned {source}")


def run(args: argparse.Namespace) -> int:
    """Index a markdown folder."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    settings = settings_from_args(
        args, categories_file=args.categories, categories_column=args.category_column
    )
    report = ingest_folder(
        args.path, settings, prune=args.prune, show_progress=None if not args.json else False
    )
    print_ingest_report(report, args.json)
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``ingest`` to the subcommands."""
    parser = sub.add_parser("ingest", help="index a folder of markdown files")
    parser.add_argument("path", help="knowledge folder")
    add_store_args(parser)
    parser.add_argument("--prune", action="store_true", help="remove files that disappeared")
    parser.add_argument(
        "--categories",
        metavar="FILE",
        help="TSV/CSV mapping each file's path (relative to the folder) to its category",
    )
    parser.add_argument(
        "--category-column", help="the categories file's category column (default: second)"
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)
