"""The questions a knowledge base is profiled with: off-topic probes and its own pseudo-questions.

* :func:`read_probes`: questions from many domains (cooking, travel, sport, taxes, pets...),
  English and Chinese, shipped with the package: what an off-topic question scores here.
* :func:`pseudo_questions`: one prose sentence of each of up to ``limit`` documents, cut to a
  question's length; looked up with their own document left out they say what the knowledge
  base's neighbouring documents score for a question of its own domain.

Example:
    >>> len(read_probes()) > 100
    True
    >>> pseudo_questions([("a.md", "# Disk\\n\\nThe node disk is almost full on this host.")])
    [('a.md', 'The node disk is almost full on this host')]
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

__all__ = [
    "PROBES",
    "PSEUDO_QUESTIONS",
    "first_question",
    "profile_questions",
    "pseudo_questions",
    "questions_in_order",
    "read_probes",
    "source_order",
    "source_rank",
]

PSEUDO_QUESTIONS = 32
"""Pseudo-questions per knowledge base (one per document, up to this many)."""
PROBES = 48
"""Off-topic probes per knowledge base: an even sample of the shipped ones (both languages)."""
_LATIN_WORDS = (5, 14)  # a pseudo-question's length in Latin words
_CJK_CHARS = (8, 30)  # ... or in CJK characters
_SENTENCE_END = re.compile(r"(?<=[.!?;:。！？；：])\s*")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z0-9_][\w.-]*")


@lru_cache(maxsize=1)
def read_probes() -> tuple[str, ...]:
    """The off-topic probes shipped with the package (``probes.txt``), in file order."""
    text = resources.files(__package__).joinpath("probes.txt").read_text(encoding="utf-8")
    return tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _prose_lines(text: str) -> Iterable[str]:
    """The lines of ``text`` that are prose: no heading, fence, code, table or breadcrumb."""
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or line.startswith(("    ", "\t")):
            continue
        if stripped[0] in "#|<>!-=*[{" or " > " in stripped or stripped.startswith("$"):
            continue
        yield stripped


def _question_of(sentence: str) -> str | None:
    """``sentence`` cut to a question's length, or None when it is too short to be one."""
    sentence = re.sub(r"[`*_\[\]()]", "", sentence).strip(" .;:,。；：，")
    cjk = len(_CJK.findall(sentence))
    if cjk >= _CJK_CHARS[0]:
        return sentence[: _CJK_CHARS[1] + len(sentence) - len(sentence.lstrip())].strip()
    words = _WORD.findall(sentence)
    if cjk == 0 and len(words) >= _LATIN_WORDS[0]:
        return " ".join(sentence.split()[: _LATIN_WORDS[1]])
    return None


def source_order(sources: Iterable[str]) -> list[str]:
    """``sources`` in the order pseudo-questions are taken from them: by a hash of the source,
    so that the same knowledge base always gives the same questions, whatever its file order.

    Example:
        >>> sorted(source_order(["b.md", "a.md"])) == ["a.md", "b.md"]
        True
    """
    return sorted(set(sources), key=source_rank)


def source_rank(source: str) -> str:
    """Where ``source`` comes in :func:`source_order` (a hash of it)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def first_question(texts: Iterable[str]) -> str | None:
    """The first prose sentence of question length in a document's chunk ``texts``, or None."""
    for text in texts:
        for line in _prose_lines(text):
            for sentence in _SENTENCE_END.split(line):
                found = _question_of(sentence)
                if found:
                    return found
    return None


def pseudo_questions(texts: Sequence[tuple[str, str]], limit: int = 60) -> list[tuple[str, str]]:
    """``(source, question)`` pairs: the first prose sentence of question length of each of up
    to ``limit`` documents of ``texts`` (``(source, chunk text)``), the documents taken in
    :func:`source_order`."""
    by_source: dict[str, list[str]] = {}
    for source, text in texts:
        by_source.setdefault(source, []).append(text)
    return questions_in_order(
        ((source, by_source[source]) for source in source_order(by_source)), limit
    )


def questions_in_order(
    documents: Iterable[tuple[str, Sequence[str]]], limit: int
) -> list[tuple[str, str]]:
    """``(source, question)`` of the first ``limit`` of ``documents`` (``(source, chunk texts)``,
    already in :func:`source_order`) that have a question; stops reading ``documents`` there,
    so a lazy iterable is read only as far as needed."""
    out: list[tuple[str, str]] = []
    if limit <= 0:
        return out
    for source, chunk_texts in documents:
        found = first_question(chunk_texts)
        if found:
            out.append((source, found))
            if len(out) >= limit:
                break
    return out


def profile_questions(
    texts: Sequence[tuple[str, str]] | None = None,
    *,
    pseudo: int = PSEUDO_QUESTIONS,
    probes: int = PROBES,
    documents: Iterable[tuple[str, Sequence[str]]] | None = None,
) -> list[dict[str, Any]]:
    """The profiling questions of a knowledge base of ``texts`` (``(source, chunk text)``), or
    of ``documents`` (``(source, chunk texts)`` in :func:`source_order`, read lazily):
    ``{"q", "kind", "rel"}`` with ``kind`` ``pseudo`` (``rel``: its document) or ``probe``.

    Example:
        >>> qs = profile_questions([("a.md", "The node disk is almost full on this host.")])
        >>> [q["kind"] for q in qs].count("pseudo"), [q["kind"] for q in qs].count("probe")
        (1, 48)
    """
    shipped = read_probes()
    step = max(1, len(shipped) // probes) if probes else 0
    chosen = list(shipped[::step][:probes]) if probes else []
    if documents is not None:
        pairs = questions_in_order(documents, pseudo)
    else:
        pairs = pseudo_questions(texts or [], limit=pseudo)
    out = [{"q": q, "kind": "pseudo", "rel": [PurePosixPath(src).stem]} for src, q in pairs]
    return out + [{"q": q, "kind": "probe", "rel": []} for q in chosen]
