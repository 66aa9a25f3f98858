"""Questions from the command line and from question files: one reader for every command.

A question file holds one question per line, either plain text or a JSON object with ``q`` (or
BEIR's ``text``) and, for evaluation, ``rel`` (the relevant document stems). Each line is read on
its own: a line that is not valid UTF-8, not valid JSON or has no question becomes an
:class:`UnreadableQuestion` naming the file and line, and the other lines are still read. Only a
file-level problem (missing, no questions at all) raises :class:`QuestionFileError`.

Example:
    >>> question_from_argument("disk full", 1)
    Question(text='disk full', origin='argument 1', relevant=())
    >>> str(question_from_argument("caf\\udce9", 2))
    'argument 2: not valid UTF-8 (byte 0xe9 at character 4); skipped'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langchain_lookup_knowledge.errors import ConfigurationError

# How many unreadable lines a refusal names before it says "and N more".
_NAMED_PROBLEMS = 5


class QuestionFileError(ConfigurationError):
    """A question file cannot be used at all (missing, empty, or refused by a strict command)."""


@dataclass(frozen=True)
class Question:
    """One question and where it came from (``file:line`` or ``argument N``)."""

    text: str
    origin: str
    relevant: tuple[str, ...] = ()
    # Evaluation only: the line has "rel" (possibly [], a question the KB does not answer),
    # and its "kb" (the knowledge base it is asked of).
    judged: bool = field(default=False, repr=False, compare=False)
    kb: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class UnreadableQuestion:
    """A line or argument that holds no usable question, with the reason."""

    origin: str
    reason: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.reason}; skipped"


QuestionOrProblem = Question | UnreadableQuestion


def _not_text(text: str) -> str | None:
    """Why ``text`` cannot be encoded as UTF-8 (bytes the OS could not decode), else None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a raw byte that Python kept as a surrogate escape
            return f"not valid UTF-8 (byte 0x{code - 0xDC00:02x} at character {exc.start + 1})"
        return f"contains a lone surrogate (U+{code:04X}) at character {exc.start + 1}"
    return None


def question_from_argument(text: str, position: int) -> QuestionOrProblem:
    """A question given on the command line (``position`` counts from 1)."""
    origin = f"argument {position}"
    problem = _not_text(text)
    if problem:
        return UnreadableQuestion(origin, problem)
    if not text.strip():
        return UnreadableQuestion(origin, "empty question")
    return Question(text.strip(), origin)


def _from_line(raw: bytes, origin: str) -> QuestionOrProblem | None:
    try:
        line = raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return UnreadableQuestion(
            origin,
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
            "save the file as UTF-8",
        )
    if not line:
        return None
    if not line.startswith("{"):
        problem = _not_text(line)
        return UnreadableQuestion(origin, problem) if problem else Question(line, origin)
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return UnreadableQuestion(origin, f"invalid JSON: {exc}")
    if not isinstance(row, dict):
        return UnreadableQuestion(origin, "a JSON line must be an object")
    text = str(row.get("q") or row.get("text") or "").strip()
    if not text:
        return UnreadableQuestion(origin, 'no question: expected {"q": ...}')
    problem = _not_text(text)
    if problem:
        return UnreadableQuestion(origin, problem)
    rel = row.get("rel")
    relevant = tuple(str(r) for r in (rel if isinstance(rel, list) else [rel] if rel else []))
    return Question(text, origin, relevant, judged="rel" in row, kb=str(row.get("kb") or ""))


def read_question_file(path: str | Path) -> list[QuestionOrProblem]:
    """Every line of a question file, in order, as a question or the reason it is unreadable.

    Raises:
        QuestionFileError: the file is missing, unreadable, or holds no line at all.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise QuestionFileError(f"questions file not found: {file}")
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise QuestionFileError(f"cannot read questions file {file}: {exc.strerror}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    items = []
    for number, raw in enumerate(data.splitlines(), start=1):
        item = _from_line(raw, f"{file}:{number}")
        if item is not None:
            items.append(item)
    if not items:
        raise QuestionFileError(f"no questions in {file}")
    return items


def readable_only(items: Iterable[QuestionOrProblem], source: str) -> list[Question]:
    """The questions, for commands that measure (eval, bench): a figure over a silently smaller
    question set would mislead, so any unreadable line refuses the whole file, naming each.

    Raises:
        QuestionFileError: an item is unreadable (the first few are named).
    """
    items = list(items)
    problems = [i for i in items if isinstance(i, UnreadableQuestion)]
    if problems:
        named = "; ".join(f"{p.origin}: {p.reason}" for p in problems[:_NAMED_PROBLEMS])
        more = len(problems) - _NAMED_PROBLEMS
        raise QuestionFileError(
            f"{len(problems)} unreadable line(s) in {source}: {named}"
            + (f"; and {more} more" if more > 0 else "")
        )
    return [i for i in items if isinstance(i, Question)]


def gather_questions(
    arguments: Sequence[str], questions_file: str | Path | None
) -> list[QuestionOrProblem]:
    """Command-line questions first, then the file's lines (either may be absent)."""
    items = [question_from_argument(text, n) for n, text in enumerate(arguments, start=1)]
    if questions_file:
        items.extend(read_question_file(questions_file))
    return items
