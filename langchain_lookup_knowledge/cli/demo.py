"""``lookup-knowledge demo``: ingest the bundled sample knowledge base and answer a few questions
(offline: Milvus Lite and the bundled embedding model)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.cli.ingest import print_ingest_report
from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    settings_from_args,
)
from langchain_lookup_knowledge.cli.query import format_result
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.knowledge import SAMPLE_KB, is_bundled_sample
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings import LookupSettings

DEMO_QUESTIONS = (
    "pod keeps crashing and restarting",
    "postgres replica is falling behind the primary",
    "ingress returns 502 bad gateway",
    "数据库连接数满了怎么办",
    "recipe for chocolate cake",
)
LEGEND = """\
How to read a lookup below:
  found, relevance   evidence or not, and how strong (high / medium / low)
  layer=L1           the evidence came from the semantic search (L1) on Milvus; L0+L1: the
                     frontmatter hints (L0: titles, keywords, categories) matched it too
  attempts: filtered[vectorstore] ok 12 cand top=0.77
                     each L1 search: `filtered` within the one category the question names (L0),
                     `unfiltered` the whole collection; [vectorstore] is the langchain-milvus path,
                     [sdk] raw pymilvus; `ok`, `empty`, or `low_quality` (its best similarity,
                     top=, is under reference_threshold: a filtered search is then retried
                     unfiltered); `cand` is how many candidates went to the rerank
  n. source [breadcrumb] score= (reasons)   evidence blocks after the rule-based rerank, each
                     with the reasons that scored it (l1_similarity, l0_keyword, ...)"""
NEXT_STEPS = """\
Next: ask the sample yourself, then put your own markdown folder in its place (the command is
in .venv/bin after the set-up; both use collection 'knowledge', every command's default):
  .venv/bin/lookup-knowledge query "your question"
  .venv/bin/lookup-knowledge ingest YOUR_FOLDER
(your folder's documents replace the sample's; see the README)"""
CONTENT_LINES_SHOWN = 24


def _rounded(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def artifact_summary(artifact: dict[str, Any]) -> dict[str, Any]:
    """The artifact's key fields (the whole contract is ``msg.artifact``)."""
    trace = artifact.get("retrievalTrace") or {}
    pack = artifact.get("contextPack") or {}
    return {
        "found": artifact.get("found"),
        "relevanceLevel": artifact.get("relevanceLevel"),
        "completenessHint": artifact.get("completenessHint"),
        "evidenceBlocks": [
            {
                "evidenceKey": b.get("evidenceKey"),
                "score": _rounded(b.get("score")),
                "retrievalLayer": b.get("retrievalLayer"),
                "hitReasons": {
                    r["kind"]: _rounded(r["contribution"]) for r in b.get("hitReasons", [])
                },
            }
            for b in artifact.get("evidenceBlocks", [])[:2]
        ],
        "retrievalTrace": {
            k: trace.get(k) for k in ("selectedAttempt", "fallbackReason", "pathUsed")
        },
        "contextPack": {k: pack.get(k) for k in ("includedSources", "used", "budget")},
    }


def show_tool_call(tool: Any, query: str) -> None:
    """One ``lookup_knowledge`` tool call: what the model reads, and the artifact's key fields."""
    msg = tool.invoke(
        {"type": "tool_call", "id": "demo", "name": tool.name, "args": {"query": query}}
    )
    print(f"\nWhat an agent receives from one tool call, lookup_knowledge({query!r}):")
    print("  msg.content (for the model: the packed context, [n] cites a source):")
    lines = str(msg.content).strip().splitlines()
    shown = "\n".join(lines[:CONTENT_LINES_SHOWN])
    print(textwrap.indent(shown, "    | ", predicate=lambda _: True))
    if len(lines) > CONTENT_LINES_SHOWN:
        print(f"    | ... ({len(lines) - CONTENT_LINES_SHOWN} more lines)")
    print("  msg.artifact (for you; key fields, the whole contract is in docs/result-contract.md):")
    summary = json.dumps(artifact_summary(msg.artifact or {}), ensure_ascii=False, indent=2)
    print(textwrap.indent(summary, "    "))


def hide_password(url: str) -> str:
    """``url`` with its password masked (a URL that does not parse is not shown at all)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a parseable URL: show nothing of it rather than a secret
        return "<invocation_db_url>"


def refuse_a_users_collection(settings: LookupSettings) -> None:
    """The demo ingests the sample (``--prune``) into the configured collection: refuse when a
    folder of the user's is ingested there, naming it and the fix."""
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client

    if settings.is_milvus_lite and not Path(settings.resolved_milvus_uri).expanduser().exists():
        return  # a first run: the ingest makes the database
    client = open_client(settings)
    if not client.has_collection(settings.resolved_catalog_collection):
        return
    roots = {e.root for e in load_catalog(client, settings.resolved_catalog_collection)}
    theirs = sorted(r for r in roots if r and not is_bundled_sample(r))
    if theirs:
        msg = (
            f"collection {settings.collection!r} holds your documents from {theirs[0]}; the "
            "demo would replace them with the sample: run it with --collection demo"
        )
        raise ConfigurationError(msg)


def run(args: argparse.Namespace) -> int:
    """Ingest the sample knowledge base into the configured collection (``knowledge``, where
    ``query`` then finds it) and answer the demo's (or the user's) questions."""
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool

    settings = settings_from_args(args)
    refuse_a_users_collection(settings)
    report = ingest_folder(SAMPLE_KB, settings, prune=True)
    print_ingest_report(report, False)
    graph = build_lookup_graph(settings)
    questions = args.query or DEMO_QUESTIONS
    print()
    print(LEGEND)
    for query in questions:
        print()
        print(format_result(LookupResult.model_validate(graph.invoke({"query": query})["result"])))
    show_tool_call(create_lookup_knowledge_tool(settings, graph=graph), questions[0])
    print(
        f"\ndatabase: {mask_url(settings.resolved_milvus_uri)} "
        f"(collection {settings.collection!r}); "
        f"invocation records: {hide_password(settings.resolved_invocation_db_url)}"
    )
    print()
    print(NEXT_STEPS)
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``demo`` to the subcommands."""
    parser = sub.add_parser("demo", help="ingest the sample knowledge base and ask questions")
    parser.add_argument("query", nargs="*", help="your own questions instead of the demo's")
    add_store_args(parser)
    parser.set_defaults(func=run)
