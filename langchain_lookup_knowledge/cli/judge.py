"""``lookup-knowledge judge rows`` and ``judge fit``: refit the judgement on your knowledge bases.

``judge rows FILE... --kb-name NAME --out ROWS.jsonl`` looks up a knowledge base's questions
(JSONL: ``{"q": ..., "rel": [file stems]}``; ``"rel": []`` out of scope, optional ``"kb"`` and
``"near_miss"``) and its profiling questions, one row each; ``judge fit ROWS... --out
MODEL.json`` fits the model on the rows of every knowledge base, prints each knowledge base's
figures judged by a model fitted on the others, and writes the model; point the
``judge_model_file`` setting (``LOOKUP_KNOWLEDGE_JUDGE_MODEL_FILE``) at it to use it.

Example:
    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["judge", "fit", "a.jsonl", "b.jsonl", "--out", "m.json"]).out
    'm.json'
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    settings_from_args,
)
from langchain_lookup_knowledge.errors import ConfigurationError

__all__ = ["read_judged_questions", "register"]


def read_judged_questions(paths: list[str], kb_name: str | None) -> list[dict[str, Any]]:
    """``{"q", "kind", "rel"}`` of every line of ``paths`` (rows of another ``kb`` skipped).

    Raises:
        ConfigurationError: a file is missing or a line is not a question (file and line named).
    """
    out: list[dict[str, Any]] = []
    for name in paths:
        try:
            lines = Path(name).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigurationError(f"questions file {name}: {exc.strerror or exc}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text, rel = row["q"], row["rel"]
                if not isinstance(text, str) or not text.strip() or not isinstance(rel, list):
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                msg = f'{name}:{number}: not a question line ({{"q": text, "rel": [stems]}})'
                raise ConfigurationError(msg) from None
            if kb_name and row.get("kb") not in (None, kb_name):
                continue
            kind = "in" if rel else "near" if row.get("near_miss") else "unrelated"
            out.append({"q": text, "kind": kind, "rel": [str(r) for r in rel]})
    return out


def _rows(args: argparse.Namespace) -> int:
    from langchain_lookup_knowledge.profiling import lookup_rows

    settings = settings_from_args(args)
    questions = read_judged_questions(args.files, args.kb_name)
    kb = args.kb_name or settings.collection
    with Path(args.out).open("w", encoding="utf-8") as out:
        for count, row in enumerate(lookup_rows(settings, questions, kb=kb), start=1):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            if count % 50 == 0:
                print(f"judge rows: {count} lookups", file=sys.stderr)
    return EXIT_OK


def _fit(args: argparse.Namespace) -> int:
    from langchain_lookup_knowledge.judgement.fitting import (
        FitOptions,
        leave_one_out,
        model_data,
        prepared,
        read,
    )

    try:
        by_kb = read(args.rows)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigurationError(f"judge fit: cannot read the rows: {exc}") from None
    if len(by_kb) < 2:
        raise ConfigurationError(
            f"judge fit needs the rows of two knowledge bases or more, got {len(by_kb)}"
        )
    options = FitOptions(min_found=args.min_found, high_precision=args.high_precision)
    items = prepared(by_kb)
    figures, _ = leave_one_out(items, options)
    data = model_data(items, by_kb, options, figures)
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(
        f"model written to {args.out}; thresholds {data['thresholds']}, "
        f"per model {data.get('group_thresholds', {})}"
    )
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``judge rows`` and ``judge fit`` to the subcommands."""
    parser = sub.add_parser("judge", help="refit the judgement (relevanceScore) on your KBs")
    actions = parser.add_subparsers(dest="action", required=True)
    rows = actions.add_parser("rows", help="look up a KB's questions and profile, one row each")
    rows.add_argument("files", nargs="+", help="question files (JSONL)")
    rows.add_argument("--kb-name", help="keep only rows whose 'kb' is this; names the KB")
    rows.add_argument("--out", required=True, help="rows file to write (JSONL)")
    add_store_args(rows)
    rows.set_defaults(func=_rows)
    fit = actions.add_parser("fit", help="fit on the rows of several KBs, judge each left out")
    fit.add_argument("rows", nargs="+", help="rows files of judge rows (two KBs or more)")
    fit.add_argument("--out", required=True, help="model file to write (JSON)")
    fit.add_argument("--min-found", type=float, default=0.98, help="in-scope found to keep")
    fit.add_argument("--high-precision", type=float, default=0.93, help="high's precision")
    fit.set_defaults(func=_fit)
