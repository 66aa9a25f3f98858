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
from langchain_lookup_knowledge.core.display import safe_json
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.redaction import mask_url

SAMPLE_KB = Path(__file__).resolve().parent.parent / "sample_kb"
DEMO_COLLECTION = "lookup_demo"
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
Next: index your own markdown folder and ask it (the command is in .venv/bin after the set-up):
  .venv/bin/lookup-knowledge ingest YOUR_FOLDER
  .venv/bin/lookup-knowledge query "your question"
(collection 'knowledge' unless LOOKUP_KNOWLEDGE_COLLECTION says otherwise; see the README)"""
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
    print("  msg.artifact (for you; key fields, the whole contract is in the README):")
    summary = safe_json(
        json.dumps(artifact_summary(msg.artifact or {}), ensure_ascii=False, indent=2)
    )
    print(textwrap.indent(summary, "    "))


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
    from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool

    settings = settings_from_args(args)
    if not args.collection:
        settings = settings.model_copy(update={"collection": DEMO_COLLECTION})
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
    add_store_args(parser, collection_default=f"`{DEMO_COLLECTION}`, whatever is configured")
    parser.set_defaults(func=run)
