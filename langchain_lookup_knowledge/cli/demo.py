"""``lookup-knowledge demo``: ingest the bundled sample knowledge base and answer a few questions
(offline: Milvus Lite and the bundled embedding model)."""

from __future__ import annotations

import argparse
from pathlib import Path

from langchain_lookup_knowledge.cli.ingest import print_ingest_report
from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    settings_from_args,
)
from langchain_lookup_knowledge.cli.query import format_result

SAMPLE_KB = Path(__file__).resolve().parent.parent / "sample_kb"
DEMO_COLLECTION = "lookup_demo"
DEMO_QUESTIONS = (
    "pod keeps crashing and restarting",
    "postgres replica is falling behind the primary",
    "ingress returns 502 bad gateway",
    "数据库连接数满了怎么办",
    "recipe for chocolate cake",
)


def hide_password(url: str) -> str:
    """``url`` with its password masked (a URL that does not parse is not shown at all)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a parseable URL: show nothing of it rather than a secret
        return "<invocation_db_url>"


def run(args: argparse.Namespace) -> int:
    """Ingest the sample knowledge base and answer the demo's (or the user's) questions."""
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

    settings = settings_from_args(args)
    if not args.collection:
        settings = settings.model_copy(update={"collection": DEMO_COLLECTION})
    report = ingest_folder(SAMPLE_KB, settings, prune=True)
    print_ingest_report(report, False)
    graph = build_lookup_graph(settings)
    for query in args.query or DEMO_QUESTIONS:
        print()
        print(format_result(graph.invoke({"query": query})["result"]))
    print(
        f"\ndatabase: {settings.resolved_milvus_uri} (collection {settings.collection!r}); "
        f"invocation records: {hide_password(settings.resolved_invocation_db_url)}"
    )
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``demo`` to the subcommands."""
    parser = sub.add_parser("demo", help="ingest the sample knowledge base and ask questions")
    parser.add_argument("query", nargs="*", help="your own questions instead of the demo's")
    add_store_args(parser)
    parser.set_defaults(func=run)
