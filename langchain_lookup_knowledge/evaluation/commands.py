"""The ``eval`` (``beir``, ``queries``) and ``bench`` subcommands of ``lookup-knowledge``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from langchain_lookup_knowledge.errors import LookupKnowledgeError


def _settings(args: argparse.Namespace, **extra: Any) -> Any:
    from langchain_lookup_knowledge.cli import _settings as cli_settings

    return cli_settings(args, **extra)


def _emit(report: dict[str, Any], as_json: bool, text: str) -> None:
    # --json: the last line is one object (progress bars go to stderr).
    print(json.dumps(report, ensure_ascii=False) if as_json else text)


def cmd_eval_beir(args: argparse.Namespace) -> int:
    """Evaluate on a BEIR folder against bare dense and BM25 baselines."""
    from langchain_lookup_knowledge.evaluation.beir import format_beir, run_beir

    if args.limit is not None and args.limit < 1:
        raise LookupKnowledgeError(f"--limit must be >= 1, got {args.limit}")
    report = run_beir(
        args.dir,
        _settings(args),
        split=args.split,
        limit=args.limit,
        show_progress=None if not args.no_progress else False,
        baselines=not args.no_baselines,
    )
    _emit(report, args.json, format_beir(report))
    return 0


def cmd_eval_queries(args: argparse.Namespace) -> int:
    """Evaluate a JSONL question file on an ingested collection (and bare baselines)."""
    from langchain_lookup_knowledge.evaluation.queries import format_queries, run_queries

    report = run_queries(
        args.file,
        _settings(args),
        kb=args.kb,
        show_progress=None if not args.no_progress else False,
    )
    _emit(report, args.json, format_queries(report))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Latency, ingest throughput, cold start and memory against bare langchain-milvus."""
    from langchain_lookup_knowledge.evaluation.bench import format_bench, run_bench

    if args.rounds < 1:
        raise LookupKnowledgeError(f"--rounds must be >= 1, got {args.rounds}")
    report = run_bench(
        _settings(args),
        rounds=args.rounds,
        queries_file=args.queries_file,
        kb=args.kb,
        cold_start_enabled=not args.no_cold_start,
        show_progress=None if not args.no_progress else False,
    )
    _emit(report, args.json, format_bench(report))
    return 0


def _store_args(parser: argparse.ArgumentParser, *, collection_required: bool) -> None:
    parser.add_argument("--uri", help="Milvus URI (file.db for Milvus Lite, http://host:19530)")
    parser.add_argument("--collection", required=collection_required, help="collection name")
    parser.add_argument("--mode", choices=["auto", "vectorstore", "spring-ai", "sdk"])
    parser.add_argument("--retrieval-mode", choices=["dense", "hybrid", "sparse"])
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def register_eval_commands(sub: Any) -> None:
    """Add ``eval beir``, ``eval queries`` and ``bench`` to the subcommand parser."""
    evaluate = sub.add_parser("eval", help="measure retrieval quality against bare baselines")
    eval_sub = evaluate.add_subparsers(dest="eval_command", required=True)

    beir = eval_sub.add_parser("beir", help="a BEIR folder (corpus, queries, qrels)")
    beir.add_argument("dir", help="BEIR dataset folder")
    beir.add_argument("--split", default="test", help="qrels split (default: test)")
    beir.add_argument("--limit", type=int, help="only the first N judged queries")
    beir.add_argument("--no-baselines", action="store_true", help="pipeline only")
    _store_args(beir, collection_required=False)
    beir.set_defaults(func=cmd_eval_beir)

    queries = eval_sub.add_parser("queries", help='a JSONL file of {"q", "rel": [stems]}')
    queries.add_argument("file", help="question file (JSONL)")
    queries.add_argument("--kb", help="knowledge folder to build the bare baselines from")
    _store_args(queries, collection_required=True)
    queries.set_defaults(func=cmd_eval_queries)

    bench = sub.add_parser("bench", help="latency, throughput, cold start, memory vs bare")
    bench.add_argument(
        "--queries-file", help="questions (JSONL with q or BEIR text, or one per line)"
    )
    bench.add_argument("--rounds", type=int, default=5, help="passes over the questions")
    bench.add_argument("--kb", help="folder for the ingest benchmark (default: the sample KB)")
    bench.add_argument("--no-cold-start", action="store_true", help="skip the subprocess run")
    _store_args(bench, collection_required=True)
    bench.set_defaults(func=cmd_bench)
