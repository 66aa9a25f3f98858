"""Lookup latency of two checkouts of this package, alternated question by question.

`lookup-knowledge bench` measures one checkout against bare langchain-milvus in one run; comparing
two checkouts means two runs, and on a shared machine the load between two runs moves more than
the difference looked for. Here each checkout serves tool calls in its own process (its source
first on PYTHONPATH, its own Milvus Lite collection, ingested by that checkout), and one driver
sends every question to both, the order of the two flipping every question and the question order
every round, so a load change hits both alike. A call is what bench's ``lookup_p50_ms`` times: a
full ``lookup_knowledge`` tool call, query-embedding cache cleared first, recording on (to a
throwaway SQLite file) as shipped. Reports both p50s, their ratio with a paired bootstrap 95%
interval, and the load average.

    python benchmarks/bench_pair.py --old /tmp/old-checkout /tmp/old.db --new . /tmp/new.db \\
        --collection rb --queries-file evals/runbooks_en_dev.jsonl --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = """
import json, sys, tempfile, time
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool

records = tempfile.mkdtemp(prefix="bench-pair-")
settings = LookupSettings(milvus_uri=sys.argv[1], collection=sys.argv[2],
                          record_invocations=True,
                          invocation_db_url=f"sqlite:///{records}/records.sqlite3")
embedder = build_embeddings(settings)
tool = create_lookup_knowledge_tool(settings, embeddings=embedder)
def call(q):
    return tool.invoke({"type": "tool_call", "id": "pair", "name": tool.name,
                        "args": {"query": q}})
call("warm up the model and the store")
print("ready", flush=True)
for line in sys.stdin:
    question = json.loads(line)
    embedder.clear()
    start = time.perf_counter()
    call(question)
    print((time.perf_counter() - start) * 1000.0, flush=True)
"""


class Side:
    """One checkout serving tool calls in its own process."""

    def __init__(self, source: Path, db: str, collection: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(source))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, db, collection],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=source,
        )
        if self._read() != "ready":
            raise SystemExit(f"{source}: the worker did not start")
        self.commit = subprocess.run(
            ["git", "-C", str(source), "log", "-1", "--format=%h"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()

    def _read(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def ask(self, question: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(question) + "\n")
        self.proc.stdin.flush()
        return float(self._read())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def ratio_interval(old: list[float], new: list[float], resamples: int = 2000) -> list[float]:
    """Percentile bootstrap of p50(new) / p50(old), questions resampled in pairs."""
    rng = random.Random(11)
    n = len(old)
    ratios = []
    for _ in range(resamples):
        pick = [rng.randrange(n) for _ in range(n)]
        ratios.append(
            statistics.median(new[i] for i in pick) / statistics.median(old[i] for i in pick)
        )
    ratios.sort()
    return [round(ratios[int(0.025 * resamples)], 3), round(ratios[int(0.975 * resamples)], 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", nargs=2, metavar=("SOURCE", "DB"), required=True)
    parser.add_argument("--new", nargs=2, metavar=("SOURCE", "DB"), required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--queries-file", required=True, help="JSONL with q")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    lines = Path(args.queries_file).read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["q"] for line in lines if line.strip()]
    sides = {
        "old": Side(Path(args.old[0]).resolve(), args.old[1], args.collection),
        "new": Side(Path(args.new[0]).resolve(), args.new[1], args.collection),
    }
    times: dict[str, list[float]] = {"old": [], "new": []}
    load_start = os.getloadavg()
    turn = 0
    for round_ in range(args.rounds):
        for question in questions if round_ % 2 == 0 else questions[::-1]:
            for name in ("old", "new") if turn % 2 == 0 else ("new", "old"):
                times[name].append(sides[name].ask(question))
            turn += 1
    for side in sides.values():
        side.close()
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    report = {
        "old_commit": sides["old"].commit,
        "new_commit": sides["new"].commit,
        "calls_each": len(times["old"]),
        "old_lookup_p50_ms": round(old, 2),
        "new_lookup_p50_ms": round(new, 2),
        "new_over_old_p50": round(new / old, 3),
        "ci95": ratio_interval(times["old"], times["new"]),
        "load_average": {"start": load_start, "end": os.getloadavg()},
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
