"""Fold phrasings of one unanswered question into one group, by meaning or by shared terms.

``meaning`` embeds each distinct question with the configured embedder and puts it in the
first group whose centroid is within ``MEANING_THRESHOLD`` cosine similarity (most asked
questions lead): "pod keeps restarting" and "container in a crash loop" share no term but
one meaning. ``terms`` puts questions that share most of their significant terms (Jaccard of
word and CJK-bigram sets) together: no model needed, and the only sound choice for questions the
embedder cannot read (CJK questions under the bundled English-only model are grouped by terms
even under ``meaning``). Without the question text (``record_query_text`` hash) groups are
identical questions; without a hash either (none), the documents the lookups came nearest to.

Example:
    >>> q = [GapQuestion("a", "disk full on node", 3, "", ""),
    ...      GapQuestion("b", "node disk is full", 1, "", ""),
    ...      GapQuestion("c", "chocolate cake", 1, "", "")]
    >>> [(g.count, g.examples) for g in group_questions(q, method="terms").groups]
    [(4, ['disk full on node', 'node disk is full']), (1, ['chocolate cake'])]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.records.gaps import GapQuestion

GroupMethod = Literal["meaning", "terms", "exact", "nearest_document"]
MEANING_THRESHOLD = 0.6
"""Cosine similarity to a group's centroid that joins it (MiniLM: paraphrases 0.6-0.9,
unrelated ops questions 0.1-0.4)."""
TERMS_THRESHOLD = 0.5
"""Jaccard overlap of significant terms with a group's leader that joins it."""
EXAMPLES = 5
NEAREST = 3

_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-]*[a-z0-9]|[a-z0-9]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "be", "can", "do", "does", "for", "from", "how", "i", "in", "is"}
    | {"it", "its", "my", "of", "on", "or", "our", "the", "to", "what", "when", "where"}
    | {"which", "why", "with", "you", "your", "this", "that", "there", "not", "no"}
)


def question_terms(text: str) -> frozenset[str]:
    """Significant terms: lower-case words without stopwords, and CJK character bigrams.

    Example:
        >>> sorted(question_terms("Why is the node disk full? 磁盘满了"))
        ['disk', 'full', 'node', '满了', '盘满', '磁盘']
    """
    lowered = text.casefold()
    terms = {w for w in _WORD.findall(lowered) if w not in _STOPWORDS}
    for run in _CJK.findall(lowered):
        terms.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return frozenset(terms)


def _mostly_cjk(text: str) -> bool:
    cjk = sum(len(run) for run in _CJK.findall(text))
    return cjk > 0 and cjk >= len(_WORD.findall(text.casefold()))


@dataclass
class GapGroup:
    """Unanswered questions that ask for one missing thing."""

    label: str
    count: int = 0
    questions: list[GapQuestion] = field(default_factory=list)
    vector: list[float] | None = None  # centroid (meaning)
    terms: frozenset[str] = frozenset()  # leader's terms (terms)

    @property
    def examples(self) -> list[str]:
        """Up to five phrasings, most asked first."""
        return [q.text for q in self.questions if q.text][:EXAMPLES]

    def to_dict(self) -> dict[str, Any]:
        """The group as the report's JSON shows it."""
        nearest: dict[str, list[float]] = {}
        hints: dict[str, Counter[str]] = {}
        for q in self.questions:
            for source, sim in q.nearest.items():
                entry = nearest.setdefault(source, [0, 0.0])
                entry[0] += q.count
                entry[1] = max(entry[1], sim)
            for kind, seen in q.l0_hints.items():
                counter = hints.setdefault(kind, Counter())
                for value, n in seen.items():
                    counter[value] += n * q.count
        ranked = sorted(nearest.items(), key=lambda kv: (-kv[1][0], -kv[1][1]))[:NEAREST]
        return {
            "label": self.label,
            "count": self.count,
            "distinct_questions": len(self.questions),
            "examples": self.examples,
            "nearest_documents": [
                {"source": source, "lookups": int(n), "best_similarity": round(best, 4)}
                for source, (n, best) in ranked
            ],
            "l0_hints": {
                kind: dict(counter.most_common(5)) for kind, counter in hints.items() if counter
            },
            "first_seen": min(q.first_seen for q in self.questions),
            "last_seen": max(q.last_seen for q in self.questions),
        }


@dataclass
class Grouping:
    """The groups, most asked first, and how they were made."""

    method: GroupMethod
    why: str
    groups: list[GapGroup]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.sqrt(sum(y * y for y in b)) or 1.0)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _join(group: GapGroup, question: GapQuestion, vector: list[float] | None = None) -> None:
    group.questions.append(question)
    group.count += question.count
    if vector is not None and group.vector is not None:
        n = len(group.questions)
        group.vector = [(c * (n - 1) + v) / n for c, v in zip(group.vector, vector, strict=True)]


def _by_terms(questions: list[GapQuestion], groups: list[GapGroup]) -> None:
    for question in questions:
        terms = question_terms(question.text or "")
        best = max(groups, key=lambda g: _jaccard(g.terms, terms), default=None)
        if best is not None and best.terms and _jaccard(best.terms, terms) >= TERMS_THRESHOLD:
            _join(best, question)
        else:
            groups.append(GapGroup(label=question.text or question.key, terms=terms))
            _join(groups[-1], question)


def _by_meaning(
    questions: list[GapQuestion], groups: list[GapGroup], embeddings: Embeddings
) -> None:
    vectors = [_unit(v) for v in embeddings.embed_documents([q.text or "" for q in questions])]
    meaning_groups: list[GapGroup] = []
    for question, vector in zip(questions, vectors, strict=True):
        best = max(meaning_groups, key=lambda g: _cosine(vector, g.vector or []), default=None)
        if best is not None and _cosine(vector, best.vector or []) >= MEANING_THRESHOLD:
            _join(best, question, vector)
        else:
            meaning_groups.append(GapGroup(label=question.text or question.key, vector=vector))
            _join(meaning_groups[-1], question)
    groups.extend(meaning_groups)


def group_questions(
    questions: list[GapQuestion],
    *,
    method: Literal["meaning", "terms"] = "meaning",
    embeddings: Embeddings | None = None,
    english_only_embedder: bool = False,
    why: str = "",
) -> Grouping:
    """Group distinct gap questions (most asked first); see the module doc for the methods."""
    ordered = sorted(questions, key=lambda q: -q.count)
    with_text = [q for q in ordered if q.text]
    hashed = [q for q in ordered if not q.text and not q.key.startswith("near:")]
    unhashed = [q for q in ordered if q.key.startswith("near:")]
    groups: list[GapGroup] = []
    used: GroupMethod = method
    if method == "meaning" and embeddings is not None:
        readable = [
            q for q in with_text if not (english_only_embedder and _mostly_cjk(q.text or ""))
        ]
        _by_meaning(readable, groups, embeddings)
        rest = [q for q in with_text if q not in readable]
        if rest:
            why += " CJK questions grouped by shared terms (the embedder reads English only)."
        _by_terms(rest, groups)
    else:
        used = "terms"
        _by_terms(with_text, groups)
    for question in hashed:  # record_query_text=hash: identical questions only
        groups.append(GapGroup(label=f"question #{question.key[:12]} (text not recorded)"))
        _join(groups[-1], question)
    for question in unhashed:  # record_query_text=none: by the document they came nearest to
        source = question.key.removeprefix("near:")
        groups.append(GapGroup(label=f"questions nearest to {source} (text not recorded)"))
        _join(groups[-1], question)
    if not with_text:
        used = "exact" if hashed else "nearest_document" if unhashed else used
    groups.sort(key=lambda g: -g.count)
    return Grouping(method=used, why=why.strip(), groups=groups)
