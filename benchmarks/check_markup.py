"""Markup noise in what the model reads: HTML tags, attributes and style fragments per message.

Ingests ``--folder`` into a Milvus Lite store under ``--store`` (a temporary folder by default;
an existing store with ``--collection`` is read as it is), asks the questions of ``--questions``
(JSONL rows with ``q``, at most ``--limit`` of them) through the ``lookup_knowledge`` tool, and
prints each message (the ToolMessage content) that holds a fragment, with the fragments found
and counts per pattern. Code spans and fenced code are left out of the check (code may show
HTML as written).

Usage (from the repository root)::

    python benchmarks/check_markup.py --folder ../shared/data/runbooks-en/content/runbooks \\
        --questions evals/runbooks_en_dev.jsonl --limit 20
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

PATTERNS = {
    "tag": re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>\n]*)?/?>"),
    "attribute": re.compile(r"\w+=\"[^\"]*\""),
    "style=": re.compile(r"style="),
    "width:": re.compile(r"width:"),
}
CODE = re.compile(r"```.*?```|``.*?``|`[^`\n]*`", re.DOTALL)
PLACEHOLDER = re.compile(r"<[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+>|<[A-Z_]+>")


def fragments(content: str) -> dict[str, list[str]]:
    """The fragments of each pattern in ``content`` outside code (placeholders ignored)."""
    text = PLACEHOLDER.sub("", CODE.sub("", content))
    found = {name: pattern.findall(text) for name, pattern in PATTERNS.items()}
    return {name: hits for name, hits in found.items() if hits}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", help="knowledge folder to ingest (omit to read --store)")
    parser.add_argument("--questions", required=True, help="JSONL file with a 'q' per row")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--store", help="Milvus Lite file (default: a new one under /tmp)")
    parser.add_argument("--collection", default="kb")
    parser.add_argument("--categories", help="categories file for the folder")
    args = parser.parse_args()

    from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
    from langchain_lookup_knowledge.ingest import ingest_folder

    store = args.store or str(Path(tempfile.mkdtemp(prefix="check-markup-")) / "kb.db")
    options: dict[str, object] = {"milvus_uri": store, "collection": args.collection}
    settings = LookupSettings(**options, record_invocations=False)  # type: ignore[arg-type]
    if args.folder:
        if args.categories:
            settings = settings.model_copy(update={"categories_file": args.categories})
        report = ingest_folder(args.folder, settings, show_progress=False)
        print(f"ingested {args.folder} into {store}: {report}", file=sys.stderr)
    tool = create_lookup_knowledge_tool(settings)
    rows = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line]
    totals: Counter[str] = Counter()
    messages_with = 0
    asked = rows[: args.limit]
    for index, row in enumerate(asked):
        call = {"type": "tool_call", "id": f"q{index}", "name": "lookup_knowledge"}
        msg = tool.invoke({**call, "args": {"query": row["q"]}})
        found = fragments(str(msg.content))
        if found:
            messages_with += 1
            print(f"--- {row['q']!r}")
            for name, hits in found.items():
                totals[name] += len(hits)
                print(f"  {name}: {len(hits)}  e.g. {hits[:3]}")
    print(f"{messages_with} of {len(asked)} messages hold markup; fragments: {dict(totals)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
