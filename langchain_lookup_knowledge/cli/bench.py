"""``lookup-knowledge bench``: latency, ingest throughput, cold start and memory against a bare
``langchain_milvus.Milvus``, on the configured collection unless ``--collection`` says otherwise."""

from __future__ import annotations

import argparse
import sys

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
    if args.ingest_rounds < 1:
        raise LookupKnowledgeError(f"--ingest-rounds must be >= 1, got {args.ingest_rounds}")
    if args.scale:
        return _run_scale(args)
    report = run_bench(
        settings_from_args(args),
        rounds=args.rounds,
        queries_file=args.queries_file,
        kb=args.kb,
        cold_start_enabled=not args.no_cold_start,
        show_progress=progress_flag(args),
        ingest_rounds=args.ingest_rounds,
    )
    print_output(report, args.json, format_bench)
    return EXIT_OK


def _scale_sizes(text: str) -> list[int]:
    """``100000,300000`` (``100k``, ``1m`` too) as chunk counts; a bad size is named."""
    sizes = []
    for part in text.split(","):
        word = part.strip().lower()
        factor = {"k": 1_000, "m": 1_000_000}.get(word[-1:], 1)
        digits = word[:-1] if factor > 1 else word
        if not digits.isdigit() or int(digits) * factor < 1:
            raise LookupKnowledgeError(f"--scale: not a chunk count: {part.strip()!r}")
        sizes.append(int(digits) * factor)
    return sizes


def _scale_indexes(text: str | None) -> tuple[str, ...]:
    """``FLAT,HNSW`` as dense index types for ``--scale`` (None: every one); an unknown one is
    named with the known ones."""
    from langchain_lookup_knowledge.evaluation.scale import INDEX_TYPES

    if text is None:
        return INDEX_TYPES
    chosen = tuple(dict.fromkeys(p.strip().upper() for p in text.split(",") if p.strip()))
    unknown = [name for name in chosen if name not in INDEX_TYPES]
    if unknown or not chosen:
        named = repr(unknown[0]) if unknown else "none"
        msg = f"--scale-indexes: unknown index type {named}; known: {', '.join(INDEX_TYPES)}"
        raise LookupKnowledgeError(msg)
    return chosen


def _run_scale(args: argparse.Namespace) -> int:
    """``bench --scale``: a synthetic collection grown through the sizes, measured at each."""
    from langchain_lookup_knowledge.evaluation.scale import format_scale, run_scale

    sizes = _scale_sizes(args.scale)
    index_types = _scale_indexes(args.scale_indexes)
    if args.scale_queries < 1:
        raise LookupKnowledgeError(f"--scale-queries must be >= 1, got {args.scale_queries}")
    report = run_scale(
        settings_from_args(args),
        sizes=sizes,
        queries=args.scale_queries,
        index_types=index_types,
        progress=None if progress_flag(args) is False else _say,
    )
    print_output(report, args.json, format_scale)
    return EXIT_OK


def _say(line: str) -> None:
    """A ``bench --scale`` step on stderr as it ends (the run takes hours at a million chunks:
    its points so far survive an interrupted run; ``--json`` keeps stdout for the report)."""
    print(f"bench --scale: {line}", file=sys.stderr, flush=True)


def register(sub: Subcommands) -> None:
    """Add ``bench`` to the subcommands."""
    parser = sub.add_parser("bench", help="latency, throughput, cold start, memory vs bare")
    parser.add_argument(
        "--queries-file", help="questions (JSONL with q or BEIR text, or one per line)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="passes over the questions")
    parser.add_argument("--kb", help="folder for the ingest benchmark (default: the sample KB)")
    parser.add_argument(
        "--ingest-rounds",
        type=int,
        default=2,
        help="ingests of --kb, each between two runs of the embedder alone on its chunks "
        "(the ratio is their median)",
    )
    parser.add_argument("--no-cold-start", action="store_true", help="skip the subprocess run")
    parser.add_argument(
        "--scale",
        metavar="SIZES",
        help="instead: grow a throwaway synthetic collection through these chunk counts "
        "(e.g. 100k,300k,1m) and report search p50/p95, index build time and RSS per size",
    )
    parser.add_argument(
        "--scale-queries", type=int, default=50, help="queries per size and index (--scale)"
    )
    parser.add_argument(
        "--scale-indexes",
        metavar="TYPES",
        help="dense index types to build at each size (--scale; default FLAT,IVF_FLAT,HNSW), "
        "e.g. FLAT,HNSW to skip the IVF builds",
    )
    add_measure_args(parser)
    parser.set_defaults(func=run)
