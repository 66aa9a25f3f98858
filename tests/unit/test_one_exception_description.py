"""One owner of "what went wrong" lines: ``redaction.describe_exception`` (redacted, one line).

A module that composes the line itself (the type, a colon and the raw message, or the first line
of ``str(exc)``) shows a secret in a URL or a multi-line message that the shared one masks.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_lookup_knowledge"
OWNER = PACKAGE / "redaction.py"
COMPOSED = [
    re.compile(r"\{type\((?:exc|e|err|error)\)\.__name__\}: \{"),  # f"{type(exc).__name__}: {exc}"
    re.compile(r"str\(\w+\)\.strip\(\)\.splitlines\(\)"),  # the first line of str(exc)
]


def test_no_module_composes_its_own_exception_description():
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != OWNER
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(pattern.search(line) for pattern in COMPOSED)
    ]
    assert found == [], "use redaction.describe_exception:\n" + "\n".join(found)
