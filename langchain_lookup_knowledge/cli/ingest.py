"""``lookup-knowledge ingest PATH``: index a folder of markdown files (incremental).

Exit status: 0, also when files were skipped (each is listed with its reason); with
``--strict``, 1 when any file was skipped (a docs CI that must index every file).
"""

from __future__ import annotations

import argparse
from typing import Any

from langchain_lookup_knowledge.cli.options import (
    EXIT_FAILED,
    EXIT_OK,
    Subcommands,
    add_store_args,
    print_json,
    settings_from_args,
)
from langchain_lookup_knowledge.core.display import safe_name


def print_ingest_report(report: Any, as_json: bool) -> None:
    """The ingest summary: one line and each skipped or pruned file, or one JSON object.

    Every name (folder, file, reason) is shown with :func:`safe_name`: a file name holding a
    newline or an escape sequence reaches the terminal escaped.
    """
    if as_json:
        print_json(report.to_dict())
        return
    print(
        f"ingested {safe_name(report.path)} into {safe_name(repr(report.collection))}: "
        f"{report.files_seen} files, "
        f"{len(report.indexed)} indexed, {len(report.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped, {len(report.pruned)} pruned; "
        f"{report.chunks_written} chunks written, {report.total_chunks} in the collection; "
        f"{report.seconds:.1f}s"
    )
    if report.embedder:
        why = f": {safe_name(report.embedder_reason)}" if report.embedder_reason else ""
        print(f"  embedder: {safe_name(report.embedder)}{why}")
    if report.bm25_index_rebuilt:
        built = ", ".join(f"{k} {v:g}" for k, v in sorted(report.bm25_index.items()))
        print(f"  BM25 index rebuilt with {built or 'the engine defaults'} (nothing re-embedded)")
    if report.bm25_index_notice:
        print(f"  note: {safe_name(report.bm25_index_notice)}")
    for skipped in report.skipped:
        print(f"  skipped {safe_name(skipped.source)}: {safe_name(skipped.reason)}")
    for warning in report.warnings:
        print(f"  indexed with a change {safe_name(warning.source)}: {safe_name(warning.reason)}")
    if report.rebuilt:
        rebuilt = ", ".join(safe_name(name) for name in report.rebuilt)
        print(f"  rebuilt: dropped {rebuilt} and ingested everything again")
    if report.indexes_repaired:
        fields = ", ".join(safe_name(f) for f in report.indexes_repaired)
        print(f"  repaired the missing index of {fields} (an index build had not finished)")
    for repaired in report.repaired:
        print(f"  repaired {safe_name(repaired.source)}: {safe_name(repaired.reason)}")
    for source in report.pruned:
        print(f"  pruned {safe_name(source)}")
    for row in report.category_rows_ignored:
        print(
            f"  categories file line {row.line} ignored ({safe_name(row.path) or 'no path'}): "
            f"{safe_name(row.reason)}"
        )
    if report.missing:
        print(
            f"{len(report.missing)} indexed documents are no longer on disk "
            "(run with --prune): "
            + ", ".join(safe_name(m) for m in report.missing[:10])
            + (", ..." if len(report.missing) > 10 else "")
        )


def run(args: argparse.Namespace) -> int:
    """Index a markdown folder."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    settings = settings_from_args(
        args, categories_file=args.categories, categories_column=args.category_column
    )
    report = ingest_folder(
        args.path,
        settings,
        prune=args.prune,
        show_progress=None if not args.json else False,
        follow_links=args.follow_links,
        source_prefix=args.source_prefix,
        rebuild=args.rebuild,
    )
    print_ingest_report(report, args.json)
    if args.strict and report.skipped:
        return EXIT_FAILED
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
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any file was skipped (for a docs CI)"
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="follow symbolic links inside the folder (a link leading outside never is)",
    )
    parser.add_argument(
        "--source-prefix",
        metavar="NAME",
        default="",
        help="namespace for this folder's sources (NAME/path.md), so several folders share a "
        "collection; --prune then removes only this namespace's documents",
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="drop the collection, its catalog and vocabulary, then ingest everything again "
        "(the fix for a damaged store)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)
