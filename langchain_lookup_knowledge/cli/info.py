"""``lookup-knowledge info``: what a collection holds and how its lookups are judged.

Its chunks and documents, the embedder that built it (and why, under ``auto``), its KB
vocabulary, and the profile the judgement reads every lookup against (measured at ingest: what
the knowledge base's own pseudo-questions, the same with their own document left out, and the
off-topic probes score), with the thresholds of ``relevanceScore``.

Example:
    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["info", "--json"]).json
    True
"""

from __future__ import annotations

import argparse
from typing import Any

from langchain_lookup_knowledge.cli.options import (
    EXIT_OK,
    Subcommands,
    add_store_args,
    print_output,
    settings_from_args,
)

__all__ = ["collection_info", "register"]


def collection_info(settings: Any) -> dict[str, Any]:
    """The collection's counts, vocabulary and judgement profile (raises
    :class:`CollectionNotFoundError` when there is no such collection)."""
    from langchain_lookup_knowledge.judgement.model import JudgeModel
    from langchain_lookup_knowledge.store.catalog_store import load_catalog
    from langchain_lookup_knowledge.store.connection import open_client
    from langchain_lookup_knowledge.store.embedder_record import stored_embedder
    from langchain_lookup_knowledge.store.profile_store import read_profile
    from langchain_lookup_knowledge.store.schema import require_chunk_collection
    from langchain_lookup_knowledge.store.vocabulary_store import load_vocabulary

    client = open_client(settings)
    require_chunk_collection(client, settings)
    client.load_collection(settings.collection)
    chunks = int(client.get_collection_stats(settings.collection).get("row_count", 0))
    catalog = settings.resolved_catalog_collection
    documents = len(load_catalog(client, catalog)) if client.has_collection(catalog) else 0
    vocabulary = load_vocabulary(client, settings)
    profile = read_profile(client, settings)
    model = JudgeModel.configured(settings.judge_model_file)
    embedder = stored_embedder(client, settings.collection)
    out: dict[str, Any] = {
        "collection": settings.collection,
        "chunks": chunks,
        "documents": documents,
        "embedder": None
        if embedder is None
        else {
            "provider": embedder.provider,
            "model": embedder.model,
            "dimension": embedder.dimension,
            "label": embedder.label(),
            "reason": embedder.reason or None,
        },
        "vocabulary": {
            "documents": vocabulary.vocabulary.documents,
            "terms": len(vocabulary.vocabulary.frequencies),
        }
        if vocabulary.vocabulary is not None
        else {"none": vocabulary.note},
        "evidenceDecision": "profiled",  # the one decision (the key stays for --json readers)
        "thresholds": dict(model.thresholds),
        "groupThresholds": {g: dict(t) for g, t in model.group_thresholds.items()},
    }
    if profile.profile is None:
        out["profile"] = {"none": profile.note, "lookupsRead": "the typical profile"}
    else:
        info = profile.info or {}
        out["profile"] = {
            "counts": dict(profile.profile.counts),
            "medians": {
                key: {kind: profile.profile.median(key, kind) for kind in kinds}
                for key, kinds in profile.profile.keys.items()
            },
            "seconds": info.get("seconds"),
        }
    return out


def _thresholds_line(out: dict[str, Any]) -> str:
    def line(t: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.3f}" for k, v in t.items())

    by_group = out.get("groupThresholds") or {}
    if not by_group:
        return line(out["thresholds"])
    models = {"dense": "dense model", "bm25": "BM25-only model"}
    return "; ".join(f"{models.get(g, g)}: {line(t)}" for g, t in by_group.items())


def _embedder_line(embedder: dict[str, Any] | None) -> str:
    if embedder is None:
        return "not recorded (the collection was made by another tool or an old version)"
    reason = embedder.get("reason")
    return embedder["label"] + (f"; chosen by {reason}" if reason else "")


def _render(out: dict[str, Any]) -> str:
    lines = [
        f"collection {out['collection']!r}: {out['chunks']} chunks, {out['documents']} documents",
        "embedder: " + _embedder_line(out["embedder"]),
        "vocabulary: "
        + (
            f"{out['vocabulary']['terms']} terms over {out['vocabulary']['documents']} documents"
            if "terms" in out["vocabulary"]
            else out["vocabulary"]["none"]
        ),
        f"evidence decision: {out['evidenceDecision']}; relevanceScore thresholds: "
        + _thresholds_line(out),
    ]
    profile = out["profile"]
    if "none" in profile:
        lines.append(f"judgement profile: {profile['none']}; lookups read the typical profile")
        return "\n".join(lines)
    lines.append(
        f"judgement profile (measured at ingest in {profile['seconds']} s; median key score by "
        "question kind: probe = off-topic probes, own = its pseudo-questions, out = the same "
        "with their own document left out):"
    )
    for key, kinds in profile["medians"].items():
        shown = ", ".join(
            f"{kind} {value:.3f} (n={profile['counts'].get(f'{key}.{kind}', 0)})"
            for kind, value in kinds.items()
            if value is not None
        )
        lines.append(f"  {key}: {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    print_output(collection_info(settings), args.json, _render)
    return EXIT_OK


def register(sub: Subcommands) -> None:
    """Add ``info`` to the subcommands."""
    parser = sub.add_parser("info", help="what a collection holds and its judgement profile")
    add_store_args(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run)
