"""The README's and docs/'s commands and Python snippets run as written, on the shipped sample.

Every line of their bash blocks is checked: a ``lookup-knowledge`` line is parsed by the real
parser, a ``python`` line names a module or a script that exists (``python -c`` code compiles),
``bash`` names a script that exists. Those that need ``../shared/data``, a production server, a
shell variable or the environment their block exports are only checked (the reason is given);
every other one runs, in order (the README first, then each page of docs/), in a folder where
``./runbooks`` and ``./docs`` are the sample knowledge base and ``questions.txt`` /
``questions.jsonl`` its questions. Then each Python block runs as written, in a namespace of its
own (as pasted), on the collection those commands wrote. Every link between the pages names a
page and a heading that exist.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from langchain_lookup_knowledge.cli import build_parser, main
from langchain_lookup_knowledge.evaluation.queries import METRICS
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store.connection import close_all_clients
from tests.conftest import REPO, SAMPLE_KB

README = REPO / "README.md"
CONFIGURATION = REPO / "docs" / "configuration.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md")), REPO / "CHANGELOG.md"]
SAMPLE_QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"
LANGUAGES = {"bash", "python", "mermaid", "json", "text"}
ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")


def fenced_blocks(page: Path) -> list[tuple[str, str]]:
    text = page.read_text(encoding="utf-8")
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def code_blocks(language: str, page: Path = README) -> list[str]:
    return [body for lang, body in fenced_blocks(page) if lang == language]


@dataclass
class Command:
    """One line of a bash block: what runs, in which environment, and where it was written."""

    page: str
    kind: str  # "cli" (lookup-knowledge), "python", "bash"
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    exported: bool = False  # the block exported variables before this line
    stdout_to: str | None = None  # `> FILE`: where the shell writes its output

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    def __str__(self) -> str:
        return f"{self.page}: {self.kind} {self.text}"[:90]


def page_commands(page: Path) -> list[Command]:
    """Each command of the page's bash blocks (comments, shell redirections and pipes dropped)."""
    commands = []
    name = page.relative_to(REPO).as_posix()
    for block in code_blocks("bash", page):
        exported = False
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            stdout_to = words[words.index(">") + 1] if ">" in words else None
            for shell in (">", "|", "&&"):  # the shell's part of the line, not the command's
                words = words[: words.index(shell)] if shell in words else words
            env = {}
            while words and ASSIGNMENT.fullmatch(words[0]):
                key, _, value = words.pop(0).partition("=")
                env[key] = value
            if not words:
                continue  # a variable for the lines below (D=../shared/data)
            if words[0] in ("export", "unset"):
                exported = True
                continue
            if words[0] == "pip" or words[:2] == ["source", ".venv/bin/activate"]:
                continue  # the package's own installation, not a command of it
            kinds = {"lookup-knowledge": "cli", "python": "python", "bash": "bash"}
            assert words[0] in kinds, f"{name}: the docs test cannot check {line.strip()!r}"
            argv = words[1:] if words[0] == "lookup-knowledge" else words
            commands.append(Command(name, kinds[words[0]], argv, env, exported, stdout_to))
    return commands


def all_commands() -> list[Command]:
    return [command for page in PAGES for command in page_commands(page)]


def why_not_run(command: Command) -> str | None:
    text = command.text + " " + " ".join(command.env.values())
    if command.kind == "bash":
        return "a set-up script (checked: it exists)"
    if command.kind == "python" and command.argv[1].startswith(("evals/", "benchmarks/")):
        return "a measurement script on ../shared/data (checked: it exists)"
    if "../shared" in text or "$D" in text:
        return "needs ../shared/data (the public data sets; parsed only)"
    if "/tmp/fig/" in text:
        return "a step of reproducing a figure on ../shared/data (parsed only)"
    if "/srv/" in text or re.search(r"postgresql|https?://", text):
        return "a production server (parsed only)"
    if "$" in text:
        return "needs a shell variable set by an earlier command (parsed only)"
    if command.kind == "cli" and command.argv[:1] == ["serve"]:
        return "runs until stopped (parsed only; tests/integration/test_serve.py runs it)"
    if command.kind == "cli" and command.argv[:1] == ["bench"] and "--scale" in command.argv:
        return (
            "grows a collection to 100,000+ chunks (parsed only; test_scale_bench.py runs it small)"
        )
    if command.exported:
        return "needs the environment its block exports (parsed only)"
    return None


def check(command: Command) -> None:
    """Parse ``command`` without running it: the parser, the module or the script it names."""
    if command.kind == "cli":
        args = build_parser().parse_args(command.argv)
        assert callable(args.func)
    elif command.kind == "bash":
        assert (REPO / command.argv[1]).is_file(), command.argv[1]
    elif command.argv[1] == "-m":
        assert importlib.util.find_spec(command.argv[2]) is not None, command.argv[2]
    elif command.argv[1] == "-c":
        compile(command.argv[2], command.page, "exec")
    else:
        assert (REPO / command.argv[1]).is_file(), command.argv[1]


def test_the_readme_shows_the_commands_it_promises():
    commands = [c for c in page_commands(README) if c.kind == "cli"]
    assert len(commands) >= 10
    shown = {" ".join(c.argv[:2]) for c in commands}
    for expected in (
        "ingest ./runbooks",
        "query --json",
        "eval queries",
        "bench --json",
        "report --since",
    ):
        assert any(s.startswith(expected) for s in shown), expected
    assert {"bash scripts/demo.sh", "bash scripts/test.sh"} <= {
        c.text for c in page_commands(README)
    }


def test_every_block_has_a_language_the_tests_know():
    for page in PAGES:
        for language, _ in fenced_blocks(page):
            assert language in LANGUAGES, f"{page.name}: a ```{language} block nobody checks"


@pytest.mark.parametrize("command", all_commands(), ids=str)
def test_every_command_parses(command):
    check(command)


@pytest.fixture
def readme_folder(tmp_path, monkeypatch):
    """A working folder with what the pages' commands name, and a fresh data folder."""
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


def run(command: Command, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``command`` as written (its leading VAR=value assignments as its environment)."""
    with monkeypatch.context() as scoped:
        for key, value in command.env.items():
            scoped.setenv(key, value)
        if command.kind == "python":
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            done = subprocess.run(
                [sys.executable, *command.argv[1:]],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, (str(command), done.stderr[-2000:])
            if command.stdout_to:
                Path(command.stdout_to).write_text(done.stdout, encoding="utf-8")
            return
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(command.argv)
        assert code == 0, (str(command), err.getvalue()[-2000:])
        if command.stdout_to:
            Path(command.stdout_to).write_text(out.getvalue(), encoding="utf-8")
        if "--json" in command.argv:
            json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the pages' ingests and evaluations of the sample, on a shared machine
def test_commands_and_python_snippets_run_as_written(readme_folder, monkeypatch):
    skipped = []
    for command in all_commands():
        reason = why_not_run(command)
        if reason:
            skipped.append((str(command), reason))
            continue
        run(command, monkeypatch)
        close_all_clients()  # a subprocess of the next line may open the same Milvus Lite file
    assert skipped, "the reproduce commands on ../shared are expected (and only parsed)"
    assert LookupSettings().collection == "knowledge"  # what `ingest ./runbooks` wrote to

    namespaces: dict[str, dict[str, object]] = {}
    for page in PAGES:
        names: dict[str, object] = {}
        for block in code_blocks("python", page):
            namespace: dict[str, object] = {}  # each block as pasted: its own imports, nothing else
            exec(compile(block, str(page), "exec", dont_inherit=True), namespace)
            names.update(namespace)
        namespaces[page.name] = names
    readme = namespaces["README.md"]
    msg = readme["msg"]
    assert msg.artifact["found"] is True  # type: ignore[attr-defined]
    assert "[1]" in msg.content  # type: ignore[attr-defined]
    assert readme["result"].found is True  # type: ignore[attr-defined]
    assert readme["agent"] is not None
    assert readme["out"]["result"]["found"] is True  # type: ignore[index]
    assert readme["out"]["error"] is None  # type: ignore[index]
    assert readme["docs"], "the retriever snippet returns documents"
    assert namespaces["result-contract.md"]["result"].evidence_blocks  # type: ignore[attr-defined]
    assert len(namespaces["evaluation.md"]["sizes"]) == 12  # type: ignore[arg-type]
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


def test_the_agent_snippet_is_ten_lines():
    assert len(code_blocks("python")[0].strip().splitlines()) <= 10


def test_the_readme_names_ten_settings_and_links_the_rest():
    """The README's table holds the ten settings people change; docs/configuration.md every one."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Settings people change", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", section, flags=re.M)
    assert len(rows) == 10, rows
    assert set(rows) <= set(LookupSettings.model_fields), set(rows) - set(
        LookupSettings.model_fields
    )
    assert "(docs/configuration.md)" in section
    reference = CONFIGURATION.read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `([a-z0-9_]+)` \|", reference, flags=re.M))
    missing = sorted(set(LookupSettings.model_fields) - named)
    assert not missing, f"settings missing from docs/configuration.md: {missing}"


def test_the_documented_metrics_are_the_metrics():
    text = README.read_text(encoding="utf-8")
    listed = re.search(r"Metrics: ((?:`[a-z]+@\d+`(?:, )?)+)", text)
    assert listed, "the README lists the metrics --fail-under takes"
    assert re.findall(r"`([a-z]+@\d+)`", listed.group(1)) == list(METRICS)


def test_the_test_command_runs_the_part_the_readme_says():
    """``bash scripts/test.sh -x tests/integration/test_readme.py`` (the README's example) hands its
    arguments to pytest, and the file it names exists."""
    text = README.read_text(encoding="utf-8")
    examples = re.findall(r"`bash scripts/test\.sh ([^`]+)`", text)
    assert examples, "the README shows how to run a part of the tests"
    assert (REPO / "scripts" / "test.sh").read_text().rstrip().endswith('-m pytest "$@"')
    for example in examples:
        for arg in shlex.split(example):
            assert arg.startswith("-") or (REPO / arg).exists(), arg


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # a `# comment` is no heading
    heads = re.findall(r"^#+ (.*)$", prose, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_names_a_page_and_a_heading_that_exist(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    for target, anchor in re.findall(r"\]\(([^)\s#:]*)(?:#([^)\s]+))?\)", text):
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor:
            assert anchor in _anchors(path.read_text(encoding="utf-8")), (
                f"{page.name} links to {target}#{anchor}: no such heading"
            )


def test_the_readme_links_every_docs_page():
    text = README.read_text(encoding="utf-8")
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in text, f"the README does not link docs/{page.name}"
    assert len(text.splitlines()) <= 300, "the README stays a short user's document"
