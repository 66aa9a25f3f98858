"""The README's commands and Python snippets run as written, on the shipped sample knowledge base.

Every ``lookup-knowledge`` line of the README's bash blocks is parsed by the real parser; those
that need ``../shared/data``, a production server or a shell variable are only parsed (the
reason is given), every other one runs, in order, in a folder where ``./runbooks`` and ``./docs``
are the sample knowledge base and ``questions.txt`` / ``questions.jsonl`` its questions. Then each
Python block runs as written, on the collection those commands wrote.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from langchain_lookup_knowledge.cli import build_parser, main
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.conftest import REPO, SAMPLE_KB

README = REPO / "README.md"
SAMPLE_QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"


def code_blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def readme_commands() -> list[list[str]]:
    """Each ``lookup-knowledge ...`` command of the bash blocks, as argv (comments dropped)."""
    commands = []
    for block in code_blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("lookup-knowledge "):
                argv = shlex.split(line, comments=True)[1:]
                for shell in (">", "|", "&&"):  # the shell's part of the line, not the command's
                    argv = argv[: argv.index(shell)] if shell in argv else argv
                commands.append(argv)
    return commands


def why_not_run(argv: list[str]) -> str | None:
    text = " ".join(argv)
    if "../shared" in text:
        return "needs ../shared/data (the public data sets; parsed only)"
    if "/tmp/fig/" in text:
        return "a step of reproducing a figure on ../shared/data (parsed only)"
    if "/srv/" in text:
        return "a production server's folder (parsed only)"
    if "$" in text:
        return "needs a shell variable set by an earlier command (parsed only)"
    if argv[:1] == ["serve"]:
        return "runs until stopped (parsed only; tests/test_serve.py runs it)"
    return None


def test_the_readme_shows_the_commands_it_promises():
    commands = readme_commands()
    assert len(commands) >= 10
    shown = {" ".join(argv[:2]) for argv in commands}
    for expected in ("ingest ./runbooks", "query --json", "eval queries", "bench --json"):
        assert any(s.startswith(expected) for s in shown), expected


@pytest.mark.parametrize("argv", readme_commands(), ids=lambda a: " ".join(a)[:60])
def test_every_readme_command_parses(argv):
    args = build_parser().parse_args(argv)
    assert callable(args.func)


@pytest.fixture
def readme_folder(tmp_path, monkeypatch):
    """A working folder with what the README's commands name, and a fresh data folder."""
    shutil.copytree(SAMPLE_KB, tmp_path / "runbooks")
    # ./docs, a second folder with a categories file: two of the sample's files are enough.
    sources = sorted(p.relative_to(SAMPLE_KB).as_posix() for p in SAMPLE_KB.rglob("*.md"))[:2]
    for source in sources:
        (tmp_path / "docs" / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE_KB / source, tmp_path / "docs" / source)
    (tmp_path / "toc.tsv").write_text(
        "path\tsection\n" + "".join(f"{s}\t{s.split('/')[0].title()}\n" for s in sources),
        encoding="utf-8",
    )
    rows = [json.loads(line) for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines()]
    (tmp_path / "questions.txt").write_text("".join(r["q"] + "\n" for r in rows), encoding="utf-8")
    shutil.copy(SAMPLE_QUESTIONS, tmp_path / "questions.jsonl")
    (tmp_path / "langchain_lookup_knowledge").symlink_to(SAMPLE_KB.parent)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used-offline")  # create_agent builds, never calls
    yield tmp_path
    close_all_clients()


@pytest.mark.slow
@pytest.mark.timeout(1200)  # five ingests of the sample (two inside bench) on a shared machine
def test_readme_commands_and_python_snippets_run_as_written(readme_folder):
    skipped = []
    for argv in readme_commands():
        reason = why_not_run(argv)
        if reason:
            skipped.append((" ".join(argv), reason))
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        assert code == 0, (argv, err.getvalue()[-2000:])
        if "--json" in argv:
            json.loads(out.getvalue().strip().splitlines()[-1])
    assert skipped, "the reproduce commands on ../shared are expected (and only parsed)"
    assert LookupSettings().collection == "knowledge"  # what `ingest ./runbooks` wrote to

    namespace: dict[str, object] = {}
    for block in code_blocks("python"):
        exec(compile(block, str(README), "exec", dont_inherit=True), namespace)
    msg = namespace["msg"]
    assert msg.artifact["found"] is True  # type: ignore[attr-defined]
    assert "[1]" in msg.content  # type: ignore[attr-defined]
    assert namespace["agent"] is not None
    assert namespace["out"]["result"]["found"] is True  # type: ignore[index]
    assert namespace["out"]["error"] is None  # type: ignore[index]
    close_all_clients()
    assert Path(readme_folder / "data" / "milvus.db").exists()


def test_the_demo_set_up_installs_what_the_agent_snippet_imports():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert any(req.startswith("langchain>=") for req in extras["agents"])
    assert "from langchain.agents import create_agent" in code_blocks("python")[0]
    assert "pip install -q -e '.[agents]'" in (REPO / "scripts" / "demo.sh").read_text()


def test_every_setting_is_in_the_configuration_table():
    text = README.read_text(encoding="utf-8")
    table = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z0-9_]+)`", "\n".join(table.splitlines()[:200])))
    missing = sorted(set(LookupSettings.model_fields) - named)
    assert not missing, f"settings missing from the README's table: {missing}"


def test_the_test_command_runs_the_part_the_readme_says():
    """``bash scripts/test.sh -x tests/integration/test_readme.py`` (the README's example) hands its
    arguments to pytest, and the file it names exists."""
    text = README.read_text(encoding="utf-8")
    example = re.search(r"`bash scripts/test\.sh ([^`]+)`", text)
    assert example, "the README shows how to run a part of the tests"
    assert (REPO / "scripts" / "test.sh").read_text().rstrip().endswith('-m pytest "$@"')
    for arg in shlex.split(example.group(1)):
        assert arg.startswith("-") or (REPO / arg).exists(), arg
