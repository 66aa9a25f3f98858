"""Both L1 paths on the same query vector, side by side (``lookup-knowledge compare``).

The VectorStore path (langchain-milvus) and the SDK path (pymilvus) search the same collection
with the same vector, filter and retrieval mode: those of the lookup's first attempt, prepared by
:func:`~langchain_lookup_knowledge.pipeline.transform.prepare_query` as the tool prepares them
(the question cleaned, the CJK rule, the L0 category filter, ``default_filter``), at ``k``
results; each result is shown in
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

from langchain_lookup_knowledge.redaction import describe_exception
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

    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.pipeline.transform import prepare_query

    runtime = runtime or LookupRuntime(settings)
    prepared = prepare_query(runtime, query)
    request = replace(prepared.first_request(), k=max(k, 1))
    plan, layout, first = prepared.plan, runtime.layout, prepared.plan.first_attempt
    out: dict[str, Any] = {
        "query": plan.search_text,
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
            out[name] = {
                "status": "error",
                "error": describe_exception(exc),
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
                comparable(c)
                | {"formula": c.score_label.formula, "rankScore": c.score_label.rank_score}
                for c in candidates[: request.k]
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


LEGEND = "\n".join(
    (
        "   raw: the path's own score (the RRF or weighted fusion, BM25, or the dense metric)",
        "   rank: rank_score, raw scaled to [0, 1] as the formula above says (dense: -); "
        "sim: cosine similarity",
        "   *: the two paths differ on that row; overlap@k: the share of evidence keys in both "
        "paths' first k;",
        "   moved: shared keys at different ranks; first call: the call that opened the path "
        "(not in its ms)",
    )
)


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    rank = row.get("rankScore")
    shown = "  -  " if rank is None else f"{rank:.3f}"
    return f"{row['scoreValue']:8.4f} {shown} {row['similarity']:.3f}  {row['evidenceKey']}"


def format_comparison(report: dict[str, Any]) -> str:
    """A readable side-by-side rendering of :func:`compare_paths`' report, with a legend of
    every figure it prints."""
    lines = [
        f"Q: {report['query']}",
        f"   collection={report['collection']!r} metric={report['metric']} "
        f"retrieval_mode={report['retrievalMode']} k={report['k']}"
        + (f" filter={report['filter']}" if report.get("filter") else ""),
    ]
    vs, sdk = report["vectorstore"], report["sdk"]
    for name, side in (("vectorstore", vs), ("sdk", sdk)):
        results = side["results"]
        label = results[0]["scoreLabel"] if results else "-"
        formula = results[0]["formula"] if results else ""
        status = side["status"] if side["status"] == "ok" else f"ERROR {side['error']}"
        lines.append(
            f"   {name:<11} {status}; {side['latencyMs']:.1f} ms"
            + (f" (first call {first:.1f} ms)" if (first := side.get("firstCallMs")) else "")
            + f"; score {label}"
            + (f"; {formula}" if formula else "")
        )
    rows = max(len(vs["results"]), len(sdk["results"]))
    pairs = [
        (
            vs["results"][i] if i < len(vs["results"]) else None,
            sdk["results"][i] if i < len(sdk["results"]) else None,
        )
        for i in range(rows)
    ]
    columns = "     raw  rank   sim  evidenceKey"
    width = max([len(columns)] + [len(_cell(left)) for left, _ in pairs])
    lines.append(f"   {'#':>2}  {'vectorstore (langchain-milvus)'.ljust(width)} | sdk (pymilvus)")
    lines.append(f"   {'':>2}  {columns.ljust(width)} | {columns}")
    for i, (left, right) in enumerate(pairs):
        mark = " " if left and right and left["evidenceKey"] == right["evidenceKey"] else "*"
        lines.append(f"   {i + 1:>2}{mark} {_cell(left).ljust(width)} | {_cell(right)}".rstrip())
    if "overlapAtK" in report:
        moved = [d for d in report["rankDifferences"] if d["vectorstoreRank"] != d["sdkRank"]]
        lines.append(
            f"   overlap@{report['k']} = {report['overlapAtK']:.2f}; "
            f"same order: {'yes' if report['sameOrder'] else 'no'}"
            + (f"; moved: {len(moved)}" if moved else "")
        )
    lines.append(LEGEND)
    return "\n".join(lines)
