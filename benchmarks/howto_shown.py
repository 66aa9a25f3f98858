"""How often the agent is shown the line that answers a how-to question.

Each line of the question file names, besides ``q`` and ``rel``, the ``answer``: the exact
text (a config key, a command, an API call) that answers it, copied from the answering
document. A lookup counts when the text the agent reads (the tool message's content) contains
that answer, whitespace and case aside. Every variant runs on the same questions and the same
collection in one run; the figures per variant: the share shown (Wilson 95% interval), the
relevant document in the first five blocks, the median characters the agent reads, and the
lookup's median time with its small-to-big part (``expand`` in the trace's timings).

    python benchmarks/howto_shown.py evals/apisix_en_howto_dev4.jsonl \\
        --uri /tmp/fig/apen.db --collection apen \\
        --variant 'matched_only={"section_expand_chars": 0}' --json

A collection ingested before small-to-big existed is read the same way: the variants differ
only in settings.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from pathlib import Path
from typing import Any

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _stem(source: str) -> str:
    name = source.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``hits`` out of ``n``."""
    if n == 0:
        return 0.0, 0.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _find(tree: Any, key: str) -> Any:
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


def run_variant(rows: list[dict[str, Any]], settings: LookupSettings) -> dict[str, Any]:
    """Ask every question once through the tool; the figures of the module docstring."""
    tool = create_lookup_knowledge_tool(settings)
    shown = relevant = 0
    chars: list[int] = []
    took: list[float] = []
    expand: list[float] = []
    misses: list[str] = []
    for index, row in enumerate(rows):
        call = {
            "type": "tool_call",
            "id": str(index),
            "name": tool.name,
            "args": {"query": row["q"]},
        }
        started = time.perf_counter()
        message = tool.invoke(call)
        took.append((time.perf_counter() - started) * 1000)
        content = str(message.content)
        chars.append(len(content))
        if _norm(row["answer"]) in _norm(content):
            shown += 1
        else:
            misses.append(row["q"])
        artifact = message.artifact or {}
        blocks = _find(artifact, "evidenceBlocks") or []
        stems = [_stem(str(b.get("source", ""))) for b in blocks[:5] if isinstance(b, dict)]
        if any(_stem(r) in stems for r in row["rel"]):
            relevant += 1
        timings = _find(artifact, "timings_ms") or _find(artifact, "timingsMs") or {}
        if isinstance(timings, dict) and "expand" in timings:
            expand.append(float(timings["expand"]))
    n = len(rows)
    low, high = wilson(shown, n)
    return {
        "questions": n,
        "answer_shown": round(shown / n, 3) if n else 0.0,
        "answer_shown_ci95": [round(low, 3), round(high, 3)],
        "relevant_in_top5": round(relevant / n, 3) if n else 0.0,
        "median_chars": statistics.median(chars) if chars else 0,
        "lookup_p50_ms": round(statistics.median(took), 1) if took else 0.0,
        "expand_p50_ms": round(statistics.median(expand), 2) if expand else None,
        "expanded_lookups": len(expand),
        "missed": misses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--kb-name", default=None, help='only rows whose "kb" is this')
    parser.add_argument("--uri", required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--variant", action="append", default=[], help="NAME=JSON overrides")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.kb_name is None or r.get("kb") == args.kb_name]
    base = {"milvus_uri": args.uri, "collection": args.collection, "record_invocations": False}
    variants: dict[str, dict[str, Any]] = {"pipeline": {}}
    for spec in args.variant:
        name, _, overrides = spec.partition("=")
        variants[name] = json.loads(overrides)
    report: dict[str, Any] = {"file": str(args.file), "kb": args.kb_name, "variants": {}}
    for name, overrides in variants.items():
        figures = run_variant(rows, LookupSettings(**(base | overrides)))
        report["variants"][name] = figures
        if not args.json:
            low, high = figures["answer_shown_ci95"]
            print(
                f"{name}: answer shown {figures['answer_shown']:.3f} [{low:.3f}, {high:.3f}] "
                f"of {figures['questions']}, relevant in top 5 {figures['relevant_in_top5']:.3f}, "
                f"median chars {figures['median_chars']}, "
                f"lookup p50 {figures['lookup_p50_ms']} ms, "
                f"expand p50 {figures['expand_p50_ms']} ms"
            )
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
