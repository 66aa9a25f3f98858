"""The questions ``bench`` times: a file's, or a built-in set; and the ones that retry.

Example:
    >>> len(load_bench_questions(None)) > 0
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import cycle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_lookup_knowledge.questions import read_question_file, readable_only

if TYPE_CHECKING:
    pass

__all__ = ["DEFAULT_QUESTIONS", "load_bench_questions", "retry_questions_of", "was_retried"]


DEFAULT_QUESTIONS = Path(__file__).resolve().parent.parent / "sample_kb_questions.jsonl"


def load_bench_questions(path: str | Path | None) -> list[str]:
    """Questions: JSONL (``q``, or BEIR's ``text``) or one per line; the sample questions by
    default. A file with an unreadable line is refused, naming each such line.

    Raises:
        QuestionFileError: the file is missing, empty or has unreadable lines.
    """
    file = Path(path).expanduser() if path else DEFAULT_QUESTIONS
    return [q.text for q in readable_only(read_question_file(file), str(file))]


def retry_questions_of(questions: Sequence[str], categories: Sequence[str]) -> list[str]:
    cats = [c for c in categories if c.strip()]
    if not cats:
        return list(questions)
    return [f"{cat}: {q}" for q, cat in zip(questions, cycle(cats), strict=False)]


def was_retried(message: Any) -> bool:
    artifact = getattr(message, "artifact", None) or {}
    trace = artifact.get("retrievalTrace") or {}
    return bool(trace.get("fallbackReason"))
