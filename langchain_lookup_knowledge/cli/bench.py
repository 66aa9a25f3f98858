"""``lookup-knowledge bench``: latency, ingest throughput, cold start and memory against a bare
``langchain_milvus.Milvus``, on the configured collection unless ``--collection`` says otherwise."""

from __future__ import annotations

import argparse

from langchain_lookup_knowledge.cli.evaluate import add_measure_args, progress_flag
from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    print_output,
    settings_from_args,
)
from langchain_lookup_knowledge.errors import LookupKnowledgeError


def run(args: argparse.Namespace) -> int:
    """Run every measurement and print the figures."""
    from langchain_lookup_knowledge.evaluation.bench import format_bench, run_bench

    if args.rounds < 1:
        raise LookupKnowledgeError(f"--rounds must be >= 1, got {args.rounds}")
    report = run_bench(
        settings_from_args(args),
        rounds=args.rounds,
        queries_file=args.queries_file,
        kb=args.kb,
        cold_start_enabled=not args.no_cold_start,
        show_progress=progress_flag(args),
    )
    print_output(report, args.json, format_bench)
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``bench`` to the subcommands."""
    parser = sub.add_parser("bench", help="latency, throughput, cold start, memory vs bare")
    parser.add_argument(
        "--queries-file", help="questions (JSONL with q or BEIR text, or one per line)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="passes over the questions")
    parser.add_argument("--kb", help="folder for the ingest benchmark (default: the sample KB)")
    parser.add_argument("--no-cold-start", action="store_true", help="skip the subprocess run")
    add_measure_args(parser)
    parser.set_defaults(func=run)
