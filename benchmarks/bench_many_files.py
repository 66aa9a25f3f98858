"""Ingest at scale of files: N small markdown files against a real knowledge base, same run.

Writes ``--files`` small runbooks (frontmatter, a heading, three to six sentences taken from the
knowledge base given) into a temporary folder, then ingests, each in a fresh process so that
peak memory is its own: the real knowledge base first, then the N files. Prints, per ingest,
files, chunks, seconds, chunks per second and peak RSS, and the rate of the N files over the
real knowledge base's.

    python benchmarks/bench_many_files.py ../shared/data/runbooks-en/content/runbooks --files 20000
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, resource, sys, time
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.ingest import ingest_folder
folder, uri = sys.argv[1], sys.argv[2]
start = time.perf_counter()
report = ingest_folder(folder, LookupSettings(milvus_uri=uri, record_invocations=False),
                       show_progress=False)
seconds = time.perf_counter() - start
print(json.dumps({"files": len(report.indexed), "chunks": report.chunks_written,
                  "seconds": round(seconds, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def sentences(folder: Path) -> list[str]:
    """The sentences of the markdown files under ``folder`` (prose lines, cut at full stops)."""
    out: list[str] = []
    for path in sorted(folder.rglob("*.md")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.strip()
            if len(line) > 40 and not line.startswith(("#", "|", "-", "`", "<", "---")):
                out += [s.strip() + "." for s in re.split(r"\.\s", line) if len(s) > 30]
    return out


def write_files(root: Path, count: int, pool: list[str], seed: int = 0) -> None:
    rng = random.Random(seed)
    for i in range(count):
        category = f"area{i % 40:02d}"
        body = " ".join(rng.sample(pool, k=rng.randint(3, 6)))
        text = f"---\ntitle: Runbook {i}\ncategory: {category}\n---\n# Runbook {i}\n\n{body}\n"
        folder = root / category
        folder.mkdir(exist_ok=True)
        (folder / f"runbook-{i:05d}.md").write_text(text, encoding="utf-8")


def ingest(folder: Path, uri: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(uri)],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["chunks_per_s"] = round(figures["chunks"] / figures["seconds"], 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "kb", type=Path, help="a real knowledge base (its sentences fill the files)"
    )
    parser.add_argument("--files", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lookup-many-files-") as tmp:
        root = Path(tmp)
        real = ingest(args.kb, root / "real.db")
        print("real knowledge base:", json.dumps(real), flush=True)
        many = root / "many"
        many.mkdir()
        start = time.perf_counter()
        write_files(many, args.files, sentences(args.kb))
        print(f"wrote {args.files} files in {time.perf_counter() - start:.1f}s", flush=True)
        small = ingest(many, root / "many.db")
        print(f"{args.files} small files:", json.dumps(small))
        ratio = small["chunks_per_s"] / real["chunks_per_s"]
        print(f"rate of the small files / rate of the real knowledge base: {ratio:.2f}")


if __name__ == "__main__":
    main()
