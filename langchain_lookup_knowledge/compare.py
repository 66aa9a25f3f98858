"""Both L1 paths on the same query vector, side by side (``lookup-knowledge compare``).

The VectorStore path (langchain-milvus) and the SDK path (pymilvus) search the same collection
with the same vector, filter and retrieval mode: those of the lookup's first attempt, planned by
:func:`~langchain_lookup_knowledge.pipeline.plan.plan_query` as the tool plans them (the CJK
rule, the L0 category filter, ``default_filter``), at ``k`` results; each result is shown in
the sidecar's normalized comparison shape (source, breadcrumb, rank, labelled score), with
overlap@k and rank differences.
Each path is called once before the timed call (the first one opens it), so ``latencyMs``
compares warm searches; ``firstCallMs`` is that first call.
A path that fails is reported with its error; the other one is still shown.

Example:
    $ lookup-knowledge compare "etcd fsync is slow" --collection runbooks --k 5
    $ lookup-knowledge compare "etcd fsync is slow" --json
"""

from __future__ import annotations

import time
from typing import Any

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.errors import LookupKnowledgeError
from langchain_lookup_knowledge.retrieval.sidecar import comparable, compare
from langchain_lookup_knowledge.settings import LookupSettings

PATHS = ("vectorstore", "sdk")


def compare_paths(
    query: str,
    settings: LookupSettings,
    *,
    k: int = 5,
    runtime: Any | None = None,
) -> dict[str, Any]:
    """Run ``query`` through both L1 paths and compare them (JSON-ready dict; never raises for a
    failing path, only for a store that cannot be opened).

    ``runtime`` (a :class:`~langchain_lookup_knowledge.pipeline.runtime.LookupRuntime`) lets a
    caller reuse one, or inject a path.
    """
    from dataclasses import replace

    from langchain_lookup_knowledge.pipeline.plan import plan_query
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime

    text = query.strip()
    if not text:
        raise LookupKnowledgeError("query is empty: ask a question in words")
    runtime = runtime or LookupRuntime(settings)
    vector = runtime.embeddings.embed_query(text)
    layout = runtime.layout
    l0 = runtime.matcher().match(text)
    plan = plan_query(text, settings, vector=vector, layout=layout, l0=l0)
    first = plan.first_attempt
    request = replace(plan.request(first.expr if first else None, vector), k=max(k, 1))
    out: dict[str, Any] = {
        "query": text,
        "collection": layout.name,
        "metric": layout.metric_type,
        "retrievalMode": plan.retrieval_mode,
        "attempt": first.name if first else None,
        "filter": request.expr,
        "k": request.k,
    }
    found: dict[str, list[Any]] = {}
    for name in PATHS:
        # The first call on a path opens it (a langchain-milvus store, a collection load): timed
        # apart, so latencyMs compares the two paths' searches, not their start-up.
        first_ms: float | None = None
        start = time.perf_counter()
        try:
            path = runtime.path(name)
            path.search(request)
            first_ms = round((time.perf_counter() - start) * 1000, 3)
            start = time.perf_counter()
            candidates = path.search(request)
        except Exception as exc:  # one failing path must not hide the other
            text_error = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            out[name] = {
                "status": "error",
                "error": f"{type(exc).__name__}: {text_error}".rstrip(": "),
                "latencyMs": round((time.perf_counter() - start) * 1000, 3),
                "firstCallMs": first_ms,
                "results": [],
            }
            continue
        found[name] = candidates
        out[name] = {
            "status": "ok",
            "latencyMs": round((time.perf_counter() - start) * 1000, 3),
            "firstCallMs": first_ms,
            "results": [
                comparable(c) | {"formula": c.score_label.formula} for c in candidates[: request.k]
            ],
        }
    if len(found) == len(PATHS):
        report = compare(found["vectorstore"], found["sdk"], request.k)
        out["overlapAtK"] = report["overlap_at_k"]
        out["rankDifferences"] = [
            {
                "evidenceKey": d["evidenceKey"],
                "vectorstoreRank": d["mainRank"],
                "sdkRank": d["sidecarRank"],
            }
            for d in report["rank_differences"]
        ]
        out["sameOrder"] = [c.evidence_key for c in found["vectorstore"][: request.k]] == [
            c.evidence_key for c in found["sdk"][: request.k]
        ]
    return out


def _cell(row: dict[str, Any] | None, width: int) -> str:
    if row is None:
        return " " * width
    key = safe_name(row["evidenceKey"])
    text = f"{key}  {row['scoreValue']:.4f} (sim {row['similarity']:.3f})"
    return text[:width].ljust(width)


def format_comparison(report: dict[str, Any], width: int = 62) -> str:
    """A readable side-by-side rendering of :func:`compare_paths`' report."""
    lines = [
        f"Q: {safe_name(report['query'])}",
        f"   collection={safe_name(repr(report['collection']))} metric={report['metric']} "
        f"retrieval_mode={report['retrievalMode']} k={report['k']}"
        + (f" filter={report['filter']}" if report.get("filter") else ""),
    ]
    vs, sdk = report["vectorstore"], report["sdk"]
    for name, side in (("vectorstore", vs), ("sdk", sdk)):
        results = side["results"]
        label = results[0]["scoreLabel"] if results else "-"
        formula = results[0]["formula"] if results else ""
        status = side["status"] if side["status"] == "ok" else f"ERROR {safe_name(side['error'])}"
        lines.append(
            f"   {name:<11} {status}; {side['latencyMs']:.1f} ms"
            + (f" (first call {first:.1f} ms)" if (first := side.get("firstCallMs")) else "")
            + f"; score {label}"
            + (f"; {formula}" if formula else "")
        )
    lines.append(f"   {'#':>2}  {'vectorstore (langchain-milvus)'.ljust(width)} | sdk (pymilvus)")
    rows = max(len(vs["results"]), len(sdk["results"]))
    for i in range(rows):
        left = vs["results"][i] if i < len(vs["results"]) else None
        right = sdk["results"][i] if i < len(sdk["results"]) else None
        mark = " " if left and right and left["evidenceKey"] == right["evidenceKey"] else "*"
        lines.append(f"   {i + 1:>2}{mark} {_cell(left, width)} | {_cell(right, width).rstrip()}")
    if "overlapAtK" in report:
        moved = [d for d in report["rankDifferences"] if d["vectorstoreRank"] != d["sdkRank"]]
        lines.append(
            f"   overlap@{report['k']} = {report['overlapAtK']:.2f}; "
            f"same order: {'yes' if report['sameOrder'] else 'no'}"
            + (f"; moved: {len(moved)}" if moved else "")
        )
    return "\n".join(lines)
