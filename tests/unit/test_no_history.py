"""No development history where a user or a maintainer reads: the README, docs/ and the package's
own text (docstrings, comments, setting descriptions, messages). Sessions, issue numbers, commit or
release hashes and "before, it did X" stories belong in commit messages and CHANGELOG.md (exempt).

The patterns are phrases, not words: "release" the verb, "before" as a preposition and a hex
digest in a doctest stay allowed.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "langchain_lookup_knowledge"
TEXT_TOKENS = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}


HISTORY = re.compile(
    "|".join(
        [
            r"\bsessions? \d+\b",  # session 10
            r"\bissues? ?#?\d+\b",  # issue 11, issue #11
            r"\bthe issue's\b",  # the target
            r"`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}`",  # a hash in backticks
            r"\b(?:commit|release)s? `?[0-9a-f]{7,40}\b",  # commit 4cb9694, release a5c587d
            r"\b(?:earlier|previous|prior|older|former) "
            r"(?:releases?|sessions?|versions?|defaults?|collections|models?)\b",
            r"\b(?:this|that|each|every|last|next|per) (?:release|session)\b",
            r"\bbefore (?:this|that|the) (?:release|session|change|fix|refactor|setting)\b",
            r"\bbefore, (?:it|this|the|a|an|each|every|lookups?|ingest|we)\b",  # before, it did X
            r"[(,;] ?was [~<>]?\d",  # (was 106 s), ..., was 7/16
            r"\bused to (?:be|give|return|say|do|take|answer|read)\b",
            r"\bsince (?:release|session|issue)\b",
            r"\bthe (?:old|previous) (?:behaviou?r|code)\b",
        ]
    ),
    flags=re.I,
)


def hits_in(text: str, where: str, first_line: int = 1) -> list[tuple[str, str, str]]:
    """(where, phrase, "where:line: phrase in the line") for each history phrase of ``text``."""
    found = []
    for offset, line in enumerate(text.splitlines()):
        for match in HISTORY.finditer(line):
            shown = f"{where}:{first_line + offset}: {match.group(0)!r} in {line.strip()[:90]!r}"
            found.append((where, match.group(0).lower(), shown))
    return found


def package_text(path: Path) -> list[tuple[int, str]]:
    """Each comment and string literal (docstrings, descriptions, messages) with its line."""
    source = path.read_text(encoding="utf-8")
    parts = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in TEXT_TOKENS:
            parts.append((token.start[0], token.string))
    return parts


def doc_hits() -> list[str]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [
        shown
        for page in pages
        for _, _, shown in hits_in(
            page.read_text(encoding="utf-8"), page.relative_to(REPO).as_posix()
        )
    ]


def package_hits() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for line, text in package_text(path):
            found.extend(hits_in(text, where, line))
    return found


def test_the_patterns_catch_history_and_spare_ordinary_words() -> None:
    history = [
        "measured in session 10",
        "issue 11's bound",
        "release `a5c587d`",
        "first lookup 2.4 s (was 106 s)",
        "made by an earlier release",
        "the previous default",
        "before this release",
        "commit 0be37cd",
        "Before, it returned None",
        "as every earlier release measured",
        "since session 9",
        "one run per release",
        "on the previous collections",
        "the level before this setting",
    ]
    ordinary = [
        "the rebuild releases the collection",
        "before any lookup runs",
        "fingerprint 3b629665",
        "(3, 'd7505540015e')",
        "no longer on disk",
        "it was built with",
        "the issue of a token",
        "SEED = 20261201",
        "checked before the upsert",
        "a session of LangGraph Studio",
    ]
    assert all(HISTORY.search(text) for text in history), [
        t for t in history if not HISTORY.search(t)
    ]
    assert not any(HISTORY.search(text) for text in ordinary), [
        t for t in ordinary if HISTORY.search(t)
    ]


def test_readme_and_docs_tell_no_history() -> None:
    hits = doc_hits()
    assert not hits, "development history in the README or docs/:\n" + "\n".join(hits)


def test_package_text_tells_no_history() -> None:
    hits = package_hits()
    assert not hits, "development history in the package's text:\n" + "\n".join(
        shown for _, _, shown in hits
    )
