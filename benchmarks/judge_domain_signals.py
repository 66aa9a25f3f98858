"""Domain signals from the knowledge base's own vectors, for the judgement (measured, not adopted).

How well a question's similarity fits the knowledge base's own distribution (arXiv
2410.08320), measured by signals of a lookup the embedder reads, each computable at
ingest and read in microseconds at lookup, read raw and relative to the knowledge base's
profiling questions (its off-topic probes, its pseudo-questions with and without their own
document) as the shipped features are:

* ``d_cmaxK`` / ``d_ctop3_K``: the max / top-3 mean cosine of the question to the k-means
  centroids (K = 16, 32, 64) of the knowledge base's chunk vectors;
* ``d_densK``: the mean of the K best dense similarities over the whole knowledge base (density);
* ``d_pcaR``: the share of the question vector's deviation from the chunks' mean that lies in
  their first R principal directions (R = 16, 32, 64: the knowledge base's subspace);
* ``d_kbmean``: the cosine to the chunks' mean vector;
* ``d_hub`` / ``d_hubz`` / ``d_hub5``: the top similarity less what the off-topic probes score
  on that chunk (a chunk every question is near is no evidence);
* ``d_pmax`` / ``d_pmargin``: the question's max cosine to the shipped probes, and the top
  similarity less it (nearer to an off-topic probe than to anything in the knowledge base);
* with ``--sentences``: ``s_max`` / ``s_top2`` / ``s_gain``, the question's max cosine to the
  sentences of its first block's document (sentence vectors, as an ingest would make them; the
  time they take is printed beside the chunks').

Each feature ``f`` is also read as ``r_f`` (the probes' median 0, the pseudo-questions' 1),
``pp_f`` / ``po_f`` / ``pt_f`` (percentile among the probes, the pseudo-questions, the
pseudo-questions with their document left out). ``features`` writes them per knowledge base
(its rows' questions embedded with the collection's embedder, its chunk vectors read from the
store); ``fit`` runs the judgement's leave-one-knowledge-base-out fit with the shipped features
and with each ``--add`` list on the same rows, and ``--oracle`` prints the ceiling: every
unrelated (then every) hand-written out-of-scope question of the dense group withheld.

    python benchmarks/judge_domain_signals.py features rben --uri /tmp/j27/en.db --collection rb \\
        --rows /tmp/fig/rows/rben.jsonl --out /tmp/j27/domain [--sentences]
    python benchmarks/judge_domain_signals.py fit /tmp/fig/rows/*.jsonl --features-dir \\
        /tmp/j27/domain --add d_cmax32,r_d_cmax32 --add d_pca64,r_d_pca64 --oracle
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from langchain_lookup_knowledge.judgement.features import KbProfile, quantiles
from langchain_lookup_knowledge.judgement.fitting import (
    FitOptions,
    leave_one_out,
    prepared,
    rates,
    read,
    show,
)
from langchain_lookup_knowledge.judgement.model import FEATURES

CENTROIDS = (16, 32, 64)
DENSITY = (5, 10, 30, 50)
SUBSPACE = (16, 32, 64)
_SENTENCE = re.compile(r"(?<=[.!?;。！？；])\s+|\n+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def kmeans(vectors: np.ndarray, k: int, seed: int = 0, rounds: int = 30) -> np.ndarray:
    """``k`` unit centroids of unit ``vectors`` (spherical k-means)."""
    k = min(k, len(vectors))
    rng = np.random.default_rng(seed)
    centroids = vectors[rng.choice(len(vectors), k, replace=False)].copy()
    for _ in range(rounds):
        nearest = (vectors @ centroids.T).argmax(1)
        moved = np.array(
            [
                vectors[nearest == j].mean(0) if (nearest == j).any() else centroids[j]
                for j in range(k)
            ]
        )
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        if np.allclose(moved, centroids):
            break
        centroids = moved
    return centroids


class Domain:
    """What the features read of one knowledge base: its chunk vectors and what is made of them
    at ingest (centroids, mean, principal directions, the probes' similarity to each chunk)."""

    def __init__(self, chunks: np.ndarray, sources: Sequence[str], probes: np.ndarray) -> None:
        self.chunks = chunks
        self.sources = np.array(sources)
        self.centroids = {k: kmeans(chunks, k) for k in CENTROIDS}
        self.mean = chunks.mean(0)
        _, _, directions = np.linalg.svd(chunks - self.mean, full_matrices=False)
        self.subspace = {r: directions[:r] for r in SUBSPACE}
        self.probes = probes

    def hub(self, probe_vectors: np.ndarray) -> None:
        """The profile's probes' similarity to every chunk (mean, std)."""
        sims = probe_vectors @ self.chunks.T
        self.hub_mean, self.hub_std = sims.mean(0), sims.std(0)

    def features(
        self, q: np.ndarray, *, leave_out: str | None = None, probe: int | None = None
    ) -> dict[str, float]:
        """The raw features of question vector ``q`` (``leave_out``: a source whose chunks
        are not searched; ``probe``: the index of ``q`` among the probes, left out of them)."""
        sims = self.chunks @ q
        if leave_out is not None:
            sims = np.where(self.sources == leave_out, -1.0, sims)
        order = np.argsort(-sims)
        top = float(sims[order[0]])
        out = {"d_top1": top}
        for k in DENSITY:
            out[f"d_dens{k}"] = float(sims[order[:k]].mean())
        for k, centroids in self.centroids.items():
            near = np.sort(centroids @ q)[::-1]
            out[f"d_cmax{k}"] = float(near[0])
            out[f"d_ctop3_{k}"] = float(near[:3].mean())
        out["d_kbmean"] = float(self.mean @ q / np.linalg.norm(self.mean))
        deviation = q - self.mean
        energy = float(deviation @ deviation)
        for r, directions in self.subspace.items():
            inside = float(((directions @ deviation) ** 2).sum())
            out[f"d_pca{r}"] = inside / energy if energy > 0 else 0.0
        to_probes = self.probes @ q
        if probe is not None:
            to_probes[probe] = -1.0
        to_probes = np.sort(to_probes)[::-1]
        out["d_pmax"] = float(to_probes[0])
        out["d_pmargin"] = top - float(to_probes[0])
        out["d_pmargin3"] = float(sims[order[:3]].mean() - to_probes[:3].mean())
        first = order[0]
        out["d_hub"] = top - float(self.hub_mean[first])
        out["d_hubz"] = out["d_hub"] / max(float(self.hub_std[first]), 1e-3)
        out["d_hub5"] = float(np.mean([sims[i] - self.hub_mean[i] for i in order[:5]]))
        return out


def sentences(text: str) -> list[str]:
    """The sentences of a chunk text worth a vector (3 words or more, or 6 CJK characters)."""
    out = []
    for part in _SENTENCE.split(text):
        part = re.sub(r"[`*_#>|\[\]()]", " ", part).strip()
        if len(part.split()) >= 3 or len(_CJK.findall(part)) >= 6:
            out.append(part[:400])
    return out


def write_features(args: argparse.Namespace) -> None:
    from langchain_lookup_knowledge.judgement.questions import (
        profile_questions,
        read_probes,
        source_order,
    )
    from langchain_lookup_knowledge.profiling import _opened, _searches
    from langchain_lookup_knowledge.settings import LookupSettings
    from langchain_lookup_knowledge.store.catalog_store import (
        query_all,
        source_of_chunk_key,
        stored_chunk_keys,
    )
    from langchain_lookup_knowledge.store.chunk_texts import iter_texts_by_source

    settings = LookupSettings(milvus_uri=args.uri, collection=args.collection, milvus_timeout_s=120)
    client, layout, embedder = _opened(settings, None)
    fields = [layout.id_field, layout.vector_field, layout.content_field]
    stored = query_all(client, layout.name, f'{layout.id_field} != ""', fields)
    chunks = np.array([r[layout.vector_field] for r in stored], dtype=np.float32)
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    sources = [PurePosixPath(source_of_chunk_key(str(r[layout.id_field]))).stem for r in stored]
    texts = [str(r.get(layout.content_field) or "") for r in stored]
    keys = stored_chunk_keys(client, layout.name, layout.id_field)
    documents = iter_texts_by_source(client, layout, keys, source_order(keys))
    profiling = profile_questions(documents=documents)
    dense = set(_searches(settings, layout, profiling)["hybrid"])
    rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["kind"] != "profile"]
    probes = list(read_probes())
    asked = list(dict.fromkeys([r["q"] for r in rows] + [q["q"] for q in profiling] + probes))
    embedder.prime(asked)
    vectors = {text: np.array(embedder.embed_query(text), dtype=np.float32) for text in asked}
    domain = Domain(chunks, sources, np.array([vectors[p] for p in probes]))
    profile_probes = [q for i, q in enumerate(profiling) if i in dense and q["kind"] == "probe"]
    pseudo = [q for i, q in enumerate(profiling) if i in dense and q["kind"] == "pseudo"]
    if profile_probes:
        domain.hub(np.array([vectors[q["q"]] for q in profile_probes]))
    else:
        domain.hub(domain.probes)
    where = {p: i for i, p in enumerate(probes)}
    profile: dict[str, dict[str, list[float]]] = {}

    def add(kind: str, values: Mapping[str, float]) -> None:
        for name, value in values.items():
            profile.setdefault(name, {}).setdefault(kind, []).append(value)

    for q in profile_probes:
        add("probe", domain.features(vectors[q["q"]], probe=where.get(q["q"])))
    for q in pseudo:
        add("own", domain.features(vectors[q["q"]]))
        add("out", domain.features(vectors[q["q"]], leave_out=q["rel"][0]))
    per_row = {r["q"]: domain.features(vectors[r["q"]], probe=where.get(r["q"])) for r in rows}
    if args.sentences:
        sentence_features(rows, per_row, vectors, sources, texts, embedder)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.kb}.json"
    path.write_text(json.dumps({"rows": per_row, "profile": profile}), encoding="utf-8")
    print(f"{args.kb}: {len(chunks)} chunks, {len(profile_probes)} probes, {len(pseudo)} pseudo")


def sentence_features(
    rows: Sequence[Mapping[str, Any]],
    per_row: dict[str, dict[str, float]],
    vectors: Mapping[str, np.ndarray],
    sources: Sequence[str],
    texts: Sequence[str],
    embedder: Any,
) -> None:
    """``s_max``, ``s_top2``, ``s_gain`` of the rows the embedder reads, and the time sentence
    vectors take beside chunk vectors."""
    by_source: dict[str, list[str]] = {}
    for source, text in zip(sources, texts, strict=True):
        by_source.setdefault(source, []).append(text)
    readable = [r for r in rows if r.get("readable") and r["blocks"]]
    firsts = sorted({r["blocks"][0]["src"] for r in readable})
    of_doc = {
        d: list(dict.fromkeys(s for t in by_source.get(d, []) for s in sentences(t)))
        for d in firsts
    }
    every = list(dict.fromkeys(s for d in firsts for s in of_doc[d]))
    started = time.perf_counter()
    embedded = np.array(embedder.embed_documents(every), dtype=np.float32) if every else None
    per_sentence = (time.perf_counter() - started) / max(len(every), 1)
    sample = list(texts[:200])
    started = time.perf_counter()
    embedder.embed_documents(sample)
    per_chunk = (time.perf_counter() - started) / max(len(sample), 1)
    total = sum(len(sentences(t)) for t in texts)
    print(
        f"sentences: {per_sentence * 1000:.1f} ms each, {total} in the knowledge base "
        f"({total * per_sentence:.0f} s) against {len(texts)} chunks at {per_chunk * 1000:.1f} ms "
        f"({len(texts) * per_chunk:.0f} s)"
    )
    if embedded is None:
        return
    embedded /= np.linalg.norm(embedded, axis=1, keepdims=True)
    index = {s: i for i, s in enumerate(every)}
    for row in readable:
        ids = [index[s] for s in of_doc[row["blocks"][0]["src"]]]
        if not ids:
            continue
        sims = np.sort(embedded[ids] @ vectors[row["q"]])[::-1]
        per_row[row["q"]] |= {
            "s_max": float(sims[0]),
            "s_top2": float(sims[:2].mean()),
            "s_gain": float(sims[0]) - float(row["blocks"][0]["sim"] or 0.0),
        }


def relative(profile: KbProfile, name: str, value: float) -> dict[str, float]:
    """``value`` of feature ``name`` read against the knowledge base's profile."""
    low, high = profile.median(name, "probe"), profile.median(name, "own")
    scaled = (
        0.5 if low is None or high is None or high - low < 1e-6 else (value - low) / (high - low)
    )
    return {
        name: value,
        f"r_{name}": max(-2.0, min(3.0, scaled)),
        f"pp_{name}": profile.percentile(name, "probe", value),
        f"po_{name}": profile.percentile(name, "own", value),
        f"pt_{name}": profile.percentile(name, "out", value),
    }


def with_features(items: list[dict], folder: Path) -> list[dict]:
    """``items`` (prepared rows) with each knowledge base's domain features added to the rows
    of the dense group (the others keep 0: the embedder does not read their questions)."""
    for kb in sorted({i["kb"] for i in items}):
        data = json.loads((folder / f"{kb}.json").read_text(encoding="utf-8"))
        profile = KbProfile(
            keys={f: {k: quantiles(v) for k, v in d.items()} for f, d in data["profile"].items()}
        )
        for item in items:
            if item["kb"] != kb or item.get("group") != "dense" or "x" not in item:
                continue
            for name, value in data["rows"][item["row"]["q"]].items():
                item["x"] |= relative(profile, name, value)
    return items


def run_fit(args: argparse.Namespace) -> None:
    items = with_features(prepared(read(args.rows)), args.features_dir)
    for add in ["", *args.add]:
        extra = tuple(name for name in add.split(",") if name)
        print(f"\n######## the shipped features + {', '.join(extra) or 'nothing'}")
        _, decided = leave_one_out(items, FitOptions(features=FEATURES + extra))
        if args.oracle and not extra:
            for kinds in (("unrelated",), ("unrelated", "near")):
                held = [
                    d | {"found": False}
                    if d["row"]["kind"] in kinds and d.get("group") == "dense"
                    else d
                    for d in decided
                ]
                print(show(f"oracle: dense {'+'.join(kinds)} withheld", rates(held)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    features = sub.add_parser("features", help="one knowledge base's domain features")
    features.add_argument("kb")
    features.add_argument("--uri", required=True)
    features.add_argument("--collection", required=True)
    features.add_argument("--rows", required=True, type=Path)
    features.add_argument("--out", required=True, type=Path)
    features.add_argument("--sentences", action="store_true")
    fitting = sub.add_parser("fit", help="leave one knowledge base out, with and without")
    fitting.add_argument("rows", nargs="+")
    fitting.add_argument("--features-dir", required=True, type=Path)
    fitting.add_argument("--add", action="append", default=[], help="comma list of features")
    fitting.add_argument("--oracle", action="store_true")
    args = parser.parse_args()
    if args.command == "features":
        write_features(args)
    else:
        run_fit(args)


if __name__ == "__main__":
    main()
