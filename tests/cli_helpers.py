"""Run the ``lookup-knowledge`` CLI in the test's own process and read what it printed."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from langchain_lookup_knowledge.cli import main


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """Run the CLI with ``argv``; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def run_cli_json(argv: list[str]) -> tuple[dict[str, Any], str]:
    """Run the CLI with ``argv --json --no-progress``, which must exit 0; return the report
    (the last stdout line) and the whole stdout."""
    code, out, err = run_cli([*argv, "--json", "--no-progress"])
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1]), out
