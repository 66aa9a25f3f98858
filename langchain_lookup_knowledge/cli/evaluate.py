"""``lookup-knowledge eval beir DIR`` and ``eval queries FILE``: retrieval quality against bare
LangChain baselines, on the configured collection unless ``--collection`` says otherwise."""

from __future__ import annotations

import argparse

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    print_json,
    settings_from_args,
)
from langchain_lookup_knowledge.errors import LookupKnowledgeError


def add_measure_args(parser: argparse.ArgumentParser) -> None:
    """The flags of the measuring commands (eval, bench)."""
    add_store_args(parser, paths=True, retrieval_mode=True)
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def progress_flag(args: argparse.Namespace) -> bool | None:
    """None: a bar on a terminal only; False with ``--no-progress``."""
    return False if args.no_progress else None


def run_beir(args: argparse.Namespace) -> int:
    """Evaluate on a BEIR folder against bare dense and BM25 baselines."""
    from langchain_lookup_knowledge.evaluation.beir import format_beir, run_beir

    if args.limit is not None and args.limit < 1:
        raise LookupKnowledgeError(f"--limit must be >= 1, got {args.limit}")
    report = run_beir(
        args.dir,
        settings_from_args(args),
        split=args.split,
        limit=args.limit,
        show_progress=progress_flag(args),
        baselines=not args.no_baselines,
    )
    if args.json:
        print_json(report)
    else:
        print(format_beir(report))
    return EXIT_OK


def run_queries(args: argparse.Namespace) -> int:
    """Evaluate a JSONL question file on an ingested collection (and bare baselines)."""
    from langchain_lookup_knowledge.evaluation.queries import format_queries, run_queries

    report = run_queries(
        args.file, settings_from_args(args), kb=args.kb, show_progress=progress_flag(args)
    )
    if args.json:
        print_json(report)
    else:
        print(format_queries(report))
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``eval beir`` and ``eval queries`` to the subcommands."""
    evaluate = sub.add_parser("eval", help="measure retrieval quality against bare baselines")
    eval_sub = evaluate.add_subparsers(dest="eval_command", required=True)

    beir = eval_sub.add_parser("beir", help="a BEIR folder (corpus, queries, qrels)")
    beir.add_argument("dir", help="BEIR dataset folder")
    beir.add_argument("--split", default="test", help="qrels split (default: test)")
    beir.add_argument("--limit", type=int, help="only the first N judged queries")
    beir.add_argument("--no-baselines", action="store_true", help="pipeline only")
    add_measure_args(beir)
    beir.set_defaults(func=run_beir)

    queries = eval_sub.add_parser("queries", help='a JSONL file of {"q", "rel": [stems]}')
    queries.add_argument("file", help="question file (JSONL)")
    queries.add_argument("--kb", help="knowledge folder to build the bare baselines from")
    add_measure_args(queries)
    queries.set_defaults(func=run_queries)
