"""``lookup-knowledge``: ingest a knowledge folder, ask questions, run the demo, compare paths.

User errors (a missing folder, a locked database, an empty query) print one line and exit 2;
nothing here shows a traceback for them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.settings import LookupSettings

EXIT_USER_ERROR = 2
SAMPLE_KB = Path(__file__).parent / "sample_kb"
DEMO_COLLECTION = "lookup_demo"
DEMO_QUESTIONS = (
    "pod keeps crashing and restarting",
    "postgres replica is falling behind the primary",
    "ingress returns 502 bad gateway",
    "数据库连接数满了怎么办",
    "recipe for chocolate cake",
)


def _settings(args: argparse.Namespace, **extra: Any) -> LookupSettings:
    overrides: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if getattr(args, "uri", None):
        overrides["milvus_uri"] = args.uri
    if getattr(args, "collection", None):
        overrides["collection"] = args.collection
    if getattr(args, "mode", None):
        overrides["mode"] = args.mode
    if getattr(args, "retrieval_mode", None):
        overrides["retrieval_mode"] = args.retrieval_mode
    if getattr(args, "no_record", False):
        overrides["record_invocations"] = False
    try:
        return LookupSettings(**overrides)
    except Exception as exc:  # pydantic.ValidationError: name the setting
        raise LookupKnowledgeError(f"invalid setting: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first.get('msg')} (got {first.get('input')!r})"
        except Exception:
            pass
    return str(exc).strip().splitlines()[0]


def _print_ingest(report: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
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


def cmd_ingest(args: argparse.Namespace) -> int:
    """Index a markdown folder."""
    from langchain_lookup_knowledge.ingest import ingest_folder

    settings = _settings(
        args, categories_file=args.categories, categories_column=args.category_column
    )
    report = ingest_folder(
        args.path, settings, prune=args.prune, show_progress=None if not args.json else False
    )
    _print_ingest(report, args.json)
    return 0


def _queries(args: argparse.Namespace) -> list[str]:
    queries = list(args.query or [])
    if args.queries_file:
        path = Path(args.queries_file)
        if not path.is_file():
            raise LookupKnowledgeError(f"queries file not found: {path}")
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line:
                continue
            if line.startswith("{"):
                try:
                    line = str(json.loads(line).get("q", ""))
                except json.JSONDecodeError as exc:
                    raise LookupKnowledgeError(f"{path}: invalid JSON line: {exc}") from None
            queries.append(line)
    if not queries:
        raise LookupKnowledgeError("no query given: pass QUERY or --queries-file FILE")
    return queries


def format_result(result: Any) -> str:
    """A readable rendering of one lookup result."""
    lines = [f"Q: {result.query}"]
    trace = result.retrieval_trace
    attempts = ", ".join(
        f"{a.name}[{a.path}] {a.status} {a.candidates} cand top={a.top_similarity}"
        for a in trace.attempts
    )
    lines.append(
        f"   found={result.found} relevance={result.relevance_level} "
        f"layer={result.retrieval_layer} attempts: {attempts}"
    )
    if trace.fallback_reason:
        lines.append(f"   fallback: {trace.fallback_reason}")
    hints = result.l0_hints
    if not hints.empty:
        lines.append(
            f"   L0 hints: titles={hints.matched_titles} keywords={hints.matched_keywords}"
            f" domains={hints.domains} entities={hints.entities}"
        )
    for i, block in enumerate(result.evidence_blocks, start=1):
        reasons = ", ".join(r.kind for r in block.hit_reasons)
        lines.append(
            f"  {i}. {block.source} [{block.breadcrumb}] score={block.score:.3f} ({reasons})"
        )
    if not result.found:
        lines.append(f"   {result.message}")
    return "\n".join(lines)


def cmd_query(args: argparse.Namespace) -> int:
    """Ask one or more questions."""
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.store.connection import open_client

    settings = _settings(args)
    queries = _queries(args)
    open_client(settings)  # a locked, missing or unreachable store: one line, exit 2
    graph = build_lookup_graph(settings)
    status = 0
    for query in queries:
        out = graph.invoke({"query": query})
        result = out["result"]
        if args.json:
            print(json.dumps(result.to_json_dict(), ensure_ascii=False))
        else:
            print(format_result(result))
        if out.get("error") or result.message.startswith("Knowledge retrieval unavailable"):
            status = 1
    return status


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the bundled sample knowledge base and answer a few questions (offline)."""
    from langchain_lookup_knowledge.ingest import ingest_folder
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph

    settings = _settings(args)
    if not args.collection:
        settings = settings.model_copy(update={"collection": DEMO_COLLECTION})
    report = ingest_folder(SAMPLE_KB, settings, prune=True)
    _print_ingest(report, False)
    graph = build_lookup_graph(settings)
    for query in args.query or DEMO_QUESTIONS:
        print()
        print(format_result(graph.invoke({"query": query})["result"]))
    print(
        f"\ndatabase: {settings.resolved_milvus_uri} (collection {settings.collection!r}); "
        f"invocation records: {_hide_password(settings.resolved_invocation_db_url)}"
    )
    return 0


def _hide_password(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a parseable URL: show nothing of it rather than a secret
        return "<invocation_db_url>"


def _add_store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uri", help="Milvus URI (file.db for Milvus Lite, http://host:19530)")
    parser.add_argument("--collection", help="collection name")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands: ingest, query, demo, compare, eval, bench)."""
    parser = argparse.ArgumentParser(prog="lookup-knowledge", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="index a folder of markdown files")
    ingest.add_argument("path", help="knowledge folder")
    _add_store_args(ingest)
    ingest.add_argument("--prune", action="store_true", help="remove files that disappeared")
    ingest.add_argument(
        "--categories",
        metavar="FILE",
        help="TSV/CSV mapping each file's path (relative to the folder) to its category",
    )
    ingest.add_argument(
        "--category-column", help="the categories file's category column (default: second)"
    )
    ingest.add_argument("--json", action="store_true", help="print the summary as JSON")
    ingest.set_defaults(func=cmd_ingest)

    query = sub.add_parser("query", help="ask questions")
    query.add_argument("query", nargs="*", help="question(s)")
    query.add_argument("--queries-file", help="file with one question per line (or JSONL q)")
    _add_store_args(query)
    query.add_argument("--mode", choices=["auto", "vectorstore", "spring-ai", "sdk"])
    query.add_argument("--retrieval-mode", choices=["dense", "hybrid", "sparse"])
    query.add_argument("--no-record", action="store_true", help="do not record invocations")
    query.add_argument("--json", action="store_true", help="one JSON result per line")
    query.set_defaults(func=cmd_query)

    demo = sub.add_parser("demo", help="ingest the sample knowledge base and ask questions")
    demo.add_argument("query", nargs="*", help="your own questions instead of the demo's")
    _add_store_args(demo)
    demo.set_defaults(func=cmd_demo)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


_EXTRA_COMMANDS: list[Callable[[Any], None]] = []


def _unimplemented_rpc_filter(record: logging.LogRecord) -> bool:
    """Drop Milvus Lite's traceback for an RPC it does not implement (pymilvus asks for
    ``AllocTimestamp`` while waiting for an index; the call goes on without it)."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, NotImplementedError)


def _warnings_and_above(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lookup-knowledge`` console script."""
    # gRPC's C core prints keepalive chatter (GOAWAY too_many_pings) from Milvus Lite's local
    # server on long calls; the calls succeed, so keep it off the user's terminal.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    from langchain_lookup_knowledge.cli_extra import register_extra_commands

    _EXTRA_COMMANDS[:] = register_extra_commands()
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.verbose:
        # CRITICAL: their ERROR records carry tracebacks (e.g. milvus_lite on a locked database)
        # for failures this CLI already reports in one line.
        for noisy in ("pymilvus", "milvus_lite", "faiss", "jieba", "httpx"):
            logging.getLogger(noisy).setLevel(logging.CRITICAL)
        logging.getLogger("grpc._server").addFilter(_unimplemented_rpc_filter)
        # jieba (Milvus Lite's Chinese analyzer) sets its own logger to DEBUG when imported;
        # a filter on the logger outlives that.
        logging.getLogger("jieba").addFilter(_warnings_and_above)
    try:
        return int(args.func(args))
    except LookupKnowledgeError as exc:
        print(f"lookup-knowledge: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("lookup-knowledge: interrupted", file=sys.stderr)
        return 130
    finally:
        from langchain_lookup_knowledge.store.connection import close_all_clients

        close_all_clients()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
