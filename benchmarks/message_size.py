"""What the model reads of a lookup: characters per message and recall of the blocks it shows.

Every dev question of the five knowledge bases (``evals/<kb>_*dev*.jsonl``, and the
``out_of_scope_dev*.jsonl`` rows of that ``kb``) goes through the ``lookup_knowledge`` tool; the
ToolMessage ``content`` is what the model reads. Per knowledge base and pooled, it prints:

* the median characters of the message, over the in-scope questions and over all of them;
* recall@5 of the artifact's blocks (``evidenceBlocks``) and of the blocks the message shows
  (its ``source:`` header lines), per document as ``eval queries`` counts it;
* blocks shown per answered question, and the characters of relevant documents' text shown.

``--baseline REV`` runs the same questions on the same stores with the package as it is at git
revision ``REV`` (extracted with ``git archive`` into a temporary folder), in the same run, and
prints both side by side. ``--fit-knee`` prints, for each knee ratio, how many relevant documents
the first five blocks hold that the knee would leave out and how many other blocks it cuts, per
knowledge base and pooled, and leave-one-knowledge-base-out: the highest ratio that loses none on
four, and what it loses on the fifth.

The stores are Milvus Lite files under ``--stores`` (one per knowledge base, collection ``kb``),
ingested from ``--data`` when missing.

Usage (from the repository root)::

    python benchmarks/message_size.py --stores /tmp/kb --baseline 8aff86b
    python benchmarks/message_size.py --stores /tmp/kb --fit-knee --kb runbooks_en
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path, PurePosixPath
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KBS: dict[str, tuple[str, str, str | None]] = {
    # name: (folder under --data, store file, categories file under --data)
    "runbooks_en": ("runbooks-en/content/runbooks", "rben.db", None),
    "runbooks_zh": ("runbooks-zh/content.zh/runbooks", "rbzh.db", None),
    "apisix_en": (
        "apisix-docs/docs/en/latest",
        "apen.db",
        "apisix-docs/docs/en/sidebar_categories.tsv",
    ),
    "apisix_zh": (
        "apisix-docs/docs/zh/latest",
        "apzh.db",
        "apisix-docs/docs/zh/sidebar_categories.tsv",
    ),
    "tidb_zh": ("tidb-docs-zh", "tidb.db", "tidb-docs-zh/toc_categories.tsv"),
}
# A block's source header, in this package's message and in the earlier one, whose header
# line went on with "(evidenceKey ...; score ...; why: ...)".
SOURCE_HEADER = re.compile(r"^source: (.*?)(?: \(evidenceKey .*)?$")
BLOCK_HEADER = re.compile(r"^\[\d+\] ")
K = 5


def question_files(kb: str) -> list[str]:
    """The dev files of ``kb`` and the out-of-scope dev files (filtered by their ``kb``)."""
    own = sorted(glob.glob(str(REPO / "evals" / f"{kb}_*dev*.jsonl")))
    return own + sorted(glob.glob(str(REPO / "evals" / "out_of_scope_dev*.jsonl")))


def shown_blocks(content: str) -> list[tuple[str, int]]:
    """(source, characters of document text) of each block the message shows, in order."""
    blocks: list[tuple[str, int]] = []
    lines = content.split("\n")
    for index, line in enumerate(lines):
        match = SOURCE_HEADER.match(line)
        if match and index > 0 and BLOCK_HEADER.match(lines[index - 1]):
            blocks.append((match.group(1), 0))
        elif blocks and not BLOCK_HEADER.match(line):
            text = line[2:] if line.startswith("> ") else line.lstrip(">")
            source, chars = blocks[-1]
            blocks[-1] = (source, chars + len(text) + 1)
    return blocks


def stem(source: str) -> str:
    return PurePosixPath(source).stem


def recall(ranking: list[str], relevant: set[str]) -> float:
    first = list(dict.fromkeys(ranking[:K]))
    return len(set(first) & relevant) / len(relevant) if relevant else 0.0


def collect(kb: str, store: str, out: str) -> None:
    """Ask every question of ``kb`` through the tool; one JSON row per question to ``out``."""
    from langchain_lookup_knowledge import LookupSettings, create_lookup_knowledge_tool
    from langchain_lookup_knowledge.evaluation.queries import load_questions

    qset = load_questions(question_files(kb), kb_name=kb)
    settings = LookupSettings(milvus_uri=store, collection="kb", record_invocations=False)
    tool = create_lookup_knowledge_tool(settings)
    with open(out, "w", encoding="utf-8") as fh:
        for qid, text in qset.queries.items():
            call = {"type": "tool_call", "id": qid, "name": "lookup_knowledge"}
            msg = tool.invoke({**call, "args": {"query": text}})
            artifact = msg.artifact or {}
            blocks = artifact.get("evidenceBlocks") or []
            row = {
                "kb": kb,
                "qid": qid,
                "rel": sorted(qset.qrels[qid]),
                "found": bool(artifact.get("found")),
                "chars": len(msg.content),
                "artifact": [[stem(b["source"]), b["score"]] for b in blocks],
                "shown": [[stem(s), c] for s, c in shown_blocks(str(msg.content))],
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def ensure_store(kb: str, stores: Path, data: Path) -> str:
    """The store file of ``kb``, ingested from ``data`` when it is not there yet."""
    folder, name, categories = KBS[kb]
    store = stores / name
    if not store.exists():
        cmd = [sys.executable, "-m", "langchain_lookup_knowledge.cli", "ingest", str(data / folder)]
        cmd += ["--uri", str(store), "--collection", "kb"]
        if categories:
            cmd += ["--categories", str(data / categories)]
        subprocess.run(cmd, check=True, env=_env(REPO))
    return str(store)


def _env(package_root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(package_root)}


def extract(rev: str, into: Path) -> Path:
    """The package as it is at git revision ``rev``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "langchain_lookup_knowledge"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_collect(kb: str, store: str, package_root: Path, out: Path) -> list[dict[str, Any]]:
    """``collect`` in a child process whose package is the one under ``package_root``."""
    cmd = [sys.executable, __file__, "--collect", kb, "--store", store, "--out", str(out)]
    subprocess.run(cmd, check=True, env=_env(package_root))
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median characters, recall@5 of the artifact and of the shown blocks, blocks shown."""
    inscope = [r for r in rows if r["rel"]]
    answered = [r for r in inscope if r["found"]]

    def relevant_chars(r: dict[str, Any]) -> int:
        return sum(c for s, c in r["shown"] if s in r["rel"])

    return {
        "questions": len(rows),
        "in_scope": len(inscope),
        "median_chars_in_scope": statistics.median(r["chars"] for r in inscope),
        "median_chars_all": statistics.median(r["chars"] for r in rows),
        "recall@5_artifact": statistics.mean(
            recall([s for s, _ in r["artifact"]], set(r["rel"])) for r in inscope
        ),
        "recall@5_shown": statistics.mean(
            recall([s for s, _ in r["shown"]], set(r["rel"])) for r in inscope
        ),
        "blocks_shown_mean": statistics.mean(len(r["shown"]) for r in answered)
        if answered
        else 0.0,
        "median_relevant_chars_shown": statistics.median(relevant_chars(r) for r in answered)
        if answered
        else 0.0,
    }


def knee_losses(rows: list[dict[str, Any]], ratio: float) -> tuple[int, int]:
    """(relevant documents of the first five blocks the knee leaves out, other blocks cut)."""
    lost = cut = 0
    for row in rows:
        if not row["rel"] or not row["found"] or not row["artifact"]:
            continue
        blocks = row["artifact"][:K]
        first = blocks[0][1]
        keep = len(blocks)
        if first > 0:
            keep = next((i for i, (_, s) in enumerate(blocks) if i and s < first * ratio), keep)
        kept = {s for s, _ in blocks[:keep]}
        lost += len({s for s, _ in blocks[keep:] if s in row["rel"]} - kept)
        cut += sum(1 for s, _ in blocks[keep:] if s not in row["rel"])
    return lost, cut


RATIOS = [round(0.40 + 0.02 * i, 2) for i in range(28)]


def fit_knee(by_kb: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per ratio and knowledge base: relevant documents lost and other blocks cut; the highest
    ratio that loses none (pooled); leave-one-knowledge-base-out."""
    table = {kb: {str(r): knee_losses(rows, r) for r in RATIOS} for kb, rows in by_kb.items()}
    pooled = [row for rows in by_kb.values() for row in rows]
    table["pooled"] = {str(r): knee_losses(pooled, r) for r in RATIOS}

    def best(rows: list[dict[str, Any]]) -> float:
        safe = [r for r in RATIOS if knee_losses(rows, r)[0] == 0]
        return max(safe) if safe else 0.0

    held_out = {}
    for kb in by_kb:
        rest = [row for other, rows in by_kb.items() if other != kb for row in rows]
        ratio = best(rest)
        held_out[kb] = {"ratio": ratio, "lost_cut": knee_losses(by_kb[kb], ratio)}
    return {"table": table, "best_pooled": best(pooled), "leave_one_kb_out": held_out}


def print_fit(fit: dict[str, Any]) -> None:
    names = list(fit["table"])
    print("knee ratio: relevant documents lost / other blocks cut (first five blocks)")
    print("ratio " + "".join(f"{n:>16}" for n in names))
    for r in RATIOS:
        pairs = [fit["table"][n][str(r)] for n in names]
        cells = "".join(f"{f'{lost} / {cut}':>16}" for lost, cut in pairs)
        print(f"{r:<5} {cells}")
    print(f"highest ratio losing none, pooled: {fit['best_pooled']}")
    for kb, held in fit["leave_one_kb_out"].items():
        lost, cut = held["lost_cut"]
        print(f"  fit without {kb}: {held['ratio']}; on {kb}: {lost} lost, {cut} cut")


def print_summaries(results: dict[str, dict[str, dict[str, float]]]) -> None:
    keys = [
        ("median_chars_in_scope", "chars (in scope, median)", "{:.0f}"),
        ("median_chars_all", "chars (all, median)", "{:.0f}"),
        ("recall@5_artifact", "recall@5 artifact", "{:.4f}"),
        ("recall@5_shown", "recall@5 shown", "{:.4f}"),
        ("blocks_shown_mean", "blocks shown (mean)", "{:.2f}"),
        ("median_relevant_chars_shown", "relevant chars shown (median)", "{:.0f}"),
    ]
    for kb, systems in results.items():
        first = next(iter(systems.values()))
        print(f"\n{kb}: {first['questions']} questions, {first['in_scope']} in scope")
        print(f"{'':<32}" + "".join(f"{name:>14}" for name in systems))
        for key, title, fmt in keys:
            print(f"{title:<32}" + "".join(f"{fmt.format(s[key]):>14}" for s in systems.values()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", default="/tmp/lookup-message-stores")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--kb", action="append", choices=sorted(KBS), help="(default: all five)")
    parser.add_argument("--baseline", metavar="REV", help="also run the package at this revision")
    parser.add_argument("--fit-knee", action="store_true", help="print the knee fit")
    parser.add_argument("--json", metavar="FILE", help="write the summaries and rows here")
    parser.add_argument("--collect", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.collect:
        collect(args.collect, args.store, args.out)
        return 0
    stores = Path(args.stores)
    stores.mkdir(parents=True, exist_ok=True)
    kbs = args.kb or list(KBS)
    results: dict[str, dict[str, dict[str, float]]] = {}
    rows_by: dict[str, dict[str, list[dict[str, Any]]]] = {"current": {}, "baseline": {}}
    with tempfile.TemporaryDirectory(prefix="message-size-") as tmp:
        roots = {"current": REPO}
        if args.baseline:
            roots = {"baseline": extract(args.baseline, Path(tmp) / "baseline"), **roots}
        for kb in kbs:
            store = ensure_store(kb, stores, Path(args.data))
            for name, root in roots.items():
                rows = run_collect(kb, store, root, Path(tmp) / f"{kb}-{name}.jsonl")
                rows_by[name][kb] = rows
                results.setdefault(kb, {})[name] = summary(rows)
    for name in roots:
        pooled = [row for rows in rows_by[name].values() for row in rows]
        results.setdefault("pooled", {})[name] = summary(pooled)
    print_summaries(results)
    fit = fit_knee(rows_by["baseline"] or rows_by["current"]) if args.fit_knee else None
    if fit is not None:
        print()
        print_fit(fit)
    if args.json:
        payload = {"summaries": results, "knee": fit, "rows": rows_by}
        Path(args.json).write_text(json.dumps(payload, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
