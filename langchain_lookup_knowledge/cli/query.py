"""``lookup-knowledge query QUESTION...``: ask questions (each argument, each file line, is one).

A question that cannot be read (bytes that are not UTF-8, a bad JSON line) is named on stderr and
skipped; the others are still answered, and the exit code is 1. When no question can be read at
all, nothing is asked: one error line, exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from langchain_lookup_knowledge import errors
from langchain_lookup_knowledge.cli.options import (
    Subcommands,
    add_store_args,
    ask_each,
    print_json,
    settings_from_args,
)
from langchain_lookup_knowledge.core.models import LookupResult, RetrievalError
from langchain_lookup_knowledge.errors import ConfigurationError, LookupKnowledgeError
from langchain_lookup_knowledge.questions import Question, gather_questions


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


def lookup_failed(out: Mapping[str, Any]) -> bool:
    """Whether a graph output is a retrieval failure (its ``error``), not an answer."""
    return out.get("error") is not None


def configuration_error(result: LookupResult, error: RetrievalError) -> LookupKnowledgeError:
    """A lookup's configuration failure as the error its first failing step raised (its
    ``Type: message`` attempt error names a class of :mod:`.errors`, e.g.
    ``CollectionNotFoundError``), else a :class:`ConfigurationError`; the message is the
    lookup's. ``query --json`` names that class."""
    for attempt in result.retrieval_trace.attempts:
        if attempt.error_kind == "configuration" and attempt.error:
            cls = getattr(errors, attempt.error.partition(":")[0].strip(), None)
            if isinstance(cls, type) and issubclass(cls, LookupKnowledgeError):
                return cls(error.message)
            break
    return ConfigurationError(error.message)


def damaged_store_error(result: LookupResult, error: RetrievalError) -> errors.DamagedStoreError:
    """A lookup's damaged-store failure as the error its first damaged step raised."""
    for attempt in result.retrieval_trace.attempts:
        if attempt.error_kind == "damaged" and attempt.error:
            _, found, message = attempt.error.partition("DamagedStoreError: ")
            return errors.DamagedStoreError(message if found else attempt.error)
    return errors.DamagedStoreError(error.message)


def run(args: argparse.Namespace) -> int:
    """Ask one or more questions."""
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.store.connection import open_client

    settings = settings_from_args(args)
    items = gather_questions(args.query or [], args.queries_file)
    if not items:
        raise LookupKnowledgeError("no query given: pass QUERY or --queries-file FILE")
    if not any(isinstance(item, Question) for item in items):
        # Nothing can be asked: a usage error (exit 2, one line), as before any lookup.
        unreadable = [i for i in items if not isinstance(i, Question)]
        problems = "; ".join(f"{i.origin}: {i.reason}" for i in unreadable)
        raise LookupKnowledgeError(f"no question to ask: {problems}")
    open_client(settings)  # a locked, missing or unreachable store: one line, exit 2
    graph = build_lookup_graph(settings)

    def ask(_: int, question: Question) -> bool:
        out = graph.invoke({"query": question.text})
        error = RetrievalError.model_validate(out["error"]) if out.get("error") else None
        result = LookupResult.model_validate(out["result"])
        if error is not None and error.kind == "configuration":  # every question would fail
            raise configuration_error(result, error)
        if error is not None and error.kind == "damaged":  # so would every one: rebuild first
            raise damaged_store_error(result, error)
        if args.json:
            print_json(out["result"])  # the contract's camelCase JSON, as the tool's artifact
        else:
            print(format_result(result))
        return not lookup_failed(out)

    return ask_each(items, ask)


def register(sub: Subcommands) -> None:
    """Add ``query`` to the subcommands."""
    parser = sub.add_parser("query", help="ask questions (each argument is one question)")
    parser.add_argument("query", nargs="*", help="question(s); quote a question of several words")
    parser.add_argument("--queries-file", help="file with one question per line (or JSONL q)")
    add_store_args(parser, paths=True, retrieval_mode=True)
    parser.add_argument("--no-record", action="store_true", help="do not record invocations")
    parser.add_argument("--json", action="store_true", help="one JSON result per line")
    parser.set_defaults(func=run)
