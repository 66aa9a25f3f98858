"""Question sets: a JSONL file of questions and their relevant documents, read and checked.

Example:
    >>> is_held_out("evals/runbooks_en_holdout.jsonl")
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.evaluation.runner import stem
from langchain_lookup_knowledge.questions import (
    Question,
    UnreadableQuestion,
    read_question_file,
    readable_only,
)

__all__ = [
    "HELD_OUT_MARKERS",
    "QuestionSet",
    "is_held_out",
    "load_questions",
    "question_paths",
    "read_question_rows",
]


HELD_OUT_MARKERS = ("test", "holdout")


@dataclass(frozen=True)
class QuestionSet:
    """Questions (``q1``, ``q2``, ... in file order), their judgements and knowledge bases.

    An out-of-scope question has empty judgements.
    """

    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]
    kbs: dict[str, str]

    @property
    def in_scope(self) -> list[str]:
        """Ids of questions with at least one relevant document."""
        return [q for q in self.queries if self.qrels[q]]

    @property
    def out_of_scope(self) -> list[str]:
        """Ids of questions the knowledge base does not answer."""
        return [q for q in self.queries if not self.qrels[q]]


def is_held_out(paths: str | Path | Sequence[str | Path]) -> bool:
    """A test or holdout split among ``paths``, by file name: scored blind.

    Example:
        >>> is_held_out("evals/tidb_zh_test.jsonl"), is_held_out(["evals/tidb_zh_dev.jsonl"])
        (True, False)
    """
    return any(
        marker in path.name.lower() for path in question_paths(paths) for marker in HELD_OUT_MARKERS
    )


def question_paths(paths: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    return [Path(p).expanduser() for p in items]


def load_questions(
    paths: str | Path | Sequence[str | Path], *, kb_name: str | None = None
) -> QuestionSet:
    """Read question files (concatenated in order); with ``kb_name``, only rows of that
    ``"kb"`` (and rows without one), e.g. one knowledge base's out-of-scope questions.

    Raises:
        ConfigurationError: missing file, bad JSON, a line without ``q`` or ``rel``, or no
            question left.
    """
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, float]] = {}
    kbs: dict[str, str] = {}
    for file in question_paths(paths):
        read_question_rows(file, kb_name, queries, qrels, kbs)
    if not queries:
        where = f" for kb {kb_name!r}" if kb_name is not None else ""
        names = ", ".join(str(p) for p in question_paths(paths))
        raise ConfigurationError(f"no questions in {names}{where}")
    return QuestionSet(queries=queries, qrels=qrels, kbs=kbs)


def read_question_rows(
    file: Path,
    kb_name: str | None,
    queries: dict[str, str],
    qrels: dict[str, dict[str, float]],
    kbs: dict[str, str],
) -> None:
    items = [
        UnreadableQuestion(
            item.origin,
            'expected {"q": ..., "rel": [stems]} ("rel": [] for a question the knowledge base '
            "does not answer)",
        )
        if isinstance(item, Question) and not item.judged
        else item
        for item in read_question_file(file)
    ]
    for question in readable_only(items, str(file)):
        if kb_name is not None and question.kb and question.kb != kb_name:
            continue
        qid = f"q{len(queries) + 1}"
        queries[qid] = question.text
        qrels[qid] = {stem(r): 1.0 for r in question.relevant if r}
        kbs[qid] = question.kb
