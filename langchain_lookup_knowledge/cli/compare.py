"""``lookup-knowledge compare QUESTION...``: both L1 paths side by side, one comparison per
question (each argument is one question, as in ``query``)."""

from __future__ import annotations

import argparse

from langchain_lookup_knowledge.cli.options import (
    Subcommands,
    add_store_args,
    ask_each,
    print_json,
    settings_from_args,
)
from langchain_lookup_knowledge.questions import Question, gather_questions


def run(args: argparse.Namespace) -> int:
    """Print both L1 paths side by side for each question; exit 1 when a path failed."""
    from langchain_lookup_knowledge.compare import PATHS, compare_paths, format_comparison
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

    settings = settings_from_args(args, record_invocations=False)
    runtime = LookupRuntime(settings)  # one runtime: the paths open (and warm up) once

    def compare(n: int, question: Question) -> bool:
        report = compare_paths(question.text, settings, k=args.k, runtime=runtime)
        if args.json:
            print_json(report)
        else:
            print(("\n" if n else "") + format_comparison(report))
        return all(report[p]["status"] == "ok" for p in PATHS)

    return ask_each(gather_questions(args.query, None), compare)


def register(sub: Subcommands) -> None:
    """Add ``compare`` to the subcommands."""
    parser = sub.add_parser("compare", help="run both L1 paths (vectorstore, sdk) side by side")
    parser.add_argument(
        "query", nargs="+", help="question(s); each argument is one question, as in `query`"
    )
    add_store_args(parser, retrieval_mode=True)
    parser.add_argument("--k", type=int, default=5, help="results per path (default 5)")
    parser.add_argument("--json", action="store_true", help="one JSON comparison per question")
    parser.set_defaults(func=run)
