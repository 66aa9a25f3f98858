"""``lookup-knowledge eval beir DIR``, ``eval queries FILE...`` and ``eval pool REPORT...``:
retrieval quality against bare LangChain baselines, on the configured collection unless
``--collection`` says otherwise."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from langchain_lookup_knowledge.cli.options import (
    EXIT_FAILED,
    EXIT_OK,
    Subcommands,
    add_store_args,
    print_output,
    settings_from_args,
    warn,
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
    print_output(report, args.json, format_beir)
    return EXIT_OK


def parse_fail_under(spec: str | None, known: tuple[str, ...]) -> dict[str, float]:
    """``recall@5=0.9,mrr@10=0.8`` as ``{metric: floor}``.

    Raises:
        LookupKnowledgeError: an unknown metric or a floor that is not a number in [0, 1].

    Example:
        >>> parse_fail_under("recall@5=0.9, mrr@10=0.8", ("recall@5", "mrr@10"))
        {'recall@5': 0.9, 'mrr@10': 0.8}
    """
    floors: dict[str, float] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        name, _, value = (x.strip() for x in part.partition("="))
        if name not in known:
            msg = f"--fail-under: unknown metric {name!r} (known: {', '.join(known)})"
            raise LookupKnowledgeError(msg)
        try:
            floor = float(value)
        except ValueError:
            floor = -1.0
        if not 0.0 <= floor <= 1.0:
            msg = f"--fail-under: {name} needs a number between 0 and 1, got {value!r}"
            raise LookupKnowledgeError(msg)
        floors[name] = floor
    return floors


def gate_failures(report: dict[str, Any], floors: dict[str, float]) -> list[str]:
    """One message per metric of ``report`` below its floor."""
    return [
        f"{name} = {report[name]:.3f} is below {floor} (--fail-under)"
        for name, floor in floors.items()
        if float(report[name]) < floor
    ]


def run_queries(args: argparse.Namespace) -> int:
    """Evaluate a JSONL question file on an ingested collection (and bare baselines); with
    ``--fail-under``, exit 1 when the pipeline scores below a floor."""
    from langchain_lookup_knowledge.evaluation.queries import METRICS, format_queries, run_queries

    floors = parse_fail_under(args.fail_under, METRICS)  # a bad spec fails before the run
    report = run_queries(
        args.file,
        settings_from_args(args),
        kb=args.kb,
        kb_name=args.kb_name,
        ablate=ablations_flag(args.ablate),
        blind=True if args.blind else None,
        show_progress=progress_flag(args),
        bare=[n.strip() for n in args.bare.split(",") if n.strip()] if args.bare else None,
        bare_uri=args.bare_uri,
        variants=variants_flag(args.variant),
    )
    print_output(report, args.json, format_queries)
    failures = gate_failures(report, floors)
    for failure in failures:
        warn(failure)
    return EXIT_FAILED if failures else EXIT_OK


def ablations_flag(value: str | None) -> bool | list[str]:
    """``--ablate`` alone (or ``all``): every component; ``--ablate a,b``: those."""
    if value is None:
        return False
    if value == "all":
        return True
    from langchain_lookup_knowledge.evaluation.queries import ABLATIONS

    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        raise LookupKnowledgeError(
            f"unknown --ablate component {unknown[0]!r}: use all or {', '.join(ABLATIONS)}"
        )
    return names


def variants_flag(values: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    """``--variant NAME=JSON`` (repeatable) -> {name: settings overrides}.

    Example:
        >>> variants_flag(['bm25={"rerank_weights": {"bm25_share": 0.2}}'])
        {'bm25': {'rerank_weights': {'bm25_share': 0.2}}}
    """
    out: dict[str, dict[str, Any]] = {}
    for text in values or []:
        name, _, overrides = text.partition("=")
        name = name.strip()
        try:
            parsed = json.loads(overrides) if overrides else None
        except json.JSONDecodeError as exc:
            raise LookupKnowledgeError(f"--variant {text!r}: invalid JSON: {exc}") from None
        if not name or not isinstance(parsed, dict):
            raise LookupKnowledgeError(
                f'--variant {text!r}: expected NAME={{"setting": value, ...}}'
            )
        if name in out:
            raise LookupKnowledgeError(f"--variant {name!r} given twice")
        out[name] = parsed
    return out


def run_pool(args: argparse.Namespace) -> int:
    """Pool saved ``eval queries --json`` reports: per-set and pooled deltas with intervals."""
    from langchain_lookup_knowledge.evaluation.pool import format_pool, load_report, pool_reports

    pool = pool_reports(
        [load_report(p) for p in args.reports], metric=args.metric, variant=args.variant
    )
    print_output(pool, args.json, format_pool)
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
    queries.add_argument("file", nargs="+", help="question file(s) (JSONL), concatenated")
    queries.add_argument("--kb", help="knowledge folder to build the bare baselines from")
    queries.add_argument(
        "--fail-under",
        metavar="METRIC=FLOOR,...",
        help="exit 1 when the pipeline scores below a floor, e.g. recall@5=0.9,mrr@10=0.8 "
        "(metrics: recall@5, mrr@5, mrr@10, ndcg@10, recall@10)",
    )
    queries.add_argument(
        "--kb-name", help='only rows whose "kb" is this (e.g. one KB\'s out-of-scope questions)'
    )
    queries.add_argument(
        "--ablate",
        nargs="?",
        const="all",
        help="switch components off one at a time (all, or a comma list) and report each gain",
    )
    queries.add_argument(
        "--blind", action="store_true", help="no question text, ranking or signal in the report"
    )
    queries.add_argument(
        "--bare",
        metavar="NAME,...",
        help="with --kb, only these bare wirings (dense, bm25, hybrid, hybrid_fetch50; "
        "default: all). bm25 alone embeds nothing: minutes instead of an hour on 3,000 chunks",
    )
    queries.add_argument(
        "--bare-uri",
        metavar="URI",
        help="with --kb, the Milvus (a Milvus Lite file or a server) that keeps the bare "
        "wirings' collections (default: the pipeline's --uri); they are reused by content, so "
        "one store of them serves every collection ingested from the same folder",
    )
    queries.add_argument(
        "--variant",
        action="append",
        metavar="NAME=JSON",
        help='also score a pipeline variant (settings overrides, e.g. bm25={"rerank_weights": '
        '{"bm25_share": 0.2}}) on the same questions in the same run, with the interval of '
        "its difference from the pipeline; repeatable",
    )
    add_measure_args(queries)
    queries.set_defaults(func=run_queries)

    pool = eval_sub.add_parser("pool", help="pool saved eval queries --json reports")
    pool.add_argument("reports", nargs="+", help="files holding an eval queries --json report")
    pool.add_argument("--metric", default="mrr@5", help="metric compared (default: mrr@5)")
    pool.add_argument(
        "--variant",
        metavar="NAME",
        help="pool this eval queries --variant in the pipeline's place (every report needs it)",
    )
    pool.add_argument("--json", action="store_true", help="last line: one JSON object")
    pool.add_argument("--no-progress", action="store_true", help="(nothing to show; accepted)")
    pool.set_defaults(func=run_pool)
