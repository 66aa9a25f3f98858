"""Put another collection's pipeline into a report as a ``--variant`` (for ``eval pool``).

An ingest-time change needs its own collection, so its ``eval queries`` run is a second report
over the same questions. This writes the first report with the second one's pipeline as variant
NAME (and the second one's own variants as NAME.VARIANT), so ``lookup-knowledge eval pool
--variant NAME`` gives the paired, stratified difference and the questions moved.

Usage:
    python benchmarks/merge_as_variant.py NAME BASE.json OTHER.json OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def last_json(path: str) -> dict[str, Any]:
    lines = [ln for ln in Path(path).read_text().splitlines() if ln.startswith("{")]
    return dict(json.loads(lines[-1]))


def main() -> None:
    name, base_path, other_path, out_path = sys.argv[1:5]
    base, other = last_json(base_path), last_json(other_path)
    if base["per_question"]["pipeline"].keys() != other["per_question"]["pipeline"].keys():
        raise SystemExit("reports differ in their metrics")
    n = len(base["per_question"]["pipeline"]["mrr@5"])
    if len(other["per_question"]["pipeline"]["mrr@5"]) != n:
        raise SystemExit("reports differ in their questions")
    variants = dict(base.get("variants") or {})
    variants[name] = {
        "per_question": other["per_question"]["pipeline"],
        "decision": other.get("pipeline", {}).get("decision", {}),
    }
    for vname, v in (other.get("variants") or {}).items():
        variants[f"{name}.{vname}"] = v
    base["variants"] = variants
    Path(out_path).write_text(json.dumps(base) + "\n")


if __name__ == "__main__":
    main()
